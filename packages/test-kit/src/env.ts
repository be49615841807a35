/** Where tests find Postgres; the default matches the local service of a dev machine and CI. */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/plantstore_test';
/**
 * The test file's own Redis: under jest, a redis-server the test environment started for this
 * file alone (own-redis-environment.mjs), so no other file hears its channels or shares its keys.
 * The fallback is for a script run outside jest.
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The repository root (this file is packages/test-kit/src/env.ts or dist/env.js). */
export const REPO_ROOT = new URL('../../../', import.meta.url).pathname.replace(/\/$/, '');

let counter = 0;
/** A name no other test, file or run uses: tests create their own rows and never truncate. */
export function uniqueName(prefix = 't'): string {
  counter += 1;
  return `${prefix}-${process.pid.toString(36)}${Date.now().toString(36)}${counter.toString(36)}`.toLowerCase();
}
