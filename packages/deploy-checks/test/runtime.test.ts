/**
 * The pinned runtime (`.nvmrc`) is what everything runs on and what everything admits: the suite
 * and the services it spawns run on it, oidc-provider does not call it unsupported, every
 * installed package's `engines.node` admits it (an upgrade that drops it fails here, not in an
 * operator's `pnpm install`), and the bootstrap that `npm start` and `npm run test:all` use
 * (scripts/pinned-node.mjs) gives it with the pinned pnpm.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startPlatform, type Platform } from '@plant/test-kit';
import semver from 'semver';
import { PINNED_NODE } from '../src/dockerfile-checks.js';
import { repoRoot } from '../src/repo-paths.js';

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
  devDependencies?: Record<string, string>;
  packageManager?: string;
}
const manifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest;
const root = manifest(join(repoRoot, 'package.json'));

/** Every package pnpm installed (each `.pnpm/<name>@<version>…/node_modules/<name>`), once each. */
function installedPackages(): Array<Manifest & { path: string }> {
  const store = join(repoRoot, 'node_modules/.pnpm');
  const found = new Map<string, Manifest & { path: string }>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    // The entry's own package: `@scope+name@1.2.3(peer…)` holds `node_modules/@scope/name`.
    const at = entry.indexOf('@', 1);
    const name = entry.slice(0, at).replace('+', '/');
    const path = join(modules, name, 'package.json');
    if (!existsSync(path)) continue;
    const pkg = manifest(path);
    found.set(`${pkg.name}@${pkg.version}`, { ...pkg, path });
  }
  return [...found.values()];
}

describe('the pinned runtime (.nvmrc)', () => {
  test('When the suite runs, then it runs on the pinned Node, which is an LTS release', () => {
    expect(PINNED_NODE).toMatch(/^\d+\.\d+\.\d+$/);
    expect(process.version).toBe(`v${PINNED_NODE}`);
    expect(process.release.lts).toEqual(expect.any(String));
  });

  test('When the workspace declares its runtime, then engines admits the pinned Node and @types/node is its major', () => {
    expect(semver.satisfies(PINNED_NODE, root.engines?.node ?? '')).toBe(true);
    // Not a range that admits the end-of-life line.
    expect(semver.satisfies('20.20.2', root.engines?.node ?? '')).toBe(false);
    expect(semver.minVersion(root.devDependencies?.['@types/node'] ?? '')?.major).toBe(
      semver.major(PINNED_NODE),
    );
    expect(readFileSync(join(repoRoot, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });

  test("When every installed package's engines is read, then each admits the pinned Node", () => {
    const packages = installedPackages();
    // The whole tree, not a handful (about 700 packages today).
    expect(packages.length).toBeGreaterThan(500);
    const refusing = packages
      .filter(({ engines }) => typeof engines?.node === 'string')
      .filter(({ engines }) => !semver.satisfies(PINNED_NODE, engines!.node!))
      .map(({ name, version, engines }) => `${name}@${version} engines.node ${engines!.node}`);
    expect(refusing).toEqual([]);
  });

  test('When the engines check is given an end-of-life Node, then it names the packages that refuse it', () => {
    const refusing = installedPackages()
      .filter(({ engines }) => typeof engines?.node === 'string')
      .filter(({ engines }) => !semver.satisfies('20.20.2', engines!.node!))
      .map(({ name }) => name);
    // The OpenTelemetry 0.2xx/3.x set and kubernetes-models require Node 22 or later.
    expect(refusing).toEqual(expect.arrayContaining(['kubernetes-models']));
  });

  test('When the bootstrap is asked for the pinned Node, then its bin directory holds it and the pinned pnpm', () => {
    const bin = execFileSync(process.execPath, [join(repoRoot, 'scripts/pinned-node.mjs')], {
      encoding: 'utf8',
      timeout: 120_000,
    }).trim();
    expect(bin).toBe(join(repoRoot, '.tools/node', PINNED_NODE, 'bin'));
    expect(execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim()).toBe(
      `v${PINNED_NODE}`,
    );
    const pnpm = execFileSync(join(bin, 'pnpm'), ['--version'], {
      encoding: 'utf8',
      cwd: repoRoot,
      env: { ...process.env, COREPACK_INTEGRITY_KEYS: '0' },
      timeout: 120_000,
    }).trim();
    expect(pnpm).toBe(root.packageManager?.split('@')[1]);
  }, 240_000);
});

describe('the services the suite spawns', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await startPlatform({ plantStores: 1, accountAdmin: true });
  }, 120_000);
  afterAll(() => platform?.close());

  test('When the three services start, then each runs on the same pinned node as the suite', () => {
    for (const svc of platform.processes)
      expect({ name: svc.name, exe: readlinkSync(`/proc/${svc.pid}/exe`) }).toEqual({
        name: svc.name,
        exe: readlinkSync('/proc/self/exe'),
      });
  });

  test('When the token service starts, then oidc-provider prints no "Unsupported runtime" warning', async () => {
    const lines = await platform.tokenService.flushedLogs();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => /unsupported runtime|oidc-provider WARNING/i.test(line))).toEqual(
      [],
    );
  });
});
