/**
 * The whole platform as production runs it, for end-to-end tests: a private redis-server,
 * the shared test database (or a private Postgres cluster for fault tests), the built token
 * service, one or more Plant Store processes and, when asked, account-admin — each started
 * with `spawnService` — plus small clients for what the tests do to it: tenants and users
 * (operator CLI), service accounts (internal API), tokens (client credentials, or a user's
 * sign-in with authorization code + PKCE), plants.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, spawnService, TEST_DATABASE_URL, uniqueName, type ServiceName, type ServiceProcess } from '@plant/test-kit';
import { freePort, startPostgresServer, startRedisServer, type PostgresServer, type RedisServer } from './infrastructure.js';
import { httpRequest, type Answer } from './http-client.js';

const run = promisify(execFile);

/** Fixed, clearly fake test secrets (the secrets-at-rest scan looks for each of them). */
export const TEST_SECRETS = {
  INTERNAL_API_TOKEN: 'e2e-internal-token-hostile-7c1e2a9b44',
  SECRET_PEPPER: 'e2e-pepper-hostile-0123456789-abcdefghij',
  KEY_ENCRYPTION_KEY: Buffer.alloc(32, 11).toString('base64'),
  COOKIE_KEYS: 'e2e-cookie-key-hostile-0123456789',
  SESSION_SECRET: 'e2e-session-secret-hostile-0123456789',
} as const;

export const PLANT_STORE_AUDIENCE = 'http://plant-store.e2e';
export const ACCOUNT_ADMIN_AUDIENCE = 'http://account-admin.e2e';
/** Passwords of the users the platform creates. */
export const USER_PASSWORD = 'correct horse battery staple e2e';

export interface PlatformOptions {
  /** Plant Store processes to start (default 1). */
  stores?: number;
  /** Start account-admin too (default false). */
  accountAdmin?: boolean;
  /** A private Postgres cluster instead of the shared test database (default false). */
  privatePostgres?: boolean;
  /** Extra environment of the token service (throttles, TTL). */
  tokenServiceEnv?: Record<string, string>;
  /** Extra environment of every Plant Store. */
  plantStoreEnv?: Record<string, string>;
  resyncMs?: number;
}

export interface ServiceAccount {
  clientId: string;
  secret: string;
  name: string;
}

export interface Platform {
  redis: RedisServer;
  /** Set when `privatePostgres` was asked for. */
  postgres?: PostgresServer;
  databaseUrl: string;
  authUrl: string;
  internalUrl: string;
  tokenService: ServiceProcess;
  stores: ServiceProcess[];
  accountAdmin?: ServiceProcess;
  portalUrl?: string;
  /** Every process started so far (restarted ones included), for log scans. */
  processes: ServiceProcess[];
  /** A new tenant with its first Account Admin (`admin@<tenant>.test`, USER_PASSWORD). */
  createTenant(prefix?: string): Promise<string>;
  createUser(tenant: string, role: 'View' | 'Edit' | 'Account Admin', email?: string): Promise<string>;
  /** Internal API, as account-admin calls it. */
  internal(method: string, path: string, body?: unknown): Promise<Answer>;
  createServiceAccount(tenant: string, name?: string): Promise<ServiceAccount>;
  setRole(tenant: string, clientId: string, role: 'View' | 'Edit'): Promise<void>;
  resetSecret(tenant: string, clientId: string): Promise<string>;
  deleteServiceAccount(tenant: string, clientId: string): Promise<void>;
  /** The raw answer of the client credentials grant (client_secret_post). */
  requestToken(tenant: string, clientId: string, secret: string, extra?: Record<string, string>): Promise<Answer>;
  /** A client credentials access token; throws unless 200. */
  token(tenant: string, account: { clientId: string; secret: string }, extra?: Record<string, string>): Promise<string>;
  /** An access token of a user, through the real sign-in (authorization code + PKCE). */
  userToken(tenant: string, email: string, resource?: string, scope?: string): Promise<string>;
  /** A sign-in at the token service's form with a wrong password: the status of the form post (401: the form again). */
  failSignIn(tenant: string, email: string, password: string): Promise<number>;
  /** A signed-in portal session: its Cookie header, CSRF token and where sign-in landed. Needs account-admin. */
  portalSession(tenant: string, email: string, returnTo?: string): Promise<{ cookie: string; csrf: string; landing: string }>;
  listPlants(token: string, query?: string, store?: ServiceProcess): Promise<Answer>;
  createPlant(token: string, plant: unknown, store?: ServiceProcess): Promise<Answer>;
  /** One gauge or counter value from a process's /metrics (first series of that name). */
  metric(svc: ServiceProcess, name: string): Promise<number | undefined>;
  startPlantStore(): Promise<ServiceProcess>;
  /** Another token service process on its own ephemeral ports (same database and Redis). */
  startTokenServiceReplica(): Promise<ServiceProcess>;
  restart(svc: ServiceProcess, signal?: NodeJS.Signals): Promise<ServiceProcess>;
  stopTokenService(): Promise<void>;
  startTokenService(): Promise<void>;
  close(): Promise<void>;
}

/** Runs each service's built migrations against a fresh database (a private cluster). */
async function migrate(databaseUrl: string): Promise<void> {
  for (const service of ['token-service', 'plant-store', 'account-admin']) {
    const script = join(REPO_ROOT, 'services', service, 'dist/migrate.js');
    if (!existsSync(script)) continue;
    await run(process.execPath, [script], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' } });
  }
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A minimal cookie jar: name=value pairs from Set-Cookie, sent back as one Cookie header. */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(setCookie: string[] | undefined): void {
    for (const line of setCookie ?? []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const { stores = 1, accountAdmin = false, privatePostgres = false, resyncMs = 5000 } = options;
  const redis = await startRedisServer();
  const postgres = privatePostgres ? await startPostgresServer() : undefined;
  const databaseUrl = postgres?.url ?? TEST_DATABASE_URL;
  if (postgres) await migrate(databaseUrl);

  const [publicPort, internalPort, portalPort] = [await freePort(), await freePort(), await freePort()];
  const authUrl = `http://127.0.0.1:${publicPort}`;
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  const portalUrl = `http://127.0.0.1:${portalPort}`;
  const common = { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, HOST: '127.0.0.1', INTERNAL_API_TOKEN: TEST_SECRETS.INTERNAL_API_TOKEN, AUTH_URL: authUrl };
  const tokenServiceEnv = {
    ...common,
    SECRET_PEPPER: TEST_SECRETS.SECRET_PEPPER,
    KEY_ENCRYPTION_KEY: TEST_SECRETS.KEY_ENCRYPTION_KEY,
    COOKIE_KEYS: TEST_SECRETS.COOKIE_KEYS,
    PLANT_STORE_AUDIENCE,
    ACCOUNT_ADMIN_AUDIENCE,
    PORTAL_URL: portalUrl,
    PORT: String(publicPort),
    INTERNAL_PORT: String(internalPort),
    ...options.tokenServiceEnv,
  };
  const plantStoreEnv = {
    ...common,
    PLANT_STORE_AUDIENCE,
    TOKEN_SERVICE_INTERNAL_URL: internalUrl,
    REVOCATION_RESYNC_MS: String(resyncMs),
    PUBLIC_URL: 'http://plants.e2e',
    ...options.plantStoreEnv,
  };
  const accountAdminEnv = {
    ...common,
    PORT: String(portalPort),
    PORTAL_URL: portalUrl,
    ACCOUNT_ADMIN_AUDIENCE,
    TOKEN_SERVICE_INTERNAL_URL: internalUrl,
    SESSION_SECRET: TEST_SECRETS.SESSION_SECRET,
    REVOCATION_RESYNC_MS: String(resyncMs),
  };
  const envOf: Record<ServiceName, Record<string, string>> = { 'token-service': tokenServiceEnv, 'plant-store': plantStoreEnv, 'account-admin': accountAdminEnv };
  const internalHeaders = { authorization: `Bearer ${TEST_SECRETS.INTERNAL_API_TOKEN}`, 'content-type': 'application/json' };
  const cliEnv = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    AUTH_URL: authUrl,
    KEY_ENCRYPTION_KEY: TEST_SECRETS.KEY_ENCRYPTION_KEY,
    PORTAL_URL: portalUrl,
    CLI_PUBLISH_EVENTS: 'false',
  };
  const cli = (...args: string[]) => run(process.execPath, [join(REPO_ROOT, 'services/token-service/dist/cli.js'), ...args], { env: cliEnv });

  const processes: ServiceProcess[] = [];
  const spawn = async (name: ServiceName, override: Record<string, string> = {}) => {
    const svc = await spawnService(name, { env: { ...envOf[name], ...override } });
    processes.push(svc);
    return svc;
  };

  const platform: Platform = {
    redis,
    postgres,
    databaseUrl,
    authUrl,
    internalUrl,
    tokenService: await spawn('token-service'),
    stores: [],
    processes,
    async createTenant(prefix = 'h') {
      const tenant = uniqueName(prefix);
      await cli('tenant', 'create', tenant, '--admin-email', `admin@${tenant}.test`, '--admin-password', USER_PASSWORD);
      return tenant;
    },
    async createUser(tenant, role, email = `${uniqueName('u')}@${tenant}.test`) {
      await cli('user', 'create', tenant, '--email', email, '--password', USER_PASSWORD, '--role', role);
      return email;
    },
    internal(method, path, body) {
      return httpRequest(`${internalUrl}${path}`, { method, headers: internalHeaders, body: body === undefined ? undefined : JSON.stringify(body) });
    },
    async createServiceAccount(tenant, name = uniqueName('sa')) {
      const res = await platform.internal('POST', `/internal/v1/realms/${tenant}/service-accounts`, { name, actor: 'e2e' });
      if (res.status !== 201) throw new Error(`create service account: ${res.status} ${res.text}`);
      const body = res.body as { client_id: string; secret: string };
      return { clientId: body.client_id, secret: body.secret, name };
    },
    async setRole(tenant, clientId, role) {
      const res = await platform.internal('PATCH', `/internal/v1/realms/${tenant}/service-accounts/${clientId}`, { role, actor: 'e2e' });
      if (res.status !== 200) throw new Error(`set role: ${res.status} ${res.text}`);
    },
    async resetSecret(tenant, clientId) {
      const res = await platform.internal('POST', `/internal/v1/realms/${tenant}/service-accounts/${clientId}/reset-secret`, { actor: 'e2e' });
      if (res.status !== 200) throw new Error(`reset secret: ${res.status} ${res.text}`);
      return (res.body as { secret: string }).secret;
    },
    async deleteServiceAccount(tenant, clientId) {
      const res = await platform.internal('DELETE', `/internal/v1/realms/${tenant}/service-accounts/${clientId}`);
      if (res.status !== 204) throw new Error(`delete service account: ${res.status} ${res.text}`);
    },
    requestToken(tenant, clientId, secret, extra = {}) {
      return httpRequest(`${authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, ...extra }).toString(),
      });
    },
    async token(tenant, { clientId, secret }, extra) {
      const res = await platform.requestToken(tenant, clientId, secret, extra);
      if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
      return (res.body as { access_token: string }).access_token;
    },
    async userToken(tenant, email, resource = ACCOUNT_ADMIN_AUDIENCE, scope = 'openid email profile plants:read plants:write') {
      const jar = new CookieJar();
      const get = async (url: string) => {
        const res = await httpRequest(url, { headers: { cookie: jar.header() } });
        jar.take(res.setCookie);
        return res;
      };
      const { verifier, challenge } = pkce();
      const redirectUri = `${portalUrl}/auth/callback`;
      const query = new URLSearchParams({
        client_id: 'portal',
        response_type: 'code',
        redirect_uri: redirectUri,
        scope,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: randomBytes(8).toString('hex'),
        nonce: randomBytes(8).toString('hex'),
        resource,
      });
      const auth = await get(`${authUrl}/realms/${tenant}/protocol/openid-connect/auth?${query}`);
      const interaction = new URL(auth.headers.location as string, authUrl).href;
      const form = await get(interaction);
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
      const login = await httpRequest(`${interaction}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
        body: new URLSearchParams({ csrf, email, password: USER_PASSWORD }).toString(),
      });
      jar.take(login.setCookie);
      if (login.status !== 303) throw new Error(`sign-in: ${login.status} ${login.text.slice(0, 300)}`);
      const resume = await get(new URL(login.headers.location as string, authUrl).href);
      const callback = new URL(resume.headers.location as string);
      const code = callback.searchParams.get('code');
      if (code === null) throw new Error(`sign-in: no code in ${callback.href}`);
      const tokens = await httpRequest(`${authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: 'portal', code_verifier: verifier, resource }).toString(),
      });
      if (tokens.status !== 200) throw new Error(`code exchange: ${tokens.status} ${tokens.text}`);
      return (tokens.body as { access_token: string }).access_token;
    },
    async failSignIn(tenant, email, password) {
      const jar = new CookieJar();
      const query = new URLSearchParams({ client_id: 'portal', response_type: 'code', redirect_uri: `${portalUrl}/auth/callback`, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's' });
      const auth = await httpRequest(`${authUrl}/realms/${tenant}/protocol/openid-connect/auth?${query}`);
      jar.take(auth.setCookie);
      const interaction = new URL(auth.headers.location as string, authUrl).href;
      const form = await httpRequest(interaction, { headers: { cookie: jar.header() } });
      jar.take(form.setCookie);
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
      const login = await httpRequest(`${interaction}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
        body: new URLSearchParams({ csrf, email, password }).toString(),
      });
      return login.status;
    },
    async portalSession(tenant, email, returnTo) {
      if (platform.accountAdmin === undefined) throw new Error('account-admin is not running');
      const jar = new CookieJar();
      const step = async (url: string, init: Parameters<typeof httpRequest>[1] = {}) => {
        const res = await httpRequest(url, { ...init, headers: { ...init.headers, cookie: jar.header() } });
        jar.take(res.setCookie);
        return res;
      };
      const start = await step(`${portalUrl}/login?${new URLSearchParams({ tenant, ...(returnTo === undefined ? {} : { return_to: returnTo }) })}`);
      if (start.status !== 303) throw new Error(`portal login: ${start.status} ${start.text.slice(0, 300)}`);
      const auth = await step(start.headers.location as string);
      const interaction = new URL(auth.headers.location as string, authUrl).href;
      const form = await step(interaction);
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
      const login = await step(`${interaction}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, email, password: USER_PASSWORD }).toString(),
      });
      if (login.status !== 303) throw new Error(`portal sign-in: ${login.status} ${login.text.slice(0, 300)}`);
      const resume = await step(new URL(login.headers.location as string, authUrl).href);
      const callback = await step(resume.headers.location as string);
      if (callback.status !== 303) throw new Error(`portal callback: ${callback.status} ${callback.text.slice(0, 300)}`);
      const token = jar.get('csrf_token');
      if (token === undefined || jar.get('aa_session') === undefined) throw new Error('portal sign-in set no session');
      return { cookie: jar.header(), csrf: decodeURIComponent(token), landing: callback.headers.location as string };
    },
    listPlants(token, query = 'limit=1000', store = platform.stores[0]!) {
      return httpRequest(`${store.url}/plants?${query}`, { headers: { authorization: `Bearer ${token}` } });
    },
    createPlant(token, plant, store = platform.stores[0]!) {
      return httpRequest(`${store.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof plant === 'string' ? plant : JSON.stringify(plant),
      });
    },
    async metric(svc, name) {
      const text = (await httpRequest(`${svc.url}/metrics`)).text;
      const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
      return match ? Number(match[1]) : undefined;
    },
    async startPlantStore() {
      const store = await spawn('plant-store');
      platform.stores.push(store);
      return store;
    },
    startTokenServiceReplica() {
      return spawn('token-service', { PORT: '0', INTERNAL_PORT: '0' });
    },
    async restart(svc, signal = 'SIGTERM') {
      await svc.stop(signal);
      // Fixed ports (token service, account-admin) come back on the same address; stores get a new one.
      const next = await spawn(svc.name);
      if (svc.name === 'token-service') platform.tokenService = next;
      if (svc.name === 'account-admin') platform.accountAdmin = next;
      const i = platform.stores.indexOf(svc);
      if (i >= 0) platform.stores[i] = next;
      return next;
    },
    async stopTokenService() {
      await platform.tokenService.stop();
    },
    async startTokenService() {
      platform.tokenService = await spawn('token-service');
    },
    async close() {
      await Promise.all(processes.map((svc) => svc.stop('SIGKILL')));
      await redis.stop();
      await postgres?.destroy();
    },
  };
  for (let i = 0; i < stores; i += 1) await platform.startPlantStore();
  if (accountAdmin) {
    platform.accountAdmin = await spawn('account-admin');
    platform.portalUrl = portalUrl;
  }
  return platform;
}
