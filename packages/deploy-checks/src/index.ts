export * from './repo-paths.js';
export * from './config-requirements.js';
export * from './compose-checks.js';
export * from './dockerfile-checks.js';
export * from './k8s-checks.js';
export * from './license-inventory.js';
