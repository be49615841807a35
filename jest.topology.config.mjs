// `pnpm test:topology`: the deployment users run, on this machine (packages/topology): replicas
// behind Debian's nginx, Redis with Sentinel, Postgres through PgBouncer, each test file
// starting and stopping its own processes. One file at a time: each loads the whole platform
// and measures what a fault does to it, which a second file's load on the two cores would blur.
import { globalSetup, project, TOPOLOGY_DIR } from './jest.config.mjs';

export default {
  projects: [project(TOPOLOGY_DIR)],
  globalSetup,
  maxWorkers: 1,
  // Whole platforms started per file and faults waited out: generous, never a timing assertion.
  testTimeout: 120_000,
};
