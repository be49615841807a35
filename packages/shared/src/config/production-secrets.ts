/**
 * What a secret must be in production (NODE_ENV=production): its own, not one of the
 * development values this repository ships (they are public), and hard to guess. Services
 * refuse to start otherwise, with one line naming the variable (`loadConfig`).
 */
import type { z } from 'zod';

/** Strength of a production secret: what 32 random bytes give (`openssl rand -base64 32`, `-hex 32`). */
export const PRODUCTION_SECRET_BITS = 256;

/**
 * Every secret value the repository ships for development (pnpm start, docker compose, the dev
 * overlay). packages/deploy-checks reads those files and fails when one of them is missing here.
 */
export const DEVELOPMENT_SECRET_VALUES: ReadonlySet<string> = new Set([
  'dev-internal-token-not-for-production',
  'dev-plant-store-internal-token-not-for-production',
  'dev-account-admin-internal-token-not-for-production',
  'dev-pepper-not-for-production-0123456789',
  'ZGV2LWtleS1lbmNyeXB0aW9uLWtleS0zMi1ieXRlcyE=',
  'dev-session-secret-not-for-production',
  'dev-cookie-key-not-for-production-0001',
  'dev-only-internal-api-token-not-a-secret',
  'dev-only-plant-store-internal-token-not-a-secret',
  'dev-only-account-admin-internal-token-not-a-secret',
  'dev-only-secret-pepper-not-a-secret-0123456789',
  'ZGV2LW9ubHkta2V5LWVuY3J5cHRpb24ta2V5LTMyYiE=',
  'dev-only-cookie-key-not-a-secret-0001',
  'dev-only-session-secret-not-a-secret',
  // Passwords inside the database and Redis URLs of compose and the dev overlay.
  'dev-only-postgres-password',
  'dev-only-plant-store-db-password',
  'dev-only-token-service-db-password',
  'dev-only-account-admin-db-password',
  'dev-only-redis-password',
  // The sentinels' password of the dev overlay's Secret (a placeholder: dev has no sentinels).
  'dev-only-redis-sentinel-password',
]);

/** The alphabets secrets are written in, smallest first: a value is credited with the smallest that holds it. */
const ALPHABETS: Array<[RegExp, number]> = [
  [/^[0-9]+$/, 10],
  [/^[0-9a-f]+$/i, 16],
  [/^[0-9a-z]+$/, 36],
  [/^[0-9A-Za-z]+$/, 62],
  [/^[0-9A-Za-z+/_-]+={0,2}$/, 64],
];

/**
 * The most entropy a value can carry if every character were drawn at random from its alphabet.
 * An upper bound (a word repeated scores like noise), so it can only refuse, never vouch.
 */
export function maxEntropyBits(value: string): number {
  const text = value.replace(/=+$/, '');
  const size = ALPHABETS.find(([shape]) => shape.test(value))?.[1] ?? 95;
  return text.length * Math.log2(size);
}

/**
 * Why `value` may not be a production secret, or undefined when it may. `shippedOnly` checks
 * only for the repository's development values (a password inside a connection URL: its
 * strength is the database's or Redis's policy, not ours).
 */
export function productionSecretProblem(
  value: string,
  { shippedOnly = false }: { shippedOnly?: boolean } = {},
): string | undefined {
  if (DEVELOPMENT_SECRET_VALUES.has(value))
    return 'is a development value from this repository; production needs a secret of its own';
  if (shippedOnly) return undefined;
  if (maxEntropyBits(value) < PRODUCTION_SECRET_BITS)
    return `is too weak for production: give at least ${PRODUCTION_SECRET_BITS / 8} random bytes (e.g. openssl rand -base64 32)`;
  return undefined;
}

/** Marks a config key as a secret (a comma-separated list of secrets with `list`), checked in production. */
export function secretKey<T extends z.ZodType>(
  schema: T,
  { list = false }: { list?: boolean } = {},
): T {
  return schema.meta({ secret: list ? 'list' : 'single' }) as T;
}

/** Marks a connection URL whose password, if any, production checks against the shipped development values. */
export function credentialUrlKey<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secret: 'url' }) as T;
}

/**
 * Marks a password key (a server's own, such as the Redis sentinels'): its strength is that
 * server's policy, so production refuses only the development values this repository ships.
 */
export function passwordKey<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secret: 'password' }) as T;
}

/** The values of a secret key to check (each item of a list, a URL's password), and whether only shipped values are refused. */
export function secretValuesOf(
  schema: z.ZodType,
  value: unknown,
): { values: string[]; shippedOnly: boolean } | undefined {
  const kind = (schema.meta() as { secret?: string } | undefined)?.secret;
  if (kind === undefined || typeof value !== 'string') return undefined;
  if (kind === 'url') {
    const password = URL.parse(value)?.password ?? '';
    return { values: password === '' ? [] : [decodeURIComponent(password)], shippedOnly: true };
  }
  if (kind === 'password') return { values: [value], shippedOnly: true };
  return {
    values:
      kind === 'list'
        ? value
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean)
        : [value],
    shippedOnly: false,
  };
}

/** The names of a config shape's secret keys that must be strong (deployment checks, docs); passwords (`passwordKey`) are not among them. */
export function secretKeysOf(shape: Record<string, z.ZodType>): string[] {
  const kinds = new Set(['single', 'list']);
  return Object.entries(shape)
    .filter(([, schema]) =>
      kinds.has((schema.meta() as { secret?: string } | undefined)?.secret ?? ''),
    )
    .map(([key]) => key);
}
