import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '@plant/test-kit';
import { AUTH, internal } from './helpers/internal-client.js';
import { listenToRevocations } from './helpers/revocation-feed.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;
let revocations: Awaited<ReturnType<typeof listenToRevocations>>;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET = /^pss_[0-9A-Za-z]{49}$/;
const INVISIBLE =
  'name must not contain invisible or formatting characters (bidi controls, zero-width and the like)';

beforeAll(async () => {
  h = await startHarness();
  api = internal(h);
  ({ tenant } = await h.createTenant());
  revocations = await listenToRevocations();
});

afterAll(async () => {
  revocations.close();
  await h.close();
});

function eventsFor(sub: string) {
  return revocations.events.filter((e) => e.sub === sub);
}

/** Publication happens before the API answers; delivery to our subscriber takes a moment more. */
async function waitForEvents(sub: string, count: number): Promise<Array<Record<string, unknown>>> {
  await eventually(() => eventsFor(sub).length >= count, `${count} revocation events for ${sub}`);
  return eventsFor(sub);
}

describe('service accounts', () => {
  test('When a service account is created, then it is View with no grants, its secret is shown once and it is listed without the secret', async () => {
    const { tenant: own } = await h.createTenant();

    const created = await request(h.internalUrl)
      .post(`/internal/v1/realms/${own}/service-accounts`)
      .set('authorization', AUTH)
      .send({ name: 'Nightly Import', actor: 'alice@example.test' });
    const list = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/service-accounts`)
      .set('authorization', AUTH);
    const one = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/service-accounts/${created.body.client_id}`)
      .set('authorization', AUTH);

    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const account = {
      name: 'Nightly Import',
      client_id: expect.stringMatching(/^sa-[0-9a-f]{32}$/),
      role: 'View',
      grants: [],
      created_at: expect.stringMatching(ISO),
      created_by: 'alice@example.test',
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
      receive_signals: false,
      secret_expires_at: null,
      quota: null,
      // Counted up by every change: account-admin's ETag.
      revision: 1,
    };
    expect(created.body).toEqual({ ...account, secret: expect.stringMatching(SECRET) });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      { ...account, client_id: created.body.client_id, created_at: created.body.created_at },
    ]);
    expect(one.body).toEqual(list.body[0]);
  });

  test('When accounts are listed, then they come in name order', async () => {
    const { tenant: own } = await h.createTenant();
    for (const name of ['charlie', 'Alpha', 'bravo']) await api.createServiceAccount(own, name);

    const res = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/service-accounts`)
      .set('authorization', AUTH);

    expect(res.body.map((a: { name: string }) => a.name)).toEqual(['Alpha', 'bravo', 'charlie']);
  });

  test('When a name is taken in another case, then 409', async () => {
    await api.createServiceAccount(tenant, 'Report Bot');

    const res = await request(h.internalUrl)
      .post(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH)
      .send({ name: 'report bot', actor: 'a' });

    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 409,
      message: 'A service account with this name already exists',
    });
  });

  test.each([
    ['a Cyrillic А', '\u0410dmin'],
    ['fullwidth letters (NFKC)', '\uff21\uff44\uff4d\uff49\uff4e'],
    ['rn for m', 'adrnin'],
    ['a Greek capital alpha and a Roman numeral one', '\u0391dm\u2160n'],
  ])(
    'When "Admin" exists and a name with %s that looks the same is created, then 409 and only "Admin" is listed',
    async (_case, lookalike) => {
      const { tenant: own } = await h.createTenant();
      await api.createServiceAccount(own, 'Admin');

      const res = await request(h.internalUrl)
        .post(`/internal/v1/realms/${own}/service-accounts`)
        .set('authorization', AUTH)
        .send({ name: lookalike, actor: 'a' });
      const list = await request(h.internalUrl)
        .get(`/internal/v1/realms/${own}/service-accounts`)
        .set('authorization', AUTH);

      expect({ status: res.status, body: res.body }).toEqual({
        status: 409,
        body: { error: 409, message: 'A service account with this name already exists' },
      });
      expect(list.body.map((a: { name: string }) => a.name)).toEqual(['Admin']);
    },
  );

  test('When names only look alike in another realm, then both are created', async () => {
    const { tenant: a } = await h.createTenant();
    const { tenant: b } = await h.createTenant();
    await api.createServiceAccount(a, 'Admin');

    const res = await request(h.internalUrl)
      .post(`/internal/v1/realms/${b}/service-accounts`)
      .set('authorization', AUTH)
      .send({ name: '\u0410dmin', actor: 'a' });

    expect({ status: res.status, name: res.body.name }).toEqual({
      status: 201,
      name: '\u0410dmin',
    });
  });

  test('When an account is deleted, then its name can be used again', async () => {
    const first = await api.createServiceAccount(tenant, 'Reusable');
    await api.remove(tenant, first.client_id).expect(204);

    const again = await api.createServiceAccount(tenant, 'reusable');

    expect(again.client_id).not.toBe(first.client_id);
  });

  test.each([
    ['no name', { actor: 'a' }, 'name is required'],
    ['an empty name', { name: '   ' }, 'name must not be empty'],
    ['a name of 65 characters', { name: 'x'.repeat(65) }, 'name must be at most 64 characters'],
    [
      'a name with a control character',
      { name: 'bad\u0007name' },
      'name must not contain control characters',
    ],
    ['a zero-width space (ad\\u200Bmin)', { name: 'ad\u200Bmin' }, INVISIBLE],
    ['a right-to-left override (deploy\\u202Edlo-)', { name: 'deploy\u202Edlo-' }, INVISIBLE],
    ['a left-to-right isolate', { name: 'a\u2066b' }, INVISIBLE],
    ['a byte order mark', { name: '\ufeffadmin' }, INVISIBLE],
    ['a private-use character', { name: 'a\ue000' }, INVISIBLE],
    ['a line separator', { name: 'a\u2028b' }, INVISIBLE],
    ['an unassigned code point', { name: 'a\u0378' }, INVISIBLE],
    ['a number as name', { name: 12 }, 'name must be a string'],
    ['an array body', [], 'body must be a JSON object'],
  ])('When the body has %s, then 400', async (_name, body, message) => {
    const res = await request(h.internalUrl)
      .post(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH)
      .send(body as object);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message });
  });

  test('When the body is not JSON, then 415, and malformed JSON is 400', async () => {
    const notJson = await request(h.internalUrl)
      .post(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH)
      .type('form')
      .send('name=x');
    const malformed = await request(h.internalUrl)
      .post(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH)
      .type('json')
      .send('{"name":');

    expect(notJson.status).toBe(415);
    expect(notJson.body).toEqual({ error: 415, message: 'Content-Type must be application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: 400, message: 'Request body is not valid JSON' });
  });

  test('When the realm or the account does not exist, then 404', async () => {
    const noRealm = await request(h.internalUrl)
      .post('/internal/v1/realms/no-such-realm-q/service-accounts')
      .set('authorization', AUTH)
      .send({ name: 'x' });
    const noAccount = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts/sa-missing`)
      .set('authorization', AUTH);
    const patchMissing = await api.patch(tenant, 'sa-missing', { role: 'Edit' });
    const resetMissing = await api.reset(tenant, 'sa-missing');
    const deleteMissing = await api.remove(tenant, 'sa-missing');

    expect(noRealm.status).toBe(404);
    expect(noRealm.body).toEqual({ error: 404, message: 'Tenant not found' });
    for (const res of [noAccount, patchMissing, resetMissing, deleteMissing]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: 'Service account not found' });
    }
  });

  test('When an unknown realm is read, then 404 Tenant not found; a realm without accounts lists none', async () => {
    const { tenant: empty } = await h.createTenant();
    const reads = [
      'service-accounts',
      'service-accounts/sa-missing',
      'users',
      'users/00000000-0000-0000-0000-000000000000',
    ];

    const unknown = await Promise.all(
      reads.map((path) =>
        request(h.internalUrl)
          .get(`/internal/v1/realms/no-such-realm-q/${path}`)
          .set('authorization', AUTH),
      ),
    );
    const none = await request(h.internalUrl)
      .get(`/internal/v1/realms/${empty}/service-accounts`)
      .set('authorization', AUTH);

    for (const res of unknown) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: 'Tenant not found' });
    }
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
  });

  test("When another realm's account is addressed, then 404", async () => {
    const { tenant: other } = await h.createTenant();
    const account = await api.createServiceAccount(other);

    const res = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
      .set('authorization', AUTH);
    const del = await api.remove(tenant, account.client_id);

    expect(res.status).toBe(404);
    expect(del.status).toBe(404);
  });

  test('When role and grants are changed, then the account shows them, the version is bumped and the event is published', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await api.patch(tenant, account.client_id, {
      role: 'Edit',
      grants: [
        { tag: 'ferns', permission: 'edit' },
        { tag: 'cacti', permission: 'edit' },
      ],
      actor: 'a',
    });
    const principal = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: account.name,
      client_id: account.client_id,
      role: 'Edit',
      grants: [
        { tag: 'cacti', permission: 'edit' },
        { tag: 'ferns', permission: 'edit' },
      ],
      created_at: account.created_at,
      created_by: 'admin@example.test',
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
      receive_signals: false,
      secret_expires_at: null,
      quota: null,
      revision: 2,
    });
    expect(principal.body).toEqual({ tenant, sub: account.client_id, version: 2, deleted: false });
    expect(await waitForEvents(account.client_id, 1)).toEqual([
      { tenant, sub: account.client_id, version: 2, deleted: false },
    ]);
  });

  test.each([
    ['Account Admin as role', { role: 'Account Admin' }, 'role must be "View" or "Edit"'],
    [
      'neither role nor grants',
      { actor: 'a' },
      'role, grants, dpop_bound_access_tokens or receive_signals is required',
    ],
    [
      'a grant with another permission',
      { grants: [{ tag: 'x', permission: 'delete' }] },
      'grants.0.permission: permission must be "edit"',
    ],
    [
      'a repeated tag',
      {
        grants: [
          { tag: 'x', permission: 'edit' },
          { tag: 'x', permission: 'edit' },
        ],
      },
      'grants must not repeat a tag',
    ],
    [
      'a tag of 65 characters',
      { grants: [{ tag: 'x'.repeat(65), permission: 'edit' }] },
      'grants.0.tag: tag must be at most 64 characters',
    ],
    [
      'a tag with a right-to-left override',
      { grants: [{ tag: 'fern\u202Es', permission: 'edit' }] },
      'grants.0.tag: tag must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    ['grants that are not an array', { grants: 'x' }, 'grants must be an array'],
  ])('When a change has %s, then 400 and nothing changes', async (_name, body, message) => {
    const account = await api.createServiceAccount(tenant);

    const res = await api.patch(tenant, account.client_id, body);
    const after = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message });
    expect(after.body).toEqual({ tenant, sub: account.client_id, version: 1, deleted: false });
  });

  test('When a secret is reset, then a new secret is returned once, the version is bumped and the event is published', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await api.reset(tenant, account.client_id);
    const withoutBody = await request(h.internalUrl)
      .post(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/reset-secret`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      ...account,
      revision: account.revision + 1,
      secret: expect.stringMatching(SECRET),
    });
    expect(res.body.secret).not.toBe(account.secret);
    expect(withoutBody.status).toBe(200);
    expect(await waitForEvents(account.client_id, 2)).toEqual([
      { tenant, sub: account.client_id, version: 2, deleted: false },
      { tenant, sub: account.client_id, version: 3, deleted: false },
    ]);
  });

  test('When an account is deleted, then it is gone, the principal is marked deleted and the event says so', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await api.remove(tenant, account.client_id);
    const get = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
      .set('authorization', AUTH);
    const principal = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH);
    const again = await api.remove(tenant, account.client_id);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(get.status).toBe(404);
    expect(principal.body).toEqual({ tenant, sub: account.client_id, version: 2, deleted: true });
    expect(again.status).toBe(404);
    expect(await waitForEvents(account.client_id, 1)).toEqual([
      { tenant, sub: account.client_id, version: 2, deleted: true },
    ]);
  });

  test('When a method is not supported on a route, then 405 with Allow naming HEAD too, which every GET route serves', async () => {
    const res = await request(h.internalUrl)
      .put(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH)
      .send({});
    const head = await request(h.internalUrl)
      .head(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH);

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body).toEqual({
      error: 405,
      message: 'Method PUT is not allowed here; allowed: GET, HEAD, POST',
    });
    expect(head.status).toBe(200);
  });
});
