/**
 * The token service and the Plant Store as separate built processes: a service account gets
 * a token with the client credentials grant and uses it at the Plant Store.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { startPlatform, USER_PASSWORD, type Platform } from '../src/index.js';

let p: Platform;

beforeAll(async () => {
  p = await startPlatform();
}, 60_000);

afterAll(() => p?.close());

async function createTenant(): Promise<string> {
  const tenant = uniqueName('tps');
  const created = await p.cli(
    'tenant',
    'create',
    tenant,
    '--admin-email',
    `admin@${tenant}.test`,
    '--admin-password',
    USER_PASSWORD,
  );
  expect(created).toMatchObject({ tenant, issuer: `${p.authUrl}/realms/${tenant}` });
  return tenant;
}

const serviceAccount = (tenant: string, role: 'View' | 'Edit') =>
  p.createServiceAccount(tenant, { role });

async function token(
  tenant: string,
  account: { clientId: string; secret: string },
  scope?: string,
): Promise<{ access_token: string; scope: string }> {
  const res = await fetch(`${p.tokenService.url}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${account.clientId}:${account.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      ...(scope === undefined ? {} : { scope }),
    }).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; scope: string };
}

function plants(path: string, accessToken: string, init: RequestInit = {}) {
  return fetch(`${p.plantStores[0]!.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      ...(init.headers as Record<string, string>),
    },
  });
}

describe('token service + Plant Store (separate processes)', () => {
  test('When an Edit service account gets a token, then it creates and lists plants', async () => {
    const tenant = await createTenant();
    const editor = await token(tenant, await serviceAccount(tenant, 'Edit'));

    const created = await plants('/plants', editor.access_token, {
      method: 'POST',
      body: '{"id": 9223372036854775807, "name": "Monstera", "tag": "tropical"}',
    });
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
    await plants('/plants', editor.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 1, name: 'Fern' }),
    });
    const viewer = await token(tenant, await serviceAccount(tenant, 'View'));

    const listed = await plants('/plants', viewer.access_token);
    const refused = await plants('/plants', viewer.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 2, name: 'Cactus' }),
    });

    expect(viewer.scope).toBe('plants:read');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([{ name: 'Fern' }]);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(await refused.json()).toEqual({ error: 403, message: expect.any(String) });
  });

  test('When an Edit service account asks for scope=plants:read, then its token lists plants but creating one is 403 insufficient_scope', async () => {
    const tenant = await createTenant();
    const narrowed = await token(tenant, await serviceAccount(tenant, 'Edit'), 'plants:read');

    const refused = await plants('/plants', narrowed.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 3, name: 'Pothos' }),
    });
    const listed = await plants('/plants', narrowed.access_token);

    expect(narrowed.scope).toBe('plants:read');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(await refused.json()).toEqual({
      error: 403,
      message: "Creating a plant needs the plants:write scope; the token's scope is narrower",
    });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([]);
  });

  test('When a View service account has an edit grant on a tag, then its token creates plants of that tag only, and not once narrowed to plants:read', async () => {
    const tenant = await createTenant();
    const account = await p.createServiceAccount(tenant, { role: 'View' });
    await p.updateServiceAccount(tenant, account.clientId, {
      grants: [{ tag: 'succulent', permission: 'edit' }],
    });
    const granted = await token(tenant, account);
    const narrowed = await token(tenant, account, 'plants:read');

    const created = await plants('/plants', granted.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 1, name: 'Echeveria', tag: 'succulent' }),
    });
    const otherTag = await plants('/plants', granted.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 2, name: 'Fern', tag: 'fern' }),
    });
    const refused = await plants('/plants', narrowed.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 3, name: 'Aloe', tag: 'succulent' }),
    });

    expect({ granted: granted.scope, narrowed: narrowed.scope }).toEqual({
      granted: 'plants:read plants:write',
      narrowed: 'plants:read',
    });
    expect({ status: created.status, body: await created.json() }).toEqual({
      status: 200,
      body: { name: 'Echeveria', tag: 'succulent' },
    });
    expect(otherTag.status).toBe(403);
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 403,
      body: {
        error: 403,
        message: "Creating a plant needs the plants:write scope; the token's scope is narrower",
      },
    });
    expect(await (await plants('/plants', narrowed.access_token)).json()).toEqual([
      { name: 'Echeveria', tag: 'succulent' },
    ]);
  });

  test("When another tenant's account lists plants, then it sees only its own tenant's plants", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const editorA = await token(a, await serviceAccount(a, 'Edit'));
    await plants('/plants', editorA.access_token, {
      method: 'POST',
      body: JSON.stringify({ id: 7, name: 'Orchid' }),
    });
    const viewerB = await token(b, await serviceAccount(b, 'View'));

    const listed = await plants('/plants', viewerB.access_token);

    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([]);
  });
});
