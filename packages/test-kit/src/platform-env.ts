/**
 * The environment each service of a test platform gets: what docs/architecture.md lists for
 * it, pointed at the platform's database, Redis and the token service's addresses, with
 * clearly fake secrets.
 */
import type { ServiceName } from './service-process.js';

/** Fixed, clearly fake secrets (a secrets-at-rest scan looks for each of them). */
export const TEST_SECRETS = {
  /** The Plant Store's internal API token (each store of a platform shares it: one resource server). */
  PLANT_STORE_INTERNAL_TOKEN: 'test-plant-store-internal-token-hostile-5d2f8e61',
  /** account-admin's internal API token: the only one that manages service accounts. */
  ACCOUNT_ADMIN_INTERNAL_TOKEN: 'test-account-admin-internal-token-hostile-9a4c07b3',
  SECRET_PEPPER: 'test-pepper-hostile-0123456789-abcdefghij',
  KEY_ENCRYPTION_KEY: Buffer.alloc(32, 11).toString('base64'),
  COOKIE_KEYS: 'test-cookie-key-hostile-0123456789',
  SESSION_SECRET: 'test-session-secret-hostile-0123456789',
} as const;

export type PlatformSecrets = { [K in keyof typeof TEST_SECRETS]: string };

export const PLANT_STORE_AUDIENCE = 'http://plant-store.test';
export const ACCOUNT_ADMIN_AUDIENCE = 'http://account-admin.test';
/** The password of every user a platform creates (the tenants' admins included). */
export const USER_PASSWORD = 'correct horse battery staple';

export interface PlatformSettings {
  databaseUrl: string;
  redisUrl: string;
  /** AUTH_URL: the token service's public base URL, in every issuer. */
  authUrl: string;
  /** Where the token service listens (public and internal API) and account-admin's port. */
  tokenServicePort: number;
  internalPort: number;
  portalPort: number;
  secrets: PlatformSecrets;
  /** REVOCATION_RESYNC_MS of the resource servers. */
  resyncMs: number;
}

/** The environment of each service, before the caller's overrides. */
export function servicesEnv(s: PlatformSettings): Record<ServiceName, Record<string, string>> {
  const portalUrl = `http://127.0.0.1:${s.portalPort}`;
  const internalUrl = `http://127.0.0.1:${s.internalPort}`;
  const common = {
    HOST: '127.0.0.1',
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: s.redisUrl,
    AUTH_URL: s.authUrl,
  };
  const resourceServer = {
    TOKEN_SERVICE_INTERNAL_URL: internalUrl,
    REVOCATION_RESYNC_MS: String(s.resyncMs),
  };
  // Every test request comes from 127.0.0.1 and a platform on the shared test Redis keeps its
  // counter run after run: the budget of sign-ins started per address is out of the way (the
  // tests of that budget, and the bench, set it themselves).
  const signInStarts = { SIGN_IN_STARTS_PER_IP: '1000000' };
  return {
    'token-service': {
      ...common,
      PORT: String(s.tokenServicePort),
      INTERNAL_PORT: String(s.internalPort),
      RESOURCE_SERVER_TOKENS: s.secrets.PLANT_STORE_INTERNAL_TOKEN,
      ACCOUNT_ADMIN_TOKEN: s.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN,
      SECRET_PEPPER: s.secrets.SECRET_PEPPER,
      KEY_ENCRYPTION_KEY: s.secrets.KEY_ENCRYPTION_KEY,
      COOKIE_KEYS: s.secrets.COOKIE_KEYS,
      PLANT_STORE_AUDIENCE,
      ACCOUNT_ADMIN_AUDIENCE,
      PORTAL_URL: portalUrl,
      ...signInStarts,
    },
    'plant-store': {
      ...common,
      ...resourceServer,
      INTERNAL_API_TOKEN: s.secrets.PLANT_STORE_INTERNAL_TOKEN,
      PLANT_STORE_AUDIENCE,
      PUBLIC_URL: PLANT_STORE_AUDIENCE,
    },
    'account-admin': {
      ...common,
      ...resourceServer,
      INTERNAL_API_TOKEN: s.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN,
      PORT: String(s.portalPort),
      PORTAL_URL: portalUrl,
      ACCOUNT_ADMIN_AUDIENCE,
      SESSION_SECRET: s.secrets.SESSION_SECRET,
      ...signInStarts,
    },
  };
}

/** The operator CLI's environment (it does not announce key rotations: nothing here listens for them). */
export function cliEnv(s: PlatformSettings): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: s.redisUrl,
    AUTH_URL: s.authUrl,
    KEY_ENCRYPTION_KEY: s.secrets.KEY_ENCRYPTION_KEY,
    // `service-accounts reset-secrets` digests the new secrets with it.
    SECRET_PEPPER: s.secrets.SECRET_PEPPER,
    PORTAL_URL: `http://127.0.0.1:${s.portalPort}`,
    CLI_PUBLISH_EVENTS: 'false',
  };
}
