/** The topologies of `pnpm test:topology`: the ingress in front of replicas, and what the tests drive through it. */
export * from './ingress.js';
export * from './topology-platform.js';
export * from './mixed-load.js';
export * from './fault-report.js';
export * from './ingress-config.js';
export * from './pooled-database.js';
export * from './seed-flow.js';
export * from './database-checks.js';
export * from './previous-release.js';
export * from './rolling.js';
