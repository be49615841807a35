/**
 * Optimistic concurrency on a service account, a person, the credential and people policies,
 * an invitation's revocation, and the removal of one's own factor or session (RFC 9110 `ETag` /
 * `If-Match`): the
 * resource answers its revision as a strong ETag, a change with a stale one is 412 and changes
 * nothing, a change without one works as before (the portal), and of a burst of changes sent
 * with the same ETag exactly one wins, whatever route each takes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { USER_PASSWORD, uniqueName } from '@plant/test-kit';
import { type PortalSession, signIn, userAccessToken } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';
import { openApiDocument } from '../src/http/openapi.js';

const p = useSignedInPortal();
let adminToken: string;

beforeAll(async () => {
  adminToken = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, p.acme.admin);
}, 60_000);

const ETAG = /^"v[1-9][0-9]*"$/;

function call(method: string, path: string, body?: unknown, ifMatch?: string) {
  return p.call(undefined, method, path, {
    body,
    headers: {
      authorization: `Bearer ${adminToken}`,
      ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
    },
  });
}

async function etagOf(clientId: string): Promise<string> {
  const res = await call('GET', `/service-accounts/${clientId}`);
  expect(res.status).toBe(200);
  return res.headers.get('etag')!;
}

describe('ETag and If-Match on a service account', () => {
  test('When an account is read, then it answers a strong ETag and no revision field; a change answers a new one', async () => {
    const created = await p.createAccount('etag-read');
    const res = await call('GET', `/service-accounts/${created.client_id}`);
    const body = (await res.json()) as Record<string, unknown>;
    const before = res.headers.get('etag')!;

    const changed = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'Edit' },
      before,
    );

    expect(before).toMatch(ETAG);
    expect(body).not.toHaveProperty('revision');
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toMatch(ETAG);
    expect(changed.headers.get('etag')).not.toBe(before);
    expect(await etagOf(created.client_id!)).toBe(changed.headers.get('etag'));
  });

  test('When a change names a stale ETag, then it is 412 in the Error shape and nothing changed', async () => {
    const created = await p.createAccount('etag-stale');
    const stale = await etagOf(created.client_id!);
    await call('PATCH', `/service-accounts/${created.client_id}`, { role: 'Edit' }, stale);

    const refused = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'View' },
      stale,
    );
    const disable = await call(
      'POST',
      `/service-accounts/${created.client_id}/disable`,
      undefined,
      stale,
    );
    const weak = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'View' },
      `W/${await etagOf(created.client_id!)}`,
    );
    const account = await (await call('GET', `/service-accounts/${created.client_id}`)).json();

    expect(refused.status).toBe(412);
    expect(await refused.json()).toEqual({
      error: 412,
      message: 'The resource changed since the ETag you sent (If-Match): read it again, then retry',
    });
    expect(disable.status).toBe(412);
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches.
    expect(weak.status).toBe(412);
    expect(account).toMatchObject({ role: 'Edit', disabled: false });
  });

  test('When a change sends no If-Match, or *, then it works as before; a malformed one is 400', async () => {
    const created = await p.createAccount('etag-none');

    const portal = await p.asAdminSession('PATCH', `/service-accounts/${created.client_id}`, {
      role: 'Edit',
    });
    const any = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'View' },
      '*',
    );
    const malformed = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'Edit' },
      'v1',
    );
    const unknownTag = await call(
      'PATCH',
      `/service-accounts/${created.client_id}`,
      { role: 'Edit' },
      '"someone-elses-tag"',
    );

    expect(portal.status).toBe(200);
    expect(any.status).toBe(200);
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toBe(400);
    expect(unknownTag.status).toBe(412);
  });

  test('When a burst of changes of one account all send the same ETag, then exactly one is 2xx and the others 412', async () => {
    const created = await p.createAccount('etag-race');
    const etag = await etagOf(created.client_id!);
    const path = `/service-accounts/${created.client_id}`;

    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('PATCH', path, { dpop_bound_access_tokens: i % 2 === 0 }, etag),
      ),
    );

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(11);
  });

  test('When an account was deleted, then a change with the ETag read before is 412, not 404', async () => {
    const created = await p.createAccount('etag-after-delete');
    const etag = await etagOf(created.client_id!);
    const path = `/service-accounts/${created.client_id}`;

    const deleted = await call('DELETE', path, undefined, etag);
    const late = await call('PATCH', path, { role: 'Edit' }, etag);
    const lateReset = await call('POST', `${path}/reset-secret`, undefined, etag);
    const unconditional = await call('PATCH', path, { role: 'Edit' });

    expect([deleted.status, late.status, lateReset.status, unconditional.status]).toEqual([
      204, 412, 412, 404,
    ]);
  });

  test('When changes by different routes race with the same ETag (settings, disable, reset, delete), then exactly one wins', async () => {
    const created = await p.createAccount('etag-race-routes');
    const etag = await etagOf(created.client_id!);
    const path = `/service-accounts/${created.client_id}`;

    const answers = await Promise.all([
      call('PATCH', path, { role: 'Edit' }, etag),
      call('POST', `${path}/disable`, undefined, etag),
      call('PATCH', path, { receive_signals: true }, etag),
      call('POST', `${path}/reset-secret`, undefined, etag),
      call('DELETE', path, undefined, etag),
      call('PATCH', path, { role: 'Edit' }, etag),
    ]);

    const won = answers.filter((a) => a.status >= 200 && a.status < 300);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(5);
  });
});

describe('ETag and If-Match on a person', () => {
  async function personId(): Promise<string> {
    const email = `${uniqueName('etag-person')}@example.test`;
    await p.ts.createUser(p.acme.tenant, 'View', email);
    const list = (await (await call('GET', '/users')).json()) as Array<{
      id: string;
      email: string;
    }>;
    return list.find((u) => u.email === email)!.id;
  }

  test('When a person is read and changed, then each answers a strong ETag; a stale one is 412 and changes nothing', async () => {
    const id = await personId();
    const read = await call('GET', `/users/${id}`);
    const etag = read.headers.get('etag')!;

    const changed = await call('PATCH', `/users/${id}`, { role: 'Edit' }, etag);
    const stale = await call('PATCH', `/users/${id}`, { status: 'disabled' }, etag);
    const staleRemove = await call('DELETE', `/users/${id}`, undefined, etag);
    const after = await call('GET', `/users/${id}`);

    expect(etag).toMatch(ETAG);
    expect(await read.json()).not.toHaveProperty('revision');
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect([stale.status, staleRemove.status]).toEqual([412, 412]);
    expect(await after.json()).toMatchObject({ role: 'Edit', status: 'active' });
  });

  test('When a person was removed, then a change with the ETag read before is 412, not 404', async () => {
    const id = await personId();
    const etag = (await call('GET', `/users/${id}`)).headers.get('etag')!;

    const removed = await call('DELETE', `/users/${id}`, undefined, etag);
    const late = await call('PATCH', `/users/${id}`, { role: 'Edit' }, etag);
    const unconditional = await call('PATCH', `/users/${id}`, { role: 'Edit' });

    expect([removed.status, late.status, unconditional.status]).toEqual([204, 412, 404]);
  });

  test('When a burst of changes of one person all send the same ETag, then exactly one wins', async () => {
    const id = await personId();
    const etag = (await call('GET', `/users/${id}`)).headers.get('etag')!;

    const answers = await Promise.all([
      call('PATCH', `/users/${id}`, { role: 'Edit' }, etag),
      call('PATCH', `/users/${id}`, { status: 'disabled' }, etag),
      call('PATCH', `/users/${id}`, { role: 'Account Admin' }, etag),
      call('DELETE', `/users/${id}`, undefined, etag),
      call('PATCH', `/users/${id}`, { role: 'Edit' }, etag),
    ]);

    expect(answers.filter((a) => a.status >= 200 && a.status < 300)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(4);
  });
});

describe('ETag and If-Match on the credential policy', () => {
  async function policyEtag(): Promise<string> {
    const res = await call('GET', '/settings/credentials');
    expect(res.status).toBe(200);
    return res.headers.get('etag')!;
  }

  test('When the policy is read and changed, then each answers a strong ETag and no revision field; a stale one is 412 and changes nothing; none, or *, works as before; a malformed one is 400', async () => {
    const read = await call('GET', '/settings/credentials');
    const etag = read.headers.get('etag')!;

    const changed = await call('PATCH', '/settings/credentials', { leak_response: 'notify' }, etag);
    const stale = await call('PATCH', '/settings/credentials', { leak_response: 'revoke' }, etag);
    const after = await call('GET', '/settings/credentials');
    const malformed = await call(
      'PATCH',
      '/settings/credentials',
      { leak_response: 'revoke' },
      'v1',
    );
    const any = await call('PATCH', '/settings/credentials', { leak_response: 'notify' }, '*');
    const portal = await p.asAdminSession('PATCH', '/settings/credentials', {
      leak_response: 'revoke',
    });

    expect(etag).toMatch(ETAG);
    expect(await read.json()).not.toHaveProperty('revision');
    expect(changed.status).toBe(200);
    expect(await changed.json()).not.toHaveProperty('revision');
    expect(changed.headers.get('etag')).toMatch(ETAG);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect({ status: stale.status, body: await stale.json() }).toEqual({
      status: 412,
      body: {
        error: 412,
        message:
          'The resource changed since the ETag you sent (If-Match): read it again, then retry',
      },
    });
    expect(after.headers.get('etag')).toBe(changed.headers.get('etag'));
    expect(await after.json()).toMatchObject({ leak_response: 'notify' });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toBe(400);
    expect([any.status, portal.status]).toEqual([200, 200]);
    expect(await policyEtag()).not.toBe(after.headers.get('etag'));
  });

  test('When If-Match is forged (oversized, or a list of tags the policy is not at), then the change is 400 or 412 and the policy is unchanged', async () => {
    const etag = await policyEtag();
    const before = await (await call('GET', '/settings/credentials')).json();

    const oversized = await call(
      'PATCH',
      '/settings/credentials',
      { leak_response: 'notify' },
      `"v1", ${'"v2", '.repeat(300)}"v3"`,
    );
    const others = await call(
      'PATCH',
      '/settings/credentials',
      { leak_response: 'notify' },
      '"v999999", "v0", "x1"',
    );

    expect(oversized.status).toBe(400);
    expect(await oversized.json()).toEqual({ error: 400, message: expect.any(String) });
    expect(others.status).toBe(412);
    expect(await policyEtag()).toBe(etag);
    expect(await (await call('GET', '/settings/credentials')).json()).toEqual(before);
  });

  test('When a burst of policy changes all send the same ETag, then exactly one is 200, the others 412, and the policy is the winner’s', async () => {
    const etag = await policyEtag();

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(
          'PATCH',
          '/settings/credentials',
          { default_quota: { per_minute: 1000 + i, mode: 'off' } },
          etag,
        ),
      ),
    );

    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(9);
    const winner = (await won[0]!.json()) as { default_quota: { per_minute: number } };
    const now = (await (await call('GET', '/settings/credentials')).json()) as {
      default_quota: { per_minute: number };
    };
    expect(now.default_quota).toEqual(winner.default_quota);
    expect(await policyEtag()).toBe(won[0]!.headers.get('etag'));
  });
});

describe('ETag and If-Match on an invitation', () => {
  async function invite(): Promise<{ id: string; etag: string }> {
    const res = await call('POST', '/users', {
      email: `${uniqueName('etag-invite')}@example.test`,
      role: 'View',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { invitation: Record<string, unknown> };
    expect(body.invitation).not.toHaveProperty('revision');
    return { id: String(body.invitation.id), etag: res.headers.get('etag')! };
  }

  async function pendingIds(): Promise<string[]> {
    const list = (await (await call('GET', '/invitations?limit=100')).json()) as Array<{
      id: string;
    }>;
    return list.map((i) => i.id);
  }

  test('When an invitation is made, then it answers its ETag; a revocation naming another is 412 and leaves it pending; with its own it is revoked, and again is 412 (404 without If-Match)', async () => {
    const { id, etag } = await invite();

    const other = await call('DELETE', `/invitations/${id}`, undefined, '"v2"');
    const weak = await call('DELETE', `/invitations/${id}`, undefined, `W/${etag}`);
    const stillPending = await pendingIds();
    const revoked = await call('DELETE', `/invitations/${id}`, undefined, etag);
    const again = await call('DELETE', `/invitations/${id}`, undefined, etag);
    const unconditional = await call('DELETE', `/invitations/${id}`);

    expect(etag).toBe('"v1"');
    expect([other.status, weak.status]).toEqual([412, 412]);
    expect(await other.json()).toEqual({ error: 412, message: expect.any(String) });
    expect(stillPending).toContain(id);
    expect([revoked.status, again.status, unconditional.status]).toEqual([204, 412, 404]);
    expect(await pendingIds()).not.toContain(id);
  });

  test('When a burst of revocations of one invitation all send its ETag, then exactly one is 204 and the others 412', async () => {
    const { id, etag } = await invite();

    const answers = await Promise.all(
      Array.from({ length: 8 }, () => call('DELETE', `/invitations/${id}`, undefined, etag)),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(7);
  });
});

describe('ETag and If-Match on the people policy', () => {
  async function policyEtag(): Promise<string> {
    const res = await call('GET', '/settings/people');
    expect(res.status).toBe(200);
    return res.headers.get('etag')!;
  }
  // Every change keeps the policy off: switching it on would end the sessions of this file's
  // admin, who holds no factor; a change that sets the same value still counts a revision.
  const off = { require_admin_second_factor: false };

  test('When the policy is read and changed, then each answers a strong ETag and no revision field; a stale one is 412; none, or *, works as before; a malformed or forged one is 400 or 412', async () => {
    const read = await call('GET', '/settings/people');
    const etag = read.headers.get('etag')!;

    const changed = await call('PATCH', '/settings/people', off, etag);
    const stale = await call('PATCH', '/settings/people', off, etag);
    const after = await call('GET', '/settings/people');
    const malformed = await call('PATCH', '/settings/people', off, 'v1');
    const oversized = await call('PATCH', '/settings/people', off, '"v1", '.repeat(300));
    const weak = await call('PATCH', '/settings/people', off, `W/${after.headers.get('etag')}`);
    const others = await call('PATCH', '/settings/people', off, '"v999999", "v0", "x1"');
    const unchanged = await policyEtag();
    const any = await call('PATCH', '/settings/people', off, '*');
    const portal = await p.asAdminSession('PATCH', '/settings/people', off);

    expect(etag).toMatch(ETAG);
    expect(await read.json()).toEqual(off);
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual(off);
    expect(changed.headers.get('etag')).toMatch(ETAG);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect({ status: stale.status, body: await stale.json() }).toEqual({
      status: 412,
      body: { error: 412, message: expect.any(String) },
    });
    expect(after.headers.get('etag')).toBe(changed.headers.get('etag'));
    expect([malformed.status, oversized.status]).toEqual([400, 400]);
    expect(await malformed.json()).toEqual({ error: 400, message: expect.any(String) });
    expect([weak.status, others.status]).toEqual([412, 412]);
    expect(unchanged).toBe(after.headers.get('etag'));
    expect([any.status, portal.status]).toEqual([200, 200]);
    expect(await policyEtag()).not.toBe(unchanged);
  });

  test('When a burst of policy changes all send the same ETag, then exactly one is 200 and the others 412', async () => {
    const etag = await policyEtag();

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call('PATCH', '/settings/people', off, etag)),
    );

    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(9);
    expect(await policyEtag()).toBe(won[0]!.headers.get('etag'));
  });
});

describe('If-Match on the removal of one’s own factor', () => {
  /** The token service's schema, to arrange a factor as an enrolment at the realm leaves it. */
  let auth: Knex;
  beforeAll(() => {
    auth = createDatabase({
      connectionString: p.ts.databaseUrl,
      schema: 'auth',
      poolMax: 2,
      applicationName: 'etag-if-match-test',
      logger: createLogger({ name: 'etag-if-match-test', level: 'warn' }),
    });
  });
  afterAll(async () => {
    await auth?.destroy();
  });

  /** A new person of acme, signed in, holding a passkey: what ends their sessions touches no other test. */
  async function personWithFactor(): Promise<{ session: PortalSession; factor: string }> {
    const email = await p.ts.createUser(
      p.acme.tenant,
      'View',
      `${uniqueName('etag-f')}@${p.acme.tenant}.test`,
    );
    const session = await signIn(p.portal.url, p.acme.tenant, { email, password: USER_PASSWORD });
    const sub = ((await (await p.call(session, 'GET', '/me')).json()) as { sub: string }).sub;
    const factor = randomUUID();
    await auth('user_factors').insert({
      id: factor,
      sub,
      realm: p.acme.tenant,
      kind: 'passkey',
      label: 'Passkey',
      credential_id: `cred-${factor}`,
      public_key: Buffer.from('a public key'),
      sign_count: 0,
    });
    return { session, factor };
  }

  const remove = (session: PortalSession, factor: string, ifMatch?: string) =>
    p.call(session, 'DELETE', `/me/factors/${factor}`, {
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });

  test('When a removal names another tag than "v1" (stale, weak, forged), then it is 412 and the factor stays; a malformed one is 400; an unknown factor under If-Match is 412, 404 without', async () => {
    const { session, factor } = await personWithFactor();

    const other = await remove(session, factor, '"v2"');
    const weak = await remove(session, factor, 'W/"v1"');
    const malformed = await remove(session, factor, 'v1');
    const unknown = await remove(session, randomUUID(), '"v1"');
    const unknownPlain = await remove(session, randomUUID());
    const listed = (await (await p.call(session, 'GET', '/me/factors')).json()) as {
      factors: Array<{ id: string }>;
    };
    const removed = await remove(session, factor, '"v1"');

    expect([other.status, weak.status, malformed.status]).toEqual([412, 412, 400]);
    expect(await other.json()).toEqual({ error: 412, message: expect.any(String) });
    expect([unknown.status, unknownPlain.status]).toEqual([412, 404]);
    expect(listed.factors.map((f) => f.id)).toEqual([factor]);
    expect(removed.status).toBe(204);
  });

  test('When a burst of removals of one factor all send "v1", then exactly one is 204 and none other succeeds (412, or 401 once the winner ended the session)', async () => {
    const { session, factor } = await personWithFactor();

    const answers = await Promise.all(
      Array.from({ length: 8 }, () => remove(session, factor, '"v1"')),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 204 && s !== 412 && s !== 401)).toEqual([]);
    const [left] = await auth('user_factors').where({ id: factor }).count({ n: '*' });
    expect(Number(left!.n)).toBe(0);
  });
});

describe('If-Match on the end of one’s own session', () => {
  async function personWithSessions(n: number): Promise<PortalSession[]> {
    const email = await p.ts.createUser(p.acme.tenant, 'View');
    const sessions: PortalSession[] = [];
    for (let i = 0; i < n; i++)
      sessions.push(await signIn(p.portal.url, p.acme.tenant, { email, password: USER_PASSWORD }));
    return sessions;
  }

  async function otherSession(session: PortalSession): Promise<string> {
    const list = (await (await p.call(session, 'GET', '/me/sessions')).json()) as Array<{
      id: string;
      current: boolean;
    }>;
    return list.find((s) => !s.current)!.id;
  }

  const end = (session: PortalSession, id: string, ifMatch?: string) =>
    p.call(session, 'DELETE', `/me/sessions/${id}`, {
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });

  test('When an end names another tag than "v1", then it is 412 and the session lasts; a malformed one is 400; with "v1" it ends, and again is 412 (404 without If-Match)', async () => {
    const [first, second] = await personWithSessions(2);
    const id = await otherSession(first!);

    const other = await end(first!, id, '"v7"');
    const malformed = await end(first!, id, '"v1');
    const stillThere = await p.call(second!, 'GET', '/me');
    const ended = await end(first!, id, '"v1"');
    const again = await end(first!, id, '"v1"');
    const plain = await end(first!, id);

    expect([other.status, malformed.status, stillThere.status]).toEqual([412, 400, 200]);
    expect(await other.json()).toEqual({ error: 412, message: expect.any(String) });
    expect([ended.status, again.status, plain.status]).toEqual([204, 412, 404]);
  });

  test('When a burst of ends of one session all send "v1", then exactly one is 204 and the others 412', async () => {
    const [first] = await personWithSessions(2);
    const id = await otherSession(first!);

    const answers = await Promise.all(Array.from({ length: 8 }, () => end(first!, id, '"v1"')));

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(7);
  });
});

describe('the OpenAPI document', () => {
  test('When the document is generated, then reads of an account, a person and the credential policy name the ETag header, and every change of them (and an invitation’s revocation) takes If-Match and may answer 412', () => {
    const doc = openApiDocument('http://portal.test') as unknown as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: Array<{ name: string; in: string }>;
            responses: Record<string, { headers?: Record<string, unknown> }>;
          }
        >
      >;
    };
    const account = doc.paths['/service-accounts/{client_id}']!;
    const changes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/service-accounts/{client_id}'))
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([method]) => method !== 'get')
          .map(([method, op]) => ({ at: `${method} ${path}`, op })),
      );

    expect(account.get!.responses['200']!.headers).toHaveProperty('ETag');
    expect(account.patch!.responses['200']!.headers).toHaveProperty('ETag');
    expect(changes.length).toBeGreaterThanOrEqual(9);
    const person = doc.paths['/users/{id}']!;
    expect(person.get!.responses['200']!.headers).toHaveProperty('ETag');
    for (const method of ['patch', 'delete'])
      expect(person[method]!.parameters?.some((q) => q.name === 'If-Match')).toBe(true);
    expect(doc.paths['/users/{id}/factors']!.delete!.parameters ?? []).not.toContainEqual(
      expect.objectContaining({ name: 'If-Match' }),
    );
    const people = doc.paths['/settings/people']!;
    expect(people.get!.responses['200']!.headers).toHaveProperty('ETag');
    expect(people.patch!.responses['200']!.headers).toHaveProperty('ETag');
    for (const op of [
      people.patch!,
      doc.paths['/me/factors/{factor_id}']!.delete!,
      doc.paths['/me/sessions/{id}']!.delete!,
    ]) {
      expect(op.parameters?.some((q) => q.in === 'header' && q.name === 'If-Match')).toBe(true);
      expect(op.responses).toHaveProperty('412');
    }
    const policy = doc.paths['/settings/credentials']!;
    expect(policy.get!.responses['200']!.headers).toHaveProperty('ETag');
    expect(policy.patch!.responses['200']!.headers).toHaveProperty('ETag');
    expect(policy.patch!.parameters?.some((q) => q.name === 'If-Match')).toBe(true);
    expect(policy.patch!.responses).toHaveProperty('412');
    expect(doc.paths['/users']!.post!.responses['201']!.headers).toHaveProperty('ETag');
    const revoke = doc.paths['/invitations/{id}']!.delete!;
    expect(revoke.parameters?.some((q) => q.name === 'If-Match')).toBe(true);
    expect(revoke.responses).toHaveProperty('412');
    for (const { at, op } of changes) {
      expect({
        at,
        ifMatch: op.parameters?.some((q) => q.in === 'header' && q.name === 'If-Match'),
      }).toEqual({ at, ifMatch: true });
      expect({ at, has412: '412' in op.responses }).toEqual({ at, has412: true });
    }
  });
});
