/**
 * `pnpm licenses:inventory`: writes THIRD_PARTY_LICENSES.md at the repository root, or refuses
 * (exit 1, naming each package) when a shipped license is outside the allow-list.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectInventory, licenseProblems, renderInventory } from './license-inventory.js';
import { repoRoot } from './repo-paths.js';

const entries = collectInventory(repoRoot);
const problems = licenseProblems(entries);
if (problems.length > 0) {
  console.error(`licenses outside the allow-list:\n  ${problems.join('\n  ')}`);
  process.exitCode = 1;
} else {
  writeFileSync(join(repoRoot, 'THIRD_PARTY_LICENSES.md'), renderInventory(entries));
  console.log(`THIRD_PARTY_LICENSES.md: ${entries.length} package versions`);
}
