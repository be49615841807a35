/**
 * Test platform for account-admin: the REAL token service as a process (`startPlatform` of
 * @plant/test-kit, on the test database and Redis), account-admin in-process at the address
 * the token service's portal client redirects to (or as a process), and tenants with an
 * Account Admin, a View user and an Edit user.
 */
import { startWebServer, type WebServer } from '@plant/shared/http';
import {
  captureLogs,
  startPlatform,
  TEST_REDIS_URL,
  USER_PASSWORD,
  type Platform,
  type PlatformOptions,
} from '@plant/test-kit';
import {
  createAccountAdmin,
  type AccountAdmin,
  type AccountAdminOptions,
} from '../../src/account-admin.js';
import { loadAccountAdminConfig } from '../../src/config.js';
import { signIn, type PortalSession, type TestUser } from './browser-client.js';

export { ACCOUNT_ADMIN_AUDIENCE, PLANT_STORE_AUDIENCE, type Platform } from '@plant/test-kit';

/** The token service (and what else `options` asks for); account-admin logs at debug, so secret scans see every line. */
export function startTokenService(options: PlatformOptions = {}): Promise<Platform> {
  return startPlatform({
    plantStores: 0,
    redisUrl: TEST_REDIS_URL,
    ...options,
    serviceEnv: { 'account-admin': { LOG_LEVEL: 'debug' }, ...options.serviceEnv },
  });
}

export interface TestTenant {
  tenant: string;
  admin: TestUser;
  viewer: TestUser;
  editor: TestUser;
}

/** A tenant with an Account Admin, a View user and an Edit user. */
export async function createTenant(platform: Platform): Promise<TestTenant> {
  const tenant = await platform.createTenant('aa');
  const user = (email: string) => ({ email, password: USER_PASSWORD });
  await platform.createUser(tenant, 'View', `viewer@${tenant}.test`);
  await platform.createUser(tenant, 'Edit', `editor@${tenant}.test`);
  return {
    tenant,
    admin: user(`admin@${tenant}.test`),
    viewer: user(`viewer@${tenant}.test`),
    editor: user(`editor@${tenant}.test`),
  };
}

export interface PortalHandle {
  service: AccountAdmin;
  web: WebServer;
  url: string;
  /** Its management port (/healthz, /readyz, /metrics). */
  managementUrl: string;
  logs: string[];
  stop(): Promise<void>;
}

export interface PortalOptions extends AccountAdminOptions {
  /** Another port than the one the token service redirects to (a second replica); its PORTAL_URL follows it. */
  port?: number;
  env?: Record<string, string>;
}

/** account-admin in-process with the environment its process would get, logs captured for secret scans. */
export async function startPortal(
  platform: Platform,
  { port = Number(new URL(platform.portalUrl).port), env = {}, ...options }: PortalOptions = {},
): Promise<PortalHandle> {
  const config = loadAccountAdminConfig(
    platform.envOf('account-admin', {
      PORT: String(port),
      PORTAL_URL: `http://127.0.0.1:${port}`,
      ...env,
    }),
  );
  const { logger, lines: logs } = captureLogs('account-admin', config.LOG_LEVEL);
  const service = createAccountAdmin(config, logger, options);
  await service.start();
  const web = await startWebServer(service.app, { port, host: '127.0.0.1' });
  const management = await startWebServer(service.management, { port: 0, host: '127.0.0.1' });
  return {
    service,
    web,
    url: `http://127.0.0.1:${port}`,
    managementUrl: management.url,
    logs,
    async stop() {
      await Promise.all([web.close(100), management.close(100)]);
      await service.close();
    },
  };
}

export interface SignedInPortal {
  ts: Platform;
  portal: PortalHandle;
  acme: TestTenant;
  /** acme's Account Admin, signed in to the portal. */
  admin: PortalSession;
}

/** The token service, account-admin in-process, a tenant and its admin's portal session. */
export async function startSignedInPortal(options: PortalOptions = {}): Promise<SignedInPortal> {
  const ts = await startTokenService();
  const portal = await startPortal(ts, options);
  const acme = await createTenant(ts);
  return { ts, portal, acme, admin: await signIn(portal.url, acme.tenant, acme.admin) };
}
