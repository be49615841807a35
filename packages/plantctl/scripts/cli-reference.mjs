// Writes docs/cli-reference.md from the built CLI's own --help (run `pnpm build` first).
import { writeFileSync } from 'node:fs';
import { renderCliReference } from '../dist/cli-reference.js';

writeFileSync(new URL('../docs/cli-reference.md', import.meta.url), renderCliReference());
