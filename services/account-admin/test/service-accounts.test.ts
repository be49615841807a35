import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { clientCredentialsToken, signIn, userAccessToken, type PortalSession } from './helpers/browser-client.js';
import { createTenant, startSignedInPortal, type Platform, type PortalHandle, type TestTenant } from './helpers/platform.js';
import { arraySchemaErrors, schemaErrors } from './helpers/openapi-check.js';

let ts: Platform;
let portal: PortalHandle;
let acme: TestTenant;
let admin: PortalSession;
let adminToken: string;

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

beforeAll(async () => {
  ({ ts, portal, acme, admin } = await startSignedInPortal());
  adminToken = await userAccessToken(ts.authUrl, portal.url, acme.tenant, acme.admin);
}, 60_000);

afterAll(async () => {
  await portal?.stop();
  await ts?.close();
});

function api(path: string, init: RequestInit = {}) {
  return fetch(`${portal.url}/api/v1${path}`, init);
}

function asAdminSession(method: string, path: string, body?: unknown) {
  return api(path, {
    method,
    headers: admin.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function asBearer(token: string, method: string, path: string, body?: unknown) {
  return api(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function auditEvents(session: PortalSession = admin): Promise<Array<Record<string, unknown>>> {
  const res = await api('/audit-events?limit=100', { headers: session.headers() });
  expect(res.status).toBe(200);
  return (await res.json()) as Array<Record<string, unknown>>;
}

describe('creating service accounts', () => {
  test('When an Account Admin creates a service account from the portal session, then it answers 201 with the account and its secret, once', async () => {
    const name = uniqueName('robot');

    const res = await asAdminSession('POST', '/service-accounts', { name });

    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      name,
      client_id: expect.stringMatching(/^sa-[0-9a-f]{32}$/),
      role: 'View',
      grants: [],
      created_at: ISO,
      created_by: acme.admin.email,
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
      secret: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v1/service-accounts/${body.client_id as string}`);
    expect(schemaErrors('ServiceAccountWithSecret', body)).toEqual([]);
    const token = await clientCredentialsToken(ts.authUrl, acme.tenant, body.client_id as string, body.secret as string);
    expect(token.status).toBe(200);
  });

  test('When the list is read, then each account appears without any secret', async () => {
    const name = uniqueName('lister');
    const created = (await (await asAdminSession('POST', '/service-accounts', { name })).json()) as Record<string, unknown>;

    const res = await asAdminSession('GET', '/service-accounts');

    expect(res.status).toBe(200);
    const list = (await res.json()) as Array<Record<string, unknown>>;
    const { secret: _secret, ...withoutSecret } = created;
    expect(list).toContainEqual(withoutSecret);
    for (const account of list) expect(Object.keys(account).sort()).toEqual(['client_id', 'created_at', 'created_by', 'disabled', 'disabled_at', 'dpop_bound_access_tokens', 'grants', 'last_used_at', 'name', 'role']);
    expect(arraySchemaErrors('ServiceAccount', list)).toEqual([]);
    expect(JSON.stringify(list)).not.toContain(created.secret as string);
  });

  test('When a name is taken (in any letter case), then create answers 409 with the duplicate-name message', async () => {
    const name = uniqueName('dup');
    expect((await asAdminSession('POST', '/service-accounts', { name })).status).toBe(201);

    const res = await asAdminSession('POST', '/service-accounts', { name: name.toUpperCase() });

    expect(res.status).toBe(409);
    const answer = await res.json();
    expect(answer).toEqual({ error: 409, message: 'A service account with this name already exists' });
    expect(schemaErrors('Error', answer)).toEqual([]);
  });

  test('When the body is invalid, then create answers 400 and creates nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name is required'],
      [{ name: '' }, 'name must not be empty'],
      [{ name: 'x'.repeat(65) }, 'name must be at most 64 characters'],
      [{ name: 'bad\u0007name' }, 'name must not contain control characters'],
      [{ name: 42 }, 'name must be a string'],
      [{ name: 'ok', role: 'Edit' }, 'Unknown field "role"; the body is {name}'],
      [[], 'Body must be a JSON object {name}'],
    ];
    for (const [body, message] of cases) {
      const res = await asAdminSession('POST', '/service-accounts', body);
      expect({ body, status: res.status, answer: await res.json() }).toEqual({ body, status: 400, answer: { error: 400, message } });
    }
  });

  test('When the body is not JSON, then create answers 415 or 400 in the Error shape', async () => {
    const wrongType = await api('/service-accounts', { method: 'POST', headers: admin.headers({ 'content-type': 'text/plain' }), body: 'name=x' });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toEqual({ error: 415, message: 'Content-Type must be application/json' });
    const malformed = await api('/service-accounts', { method: 'POST', headers: admin.headers({ 'content-type': 'application/json' }), body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: 400, message: 'Request body is not valid JSON' });
  });
});

describe('the 25-account cap', () => {
  test('When a tenant has 25 service accounts, then the 26th create answers 409 with the cap message, and no audit event is written for it', async () => {
    const capped = await createTenant(ts);
    const session = await signIn(portal.url, capped.tenant, capped.admin);
    for (let i = 0; i < 25; i += 1) {
      const res = await api('/service-accounts', { method: 'POST', headers: session.headers({ 'content-type': 'application/json' }), body: JSON.stringify({ name: `bot-${i}` }) });
      expect(res.status).toBe(201);
    }

    const res = await api('/service-accounts', { method: 'POST', headers: session.headers({ 'content-type': 'application/json' }), body: JSON.stringify({ name: 'bot-25' }) });

    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 409, message: 'This tenant already has the maximum of 25 service accounts' });
    const events = await auditEvents(session);
    expect(events).toHaveLength(25);
    expect(events.map((e) => e.name)).not.toContain('bot-25');
    const page = await (await fetch(`${portal.url}/settings/service-accounts`, { headers: { cookie: session.cookie() } })).text();
    expect(page).toContain('This account has the maximum of 25 service accounts. Delete one before creating another.');

    // 26 events: the Activity page shows 25, newest first, and links to the older one.
    await api(`/service-accounts/${events[0]!.client_id as string}`, { method: 'PATCH', headers: session.headers({ 'content-type': 'application/json' }), body: JSON.stringify({ role: 'Edit' }) });
    const first = await (await fetch(`${portal.url}/activity`, { headers: { cookie: session.cookie() } })).text();
    const rows = (html: string) => (html.match(/<td data-label="What">/g) ?? []).length;
    expect(rows(first)).toBe(25);
    expect(first.indexOf('Changed role or grants of')).toBeLessThan(first.indexOf('bot-24'));
    const older = /href="(\/activity\?cursor=[^"]+)" rel="next"/.exec(first)?.[1];
    expect(older).toBeDefined();
    const second = await (await fetch(`${portal.url}${older!}`, { headers: { cookie: session.cookie() } })).text();
    expect(rows(second)).toBe(1);
    expect(second).toContain('bot-0');
    expect(second).not.toContain('rel="next"');
  });

  test('When ten admins create the same name at once, then exactly one gets 201, the others 409, and exactly one audit event exists', async () => {
    const racing = await createTenant(ts);
    const session = await signIn(portal.url, racing.tenant, racing.admin);

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => api('/service-accounts', { method: 'POST', headers: session.headers({ 'content-type': 'application/json' }), body: JSON.stringify({ name: 'same-name' }) })),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    expect((await auditEvents(session)).map((e) => [e.action, e.name])).toEqual([['service_account.create', 'same-name']]);
  });
});

describe('reading, changing, resetting and deleting', () => {
  test('When an account is read by client_id, then it answers 200 with the account; an unknown id answers 404', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('one') })).json()) as Record<string, unknown>;
    const { secret: _s, ...account } = created;

    const found = await asAdminSession('GET', `/service-accounts/${created.client_id as string}`);
    const unknown = await asAdminSession('GET', '/service-accounts/sa-00000000000000000000000000000000');
    const garbage = await asAdminSession('GET', `/service-accounts/${encodeURIComponent('../../etc/passwd')}`);

    expect(found.status).toBe(200);
    expect(await found.json()).toEqual(account);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 404, message: 'Service account not found' });
    expect(garbage.status).toBe(404);
    expect(await garbage.json()).toEqual({ error: 404, message: 'Service account not found' });
  });

  test('When an unknown client_id is changed, reset or deleted, then each answers 404 and writes no audit event', async () => {
    const before = await auditEvents();
    const id = 'sa-ffffffffffffffffffffffffffffffff';
    for (const [method, path, body] of [
      ['PATCH', `/service-accounts/${id}`, { role: 'Edit' }],
      ['POST', `/service-accounts/${id}/reset-secret`, undefined],
      ['DELETE', `/service-accounts/${id}`, undefined],
    ] as const) {
      const res = await asAdminSession(method, path, body);
      expect({ method, status: res.status, body: await res.json() }).toEqual({ method, status: 404, body: { error: 404, message: 'Service account not found' } });
    }
    expect(await auditEvents()).toEqual(before);
  });

  test('When the role and grants are changed, then the account shows them, its older tokens are refused, and an audit event records the change', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('patch') })).json()) as Record<string, string>;

    const res = await asAdminSession('PATCH', `/service-accounts/${created.client_id}`, { role: 'Edit', grants: [{ tag: 'roses', permission: 'edit' }] });

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      name: created.name,
      client_id: created.client_id,
      role: 'Edit',
      grants: [{ tag: 'roses', permission: 'edit' }],
      created_at: created.created_at,
      created_by: acme.admin.email,
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
    });
    const [latest] = await auditEvents();
    expect(latest).toEqual({
      id: expect.stringMatching(/^\d+$/),
      occurred_at: ISO,
      actor_sub: expect.any(String),
      actor_email: acme.admin.email,
      actor_type: 'user',
      action: 'service_account.update',
      client_id: created.client_id,
      name: created.name,
      details: { role: { from: 'View', to: 'Edit' }, grants: { from: [], to: ['roses'] } },
      request_id: expect.any(String),
      address: expect.stringMatching(/127\.0\.0\.1$/),
    });
  });

  test('When PATCH bodies are invalid, then they answer 400 and change nothing', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('badpatch') })).json()) as Record<string, string>;
    const cases: Array<[unknown, string]> = [
      [{}, 'role, grants or dpop_bound_access_tokens is required'],
      [{ role: 'Account Admin' }, 'role must be "View" or "Edit"'],
      [{ grants: [{ permission: 'edit' }] }, 'grants.0.tag: tag is required'],
      [{ grants: [{ tag: 'a', permission: 'view' }] }, 'grants.0.permission: permission must be "edit"'],
      [{ grants: [{ tag: 'a', permission: 'edit' }, { tag: 'a', permission: 'edit' }] }, 'grants must not repeat a tag'],
      [{ grants: 'roses' }, 'grants must be an array'],
      [{ dpop_bound_access_tokens: 'yes' }, 'dpop_bound_access_tokens must be true or false'],
      [{ role: 'Edit', actor: 'someone-else' }, 'Unknown field "actor"; the body is {role?, grants?, dpop_bound_access_tokens?}'],
    ];
    for (const [body, message] of cases) {
      const res = await asAdminSession('PATCH', `/service-accounts/${created.client_id}`, body);
      expect({ body, status: res.status, answer: await res.json() }).toEqual({ body, status: 400, answer: { error: 400, message } });
    }
    const after = (await (await asAdminSession('GET', `/service-accounts/${created.client_id}`)).json()) as Record<string, unknown>;
    expect(after).toMatchObject({ role: 'View', grants: [] });
  });

  test('When the secret is reset, then the answer has a new secret, the old one is refused and the new one works', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('reset') })).json()) as Record<string, string>;

    const res = await asAdminSession('POST', `/service-accounts/${created.client_id}/reset-secret`);

    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const reset = (await res.json()) as Record<string, string>;
    expect(reset).toEqual({ ...created, secret: expect.any(String) });
    expect(reset.secret).not.toBe(created.secret);
    expect((await clientCredentialsToken(ts.authUrl, acme.tenant, created.client_id!, created.secret!)).status).toBe(401);
    expect((await clientCredentialsToken(ts.authUrl, acme.tenant, created.client_id!, reset.secret!)).status).toBe(200);
  });

  test('When an account is deleted, then it answers 204, the account is gone and its secret is refused', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('del') })).json()) as Record<string, string>;

    const res = await asAdminSession('DELETE', `/service-accounts/${created.client_id}`);

    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await asAdminSession('GET', `/service-accounts/${created.client_id}`)).status).toBe(404);
    expect((await clientCredentialsToken(ts.authUrl, acme.tenant, created.client_id!, created.secret!)).status).toBe(401);
  });
});

describe('the audit trail', () => {
  test('When an admin creates, changes, resets and deletes an account, then one audit event per action is listed newest first, none holding a secret', async () => {
    const name = uniqueName('audited');
    const created = (await (await asAdminSession('POST', '/service-accounts', { name })).json()) as Record<string, string>;
    await asAdminSession('PATCH', `/service-accounts/${created.client_id}`, { role: 'Edit' });
    const reset = (await (await asAdminSession('POST', `/service-accounts/${created.client_id}/reset-secret`)).json()) as Record<string, string>;
    await asAdminSession('DELETE', `/service-accounts/${created.client_id}`);

    const events = (await auditEvents()).filter((e) => e.client_id === created.client_id);

    const common = {
      id: expect.stringMatching(/^\d+$/),
      occurred_at: ISO,
      actor_sub: expect.any(String),
      actor_email: acme.admin.email,
      actor_type: 'user',
      client_id: created.client_id,
      name,
      request_id: expect.any(String),
      address: expect.stringMatching(/127\.0\.0\.1$/),
    };
    expect(events).toEqual([
      { ...common, action: 'service_account.delete', details: {} },
      { ...common, action: 'service_account.reset_secret', details: {} },
      { ...common, action: 'service_account.update', details: { role: { from: 'View', to: 'Edit' } } },
      { ...common, action: 'service_account.create', details: { role: 'View' } },
    ]);
    expect(arraySchemaErrors('AuditEvent', events)).toEqual([]);
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.secret);
    expect(text).not.toContain(reset.secret);
    expect(portal.logs.join('\n')).not.toContain(created.secret);
    expect(portal.logs.join('\n')).not.toContain(reset.secret);
  });

  test('When the request carries an x-request-id, then its audit event records it', async () => {
    const res = await api('/service-accounts', {
      method: 'POST',
      headers: admin.headers({ 'content-type': 'application/json', 'x-request-id': 'req-audit-1234' }),
      body: JSON.stringify({ name: uniqueName('reqid') }),
    });
    const created = (await res.json()) as Record<string, string>;

    const [latest] = (await auditEvents()).filter((e) => e.client_id === created.client_id);

    expect(res.headers.get('x-request-id')).toBe('req-audit-1234');
    expect(latest).toMatchObject({ action: 'service_account.create', request_id: 'req-audit-1234' });
    // The same id crossed to the token service's internal API.
    const crossed = (await ts.tokenService.flushedLogs()).filter((line) => line.includes('"reqId":"req-audit-1234"')).map((line) => JSON.parse(line) as { req?: { method: string; path: string } });
    expect(crossed).toContainEqual(expect.objectContaining({ req: { method: 'POST', path: `/internal/v1/realms/${acme.tenant}/service-accounts` } }));
  });

  test('When events are paged, then pages follow the Link header newest first without overlap, and a bad cursor or limit is 400', async () => {
    const paged = await createTenant(ts);
    const session = await signIn(portal.url, paged.tenant, paged.admin);
    for (let i = 0; i < 5; i += 1) {
      await api('/service-accounts', { method: 'POST', headers: session.headers({ 'content-type': 'application/json' }), body: JSON.stringify({ name: `page-${i}` }) });
    }

    const first = await api('/audit-events?limit=2', { headers: session.headers() });
    const firstBody = (await first.json()) as Array<Record<string, unknown>>;
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    const second = await fetch(next!, { headers: session.headers() });
    const secondBody = (await second.json()) as Array<Record<string, unknown>>;
    const third = await fetch(/<([^>]+)>; rel="next"/.exec(second.headers.get('link') ?? '')![1]!, { headers: session.headers() });
    const thirdBody = (await third.json()) as Array<Record<string, unknown>>;

    expect([...firstBody, ...secondBody, ...thirdBody].map((e) => e.name)).toEqual(['page-4', 'page-3', 'page-2', 'page-1', 'page-0']);
    expect(third.headers.get('link')).toBeNull();
    const cursorOf = (text: string) => `cursor=${Buffer.from(text).toString('base64url')}`;
    // Past int64, zero and negative ids, a leading zero, and the Plant Store's cursor: none reach Postgres.
    const forged = ['before:9999999999999999999', 'before:9223372036854775808', 'before:0', 'before:-1', 'before:01', 'v1:5'].map(cursorOf);
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=nonsense', ...forged]) {
      const res = await api(`/audit-events?${query}`, { headers: session.headers() });
      expect({ query, status: res.status, body: await res.json() }).toEqual({ query, status: 400, body: { error: 400, message: expect.any(String) } });
    }
    for (const query of ['cursor=nonsense', ...forged]) {
      const page = await fetch(`${portal.url}/activity?${query}`, { headers: session.headers() });
      expect({ query, page: page.status }).toEqual({ query, page: 400 });
    }
  });
});

describe('bearer tokens', () => {
  test('When an Account Admin calls with a bearer token for this API, then they can read and manage service accounts', async () => {
    const me = await asBearer(adminToken, 'GET', '/me');
    expect(me.status).toBe(200);
    const meBody = await me.json();
    expect(meBody).toEqual({ tenant: acme.tenant, sub: expect.any(String), email: acme.admin.email, principal_type: 'user', role: 'Account Admin', can_manage_service_accounts: true });
    expect(schemaErrors('Me', meBody)).toEqual([]);

    const created = await asBearer(adminToken, 'POST', '/service-accounts', { name: uniqueName('bearer') });

    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ role: 'View', created_by: acme.admin.email, secret: expect.any(String) });
  });

  test('When a service account presents its own (Plant Store) token, then the API refuses it as invalid_token', async () => {
    const created = (await (await asAdminSession('POST', '/service-accounts', { name: uniqueName('sa-token') })).json()) as Record<string, string>;
    const token = ((await (await clientCredentialsToken(ts.authUrl, acme.tenant, created.client_id!, created.secret!)).json()) as { access_token: string }).access_token;

    const res = await asBearer(token, 'GET', '/service-accounts');

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="account-admin", error="invalid_token", error_description="Token audience is not accepted"');
    expect(await res.json()).toEqual({ error: 401, message: 'Token audience is not accepted' });
  });

  test('When no credentials are sent, then the API answers 401 with a bare Bearer challenge', async () => {
    const res = await api('/service-accounts');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="account-admin"');
    expect(await res.json()).toEqual({ error: 401, message: 'Authentication required: sign in to the portal or send Authorization: Bearer <access token>' });
  });
});

describe('the OpenAPI document', () => {
  test('When a response lacks a field or carries a wrong type, then the schema check reports it (the check can fail)', () => {
    expect(schemaErrors('ServiceAccount', { name: 'x', client_id: 'sa-1', role: 'Admin', grants: [], created_at: '2026-01-01T00:00:00Z', created_by: null })).not.toEqual([]);
  });

  test('When /api/v1/openapi.json is fetched without credentials, then it describes every route', async () => {
    const res = await api('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.fromEntries(Object.entries(doc.paths).map(([path, ops]) => [path, Object.keys(ops).filter((k) => k !== 'parameters').sort()]))).toEqual({
      '/me': ['get'],
      '/service-accounts': ['get', 'post'],
      '/service-accounts/{client_id}': ['delete', 'get', 'patch'],
      '/service-accounts/{client_id}/credentials': ['get'],
      '/service-accounts/{client_id}/disable': ['post'],
      '/service-accounts/{client_id}/enable': ['post'],
      '/service-accounts/{client_id}/keys': ['post'],
      '/service-accounts/{client_id}/keys/{key_id}': ['delete'],
      '/service-accounts/{client_id}/reset-secret': ['post'],
      '/service-accounts/{client_id}/secret': ['delete'],
      '/service-accounts/{client_id}/trusts': ['post'],
      '/service-accounts/{client_id}/trusts/{trust_id}': ['delete'],
      '/audit-events': ['get'],
    });
  });
});
