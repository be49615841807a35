// One jest run for the whole workspace: a project per package or service that has tests.
// TypeScript is transformed by swc to ESM (oidc-provider is ESM-only), so jest runs with
// --experimental-vm-modules (see the root `test` script).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = import.meta.dirname;

const transform = {
  '^.+\\.(t|j)s$': [
    '@swc/jest',
    {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
      sourceMaps: 'inline',
    },
  ],
};

const moduleNameMapper = {
  // Workspace packages resolve to their sources, so tests never run stale builds.
  '^@plant/([a-z0-9-]+)$': `${root}/packages/$1/src/index.ts`,
  // What the services share with resource servers: @plant/resource-auth/platform/<module>.
  '^@plant/resource-auth/platform/([a-z0-9-]+)$': `${root}/packages/resource-auth/src/platform/$1.ts`,
  // @plant/shared has no root: each subpath (its package.json "exports") is a folder's index.
  '^@plant/shared/([a-z0-9-]+)$': `${root}/packages/shared/src/$1/index.ts`,
  // NodeNext imports end in .js; the files on disk are .ts.
  '^(\\.{1,2}/.*)\\.js$': '$1',
};

/** A jest project for a package or service directory: its test files, test/…/*.test.ts. */
export function project(dir) {
  const name = dir.split('/').slice(-1)[0];
  return {
    displayName: name,
    rootDir: join(root, dir),
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    // Node's, with a redis-server of the file's own as TEST_REDIS_URL: no file hears another's channels or counts its keys.
    testEnvironment: join(root, 'packages/test-kit/own-redis-environment.mjs'),
    extensionsToTreatAsEsm: ['.ts'],
    transform,
    moduleNameMapper,
  };
}

/**
 * The topologies (replicas behind nginx, Sentinel, PgBouncer) are a suite of their own,
 * `pnpm test:topology` (jest.topology.config.mjs), run after this one by scripts/test-all.sh.
 */
export const TOPOLOGY_DIR = 'packages/topology';

const dirs = ['packages', 'services'].flatMap((group) =>
  existsSync(join(root, group))
    ? readdirSync(join(root, group))
        .map((d) => `${group}/${d}`)
        .filter((d) => d !== TOPOLOGY_DIR && existsSync(join(root, d, 'test')))
    : [],
);

/** Creates the test database and applies every service's migrations once per run. */
export const globalSetup = join(root, 'packages/test-kit/global-setup.mjs');

export default {
  projects: dirs.map(project),
  globalSetup,
  // Two cores: more workers only add contention with the services the tests start.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  // Real services on a shared 2-core machine: generous, never a timing assertion. A test that
  // waits on an event waits for it; this only ends one that hangs (30 s ended healthy tests on
  // a saturated host).
  testTimeout: 120_000,
};
