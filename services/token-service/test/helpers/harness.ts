import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startWebServer, type WebServer } from '@plant/shared/http';
import { captureLogs, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from '@plant/test-kit';
import { loadTokenServiceConfig, type TokenServiceConfig } from '../../src/config.js';
import type { SigningAlgorithm } from '../../src/signing-keys/signing-keys.js';
import { createTenant } from '../../src/realm-creation/create-realm.js';
import { createUser } from '../../src/people/users.js';
import { createTokenService, type TokenService } from '../../src/token-service.js';

export const TEST_ENV = {
  DATABASE_URL: TEST_DATABASE_URL,
  REDIS_URL: TEST_REDIS_URL,
  // One token per resource server (read what verifying needs), and account-admin's (everything).
  RESOURCE_SERVER_TOKENS:
    'test-plant-store-internal-token-0123456789,test-other-resource-server-token-0123456789',
  ACCOUNT_ADMIN_TOKEN: 'test-account-admin-internal-token-0123456789',
  SECRET_PEPPER: 'test-pepper-0123456789-0123456789-0123456789',
  KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  COOKIE_KEYS: 'test-cookie-key-0123456789',
  PLANT_STORE_AUDIENCE: 'http://plant-store.test',
  ACCOUNT_ADMIN_AUDIENCE: 'http://account-admin.test',
  PORTAL_URL: 'http://portal.test',
  LOG_LEVEL: 'debug',
  // Tests send X-Forwarded-For so each test's failure counters are its own.
  TRUST_PROXY: '1',
  // Suites that start sign-ins from 127.0.0.1 share its counter in the test Redis, run after run:
  // the budget of sign-ins started per address is out of their way (sign-in-starts.test sets its own).
  SIGN_IN_STARTS_PER_IP: '1000000',
} as const;

export const ADMIN_PASSWORD = 'correct horse battery';

export interface Harness {
  service: TokenService;
  config: TokenServiceConfig;
  publicUrl: string;
  internalUrl: string;
  /** The management port (/healthz, /readyz, /metrics). */
  managementUrl: string;
  /** Every log line the service wrote, for secret scans. */
  logs: string[];
  /**
   * A realm signing `alg` (RS256 by default). Its admin-factor policy is off unless
   * `requireAdminFactor` (the production default is on): tests of other features sign the
   * admin in with a password alone, as the demo tenant does.
   */
  createTenant(
    alg?: SigningAlgorithm,
    options?: { requireAdminFactor?: boolean },
  ): Promise<{ tenant: string; adminId: string; adminEmail: string; kid: string }>;
  createUser(
    tenant: string,
    role: 'View' | 'Edit' | 'Account Admin',
  ): Promise<{ id: string; email: string; password: string }>;
  issuer(tenant: string): string;
  tokenUrl(tenant: string): string;
  close(): Promise<void>;
}

/** Starts the token service in-process on ephemeral ports; AUTH_URL is the real public URL (discovery checks it). */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  let publicHandler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let internalHandler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) =>
    res.end();
  const publicServer: WebServer = await startWebServer((req, res) => publicHandler(req, res), {
    port: 0,
    host: '127.0.0.1',
  });
  const internalServer: WebServer = await startWebServer((req, res) => internalHandler(req, res), {
    port: 0,
    host: '127.0.0.1',
  });
  const config = loadTokenServiceConfig({
    ...TEST_ENV,
    AUTH_URL: publicServer.url,
    PORT: '0',
    INTERNAL_PORT: '0',
    ...env,
  });
  const { logger, lines: logs } = captureLogs('token-service', config.LOG_LEVEL);
  const service = await createTokenService(config, logger);
  publicHandler = service.publicApp;
  internalHandler = service.internalApp;
  await service.startIntrospection(internalServer.url);
  const managementServer = await startWebServer(service.managementApp, {
    port: 0,
    host: '127.0.0.1',
  });

  return {
    service,
    config,
    publicUrl: publicServer.url,
    internalUrl: internalServer.url,
    managementUrl: managementServer.url,
    logs,
    async createTenant(alg, options) {
      const tenant = uniqueName('ts');
      const adminEmail = `admin@${tenant}.test`;
      const created = await createTenant(service.identity, {
        tenant,
        adminEmail,
        adminPassword: ADMIN_PASSWORD,
        ...(alg && { alg }),
        requireAdminFactor: options?.requireAdminFactor ?? false,
      });
      return { tenant, adminId: created.admin.id, adminEmail, kid: created.kid };
    },
    async createUser(tenant, role) {
      const email = `${uniqueName('user')}@example.test`;
      const password = `pw-${uniqueName('secret')}`;
      const user = await createUser(service.identity, tenant, { email, password, role });
      return { id: user.id, email, password };
    },
    issuer: (tenant) => `${publicServer.url}/realms/${tenant}`,
    tokenUrl: (tenant) => `/realms/${tenant}/protocol/openid-connect/token`,
    async close() {
      await Promise.all([
        publicServer.close(100),
        internalServer.close(100),
        managementServer.close(100),
      ]);
      await service.close();
    },
  };
}

/** A source address of its own (sent as X-Forwarded-For; the harness trusts one proxy hop). Random, because failure counters outlive a test run in Redis. */
export function uniqueIp(): string {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

export function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >,
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >,
  };
}

/**
 * The usual arrangement of a test file: one harness and a first tenant, started before its
 * tests and closed after them. `onStart` hands them to the file's own variables.
 */
export function useHarness(
  onStart: (h: Harness, tenant: string) => void,
  env: Record<string, string> = {},
): void {
  let started: Harness | undefined;
  beforeAll(async () => {
    started = await startHarness(env);
    const { tenant } = await started.createTenant();
    onStart(started, tenant);
  });
  afterAll(async () => {
    await started?.close();
  });
}
