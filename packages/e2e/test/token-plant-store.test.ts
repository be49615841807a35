/**
 * The token service and the Plant Store as separate built processes: a service account gets
 * a token with the client credentials grant and uses it at the Plant Store.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { REPO_ROOT, spawnService, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName, type ServiceProcess } from '@plant/test-kit';

const run = promisify(execFile);

const AUTH_URL = 'http://auth.token-e2e.test';
const PLANT_STORE_AUDIENCE = 'http://plants.token-e2e.test';
const INTERNAL_API_TOKEN = 'token-e2e-internal-token-0123456789';
const KEY_ENCRYPTION_KEY = Buffer.alloc(32, 5).toString('base64');

let tokenService: ServiceProcess;
let plantStore: ServiceProcess;

beforeAll(async () => {
  tokenService = await spawnService('token-service', {
    env: {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      INTERNAL_PORT: '0',
      HOST: '127.0.0.1',
      AUTH_URL,
      INTERNAL_API_TOKEN,
      SECRET_PEPPER: 'token-e2e-pepper-0123456789-0123456789',
      KEY_ENCRYPTION_KEY,
      COOKIE_KEYS: 'token-e2e-cookie-key-0123456789',
      PLANT_STORE_AUDIENCE,
      ACCOUNT_ADMIN_AUDIENCE: 'http://admin.token-e2e.test',
      PORTAL_URL: 'http://portal.token-e2e.test',
    },
  });
  plantStore = await spawnService('plant-store', {
    env: {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      HOST: '127.0.0.1',
      AUTH_URL,
      PLANT_STORE_AUDIENCE,
      TOKEN_SERVICE_INTERNAL_URL: tokenService.internalUrl!,
      INTERNAL_API_TOKEN,
      PUBLIC_URL: 'http://plants.token-e2e.test',
    },
  });
}, 60_000);

afterAll(async () => {
  await Promise.all([plantStore?.stop(), tokenService?.stop()]);
});

async function createTenant(): Promise<string> {
  const tenant = uniqueName('tps');
  const { stdout } = await run(
    process.execPath,
    [join(REPO_ROOT, 'services/token-service/dist/cli.js'), 'tenant', 'create', tenant, '--admin-email', `admin@${tenant}.test`, '--admin-password', 'correct horse battery'],
    { env: { PATH: process.env.PATH ?? '', DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, AUTH_URL, KEY_ENCRYPTION_KEY } },
  );
  expect(JSON.parse(stdout)).toMatchObject({ tenant, issuer: `${AUTH_URL}/realms/${tenant}` });
  return tenant;
}

async function internal(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${tokenService.internalUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${INTERNAL_API_TOKEN}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
}

async function serviceAccount(tenant: string, role: 'View' | 'Edit'): Promise<{ clientId: string; secret: string }> {
  const created = await internal(`/internal/v1/realms/${tenant}/service-accounts`, { method: 'POST', body: JSON.stringify({ name: uniqueName('sa'), actor: 'e2e' }) });
  expect(created.status).toBe(201);
  if (role !== 'View') {
    const patched = await internal(`/internal/v1/realms/${tenant}/service-accounts/${created.body.client_id}`, { method: 'PATCH', body: JSON.stringify({ role, actor: 'e2e' }) });
    expect(patched.status).toBe(200);
  }
  return { clientId: created.body.client_id, secret: created.body.secret };
}

async function token(tenant: string, account: { clientId: string; secret: string }): Promise<{ access_token: string; scope: string }> {
  const res = await fetch(`${tokenService.url}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${account.clientId}:${account.secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; scope: string };
}

function plants(path: string, accessToken: string, init: RequestInit = {}) {
  return fetch(`${plantStore.url}${path}`, { ...init, headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
}

describe('token service + Plant Store (separate processes)', () => {
  test('When an Edit service account gets a token, then it creates and lists plants', async () => {
    const tenant = await createTenant();
    const editor = await token(tenant, await serviceAccount(tenant, 'Edit'));

    const created = await plants('/plants', editor.access_token, { method: 'POST', body: '{"id": 9223372036854775807, "name": "Monstera", "tag": "tropical"}' });
    const listed = await plants('/plants', editor.access_token);

    expect(editor.scope).toBe('plants:read plants:write');
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ name: 'Monstera', tag: 'tropical' });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([{ name: 'Monstera', tag: 'tropical' }]);
  });

  test('When a View service account gets a token, then it lists plants but creating one is 403 insufficient_scope', async () => {
    const tenant = await createTenant();
    const editor = await token(tenant, await serviceAccount(tenant, 'Edit'));
    await plants('/plants', editor.access_token, { method: 'POST', body: JSON.stringify({ id: 1, name: 'Fern' }) });
    const viewer = await token(tenant, await serviceAccount(tenant, 'View'));

    const listed = await plants('/plants', viewer.access_token);
    const refused = await plants('/plants', viewer.access_token, { method: 'POST', body: JSON.stringify({ id: 2, name: 'Cactus' }) });

    expect(viewer.scope).toBe('plants:read');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([{ name: 'Fern' }]);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(await refused.json()).toEqual({ error: 403, message: expect.any(String) });
  });

  test("When another tenant's account lists plants, then it sees only its own tenant's plants", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const editorA = await token(a, await serviceAccount(a, 'Edit'));
    await plants('/plants', editorA.access_token, { method: 'POST', body: JSON.stringify({ id: 7, name: 'Orchid' }) });
    const viewerB = await token(b, await serviceAccount(b, 'View'));

    const listed = await plants('/plants', viewerB.access_token);

    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([]);
  });
});
