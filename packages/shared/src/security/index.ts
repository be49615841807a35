/** Shared defences: constant-time equality, per-source budgets, the verification-key rule. */
export * from './address-key.js';
export * from './constant-time.js';
export * from './source-budget.js';
export * from '@plant/resource-auth/platform/verification-key-rules';
