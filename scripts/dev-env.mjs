// Development-only values for the secrets the services require (their configuration has no
// defaults for secrets). Used by `pnpm start` and `pnpm cli`; anything set in the
// environment wins. Never use these values anywhere but a laptop.
export const DEV_ENV = {
  // Production (NODE_ENV=production) refuses every value below.
  NODE_ENV: 'development',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/plantstore',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SECRET_PEPPER: 'dev-pepper-not-for-production-0123456789',
  KEY_ENCRYPTION_KEY: 'ZGV2LWtleS1lbmNyeXB0aW9uLWtleS0zMi1ieXRlcyE=',
  SESSION_SECRET: 'dev-session-secret-not-for-production',
  COOKIE_KEYS: 'dev-cookie-key-not-for-production-0001',
};

/**
 * The internal API's credentials, one per caller: the token service knows each, the Plant Store
 * and account-admin hold only their own (as INTERNAL_API_TOKEN).
 */
export const DEV_INTERNAL_TOKENS = {
  'plant-store': 'dev-plant-store-internal-token-not-for-production',
  'account-admin': 'dev-account-admin-internal-token-not-for-production',
};

/** @param {string} [service] the service the environment is for (`token-service`, `plant-store`, `account-admin`); absent: none of the internal tokens. */
export function devEnv(env = process.env, service) {
  /** @type {Record<string, string>} */
  const internal =
    service === 'token-service'
      ? {
          RESOURCE_SERVER_TOKENS: DEV_INTERNAL_TOKENS['plant-store'],
          ACCOUNT_ADMIN_TOKEN: DEV_INTERNAL_TOKENS['account-admin'],
        }
      : service === 'plant-store' || service === 'account-admin'
        ? { INTERNAL_API_TOKEN: DEV_INTERNAL_TOKENS[service] }
        : {};
  return { ...DEV_ENV, ...internal, ...env };
}
