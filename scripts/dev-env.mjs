// Development-only values for the secrets the services require (their configuration has no
// defaults for secrets). Used by `pnpm start` and `pnpm cli`; anything set in the
// environment wins. Never use these values anywhere but a laptop.
export const DEV_ENV = {
  // Production (NODE_ENV=production) refuses every value below.
  NODE_ENV: 'development',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/plantstore',
  REDIS_URL: 'redis://127.0.0.1:6379',
  INTERNAL_API_TOKEN: 'dev-internal-token-not-for-production',
  SECRET_PEPPER: 'dev-pepper-not-for-production-0123456789',
  KEY_ENCRYPTION_KEY: 'ZGV2LWtleS1lbmNyeXB0aW9uLWtleS0zMi1ieXRlcyE=',
  SESSION_SECRET: 'dev-session-secret-not-for-production',
  COOKIE_KEYS: 'dev-cookie-key-not-for-production-0001',
};

export function devEnv(env = process.env) {
  return { ...DEV_ENV, ...env };
}
