/**
 * Second factors and the people policy through the API (/api/v1/me/factors,
 * /api/v1/users/{id}/factors, /api/v1/settings/people) against the real token service: what a
 * person sees and removes of their own, what an Account Admin sees, resets and sets, each
 * change audited; and the attacker's side: another person's factor, another tenant's person,
 * ids that are not ids, a View user, bodies that are not the shape.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { eventually, USER_PASSWORD, uniqueName } from '@plant/test-kit';
import {
  CookieJar,
  sessionOf,
  signIn,
  type PortalSession,
  type TestUser,
} from './helpers/browser-client.js';
import { walk } from './helpers/factor-sign-in.js';
import { arraySchemaErrors } from './helpers/openapi-check.js';
import { createTenant } from './helpers/platform.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
/** The token service's schema, to arrange factors as an enrolment at the realm leaves them. */
let auth: Knex;
let viewer: PortalSession;
let adminSub: string;

async function subOf(session: PortalSession): Promise<string> {
  const me = await p.call(session, 'GET', '/me');
  return ((await me.json()) as { sub: string }).sub;
}

beforeAll(async () => {
  auth = createDatabase({
    connectionString: p.ts.databaseUrl,
    schema: 'auth',
    poolMax: 2,
    applicationName: 'people-factors-test',
    logger: createLogger({ name: 'people-factors-test', level: 'warn' }),
  });
  viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
  adminSub = await subOf(p.admin);
}, 60_000);

afterAll(async () => {
  await auth?.destroy();
});

/** Arrange: a passkey of the person, as an enrolment at the realm leaves it. */
async function passkeyOf(tenant: string, sub: string): Promise<string> {
  const id = randomUUID();
  await auth('user_factors').insert({
    id,
    sub,
    realm: tenant,
    kind: 'passkey',
    label: 'Passkey',
    credential_id: `cred-${id}`,
    public_key: Buffer.from('a public key'),
    sign_count: 0,
  });
  return id;
}

const json = async (res: Response) => ({ status: res.status, body: await res.json() });

/** A new person of acme, signed in: their own session, so what ends it touches no other test. */
async function newPerson() {
  const user: TestUser = {
    email: await p.ts.createUser(p.acme.tenant, 'View', `${uniqueName('f')}@${p.acme.tenant}.test`),
    password: USER_PASSWORD,
  };
  const session = await signIn(p.portal.url, p.acme.tenant, user);
  return { user, session, sub: await subOf(session) };
}

describe('my factors', () => {
  test('When a person lists and removes a factor of their own, then the list shows it without a key, it goes, the removal is audited, and their session ends (a factor taken away ends every session)', async () => {
    const person = await newPerson();
    const id = await passkeyOf(p.acme.tenant, person.sub);

    const listed = await json(await p.call(person.session, 'GET', '/me/factors'));
    const removed = await p.call(person.session, 'DELETE', `/me/factors/${id}`);
    const ended = await p.call(person.session, 'GET', '/me/factors');
    const after = await json(await p.asAdminSession('GET', `/users/${person.sub}/factors`));

    expect(listed).toEqual({
      status: 200,
      body: {
        factors: [{ id, kind: 'passkey', label: 'Passkey', created_at: ISO, last_used_at: null }],
        recovery_codes_left: 0,
      },
    });
    expect(removed.status).toBe(204);
    expect(ended.status).toBe(401);
    expect(after.body).toEqual({ factors: [], recovery_codes_left: 0 });
    const [event] = (await p.auditEvents()).filter((e) => e.action === 'factor.remove');
    expect(event).toMatchObject({
      actor_email: person.user.email,
      client_id: person.sub,
      details: { factor_id: id },
    });
    expect(arraySchemaErrors('AuditEvent', [event])).toEqual([]);
  });

  test("When a person names another person's factor or an id that is no id, then 404 in the Error shape and the factor stays", async () => {
    const adminFactor = await passkeyOf(p.acme.tenant, adminSub);

    const other = await json(await p.call(viewer, 'DELETE', `/me/factors/${adminFactor}`));
    const junk = await json(await p.call(viewer, 'DELETE', '/me/factors/not-a-uuid'));

    expect(other).toEqual({ status: 404, body: { error: 404, message: 'Factor not found' } });
    expect(junk).toEqual({ status: 404, body: { error: 404, message: 'Factor not found' } });
    const left = await json(await p.asAdminSession('GET', '/me/factors'));
    expect(left.body.factors.map((f: { id: string }) => f.id)).toContain(adminFactor);
  });
});

describe("an Account Admin and other people's factors", () => {
  test("When the admin resets a person's factors, then they are gone, the answer counts them, the reset is audited, and the person's session ends", async () => {
    const person = await newPerson();
    await passkeyOf(p.acme.tenant, person.sub);
    await passkeyOf(p.acme.tenant, person.sub);

    const listed = await json(await p.asAdminSession('GET', `/users/${person.sub}/factors`));
    const reset = await json(await p.asAdminSession('DELETE', `/users/${person.sub}/factors`));
    const after = await json(await p.asAdminSession('GET', `/users/${person.sub}/factors`));
    const ended = await p.call(person.session, 'GET', '/me');

    expect(listed.body.factors).toHaveLength(2);
    expect(reset).toEqual({ status: 200, body: { removed: 2 } });
    expect(after.body.factors).toEqual([]);
    expect(ended.status).toBe(401);
    const [event] = (await p.auditEvents()).filter((e) => e.action === 'user.factors_reset');
    expect(event).toMatchObject({
      actor_email: p.acme.admin.email,
      client_id: person.sub,
      details: { removed: 2 },
    });
  });

  test('When the admin resets a person who holds no factor and no recovery code, then 409, nothing is audited and their session goes on', async () => {
    const person = await newPerson();
    const before = (await p.auditEvents()).filter((e) => e.action === 'user.factors_reset').length;

    const reset = await json(await p.asAdminSession('DELETE', `/users/${person.sub}/factors`));

    expect(reset).toEqual({
      status: 409,
      body: {
        error: 409,
        message: 'This person has no second factor and no recovery code to reset',
      },
    });
    const after = (await p.auditEvents()).filter((e) => e.action === 'user.factors_reset').length;
    expect(after).toBe(before);
    expect((await p.call(person.session, 'GET', '/me')).status).toBe(200);
  });

  test("When a View user asks for another person's factors, their reset or the policy, then 403", async () => {
    const answers = await Promise.all([
      p.call(viewer, 'GET', `/users/${adminSub}/factors`),
      p.call(viewer, 'DELETE', `/users/${adminSub}/factors`),
      p.call(viewer, 'GET', '/settings/people'),
      p.call(viewer, 'PATCH', '/settings/people', { body: { require_admin_second_factor: false } }),
    ]);

    expect(answers.map((r) => r.status)).toEqual([403, 403, 403, 403]);
  });

  test("When the admin names another tenant's person or an id that is no id, then 404 and nothing changes there", async () => {
    const other = await createTenant(p.ts);
    const otherAdmin = await signIn(p.portal.url, other.tenant, other.admin);
    const otherSub = await subOf(otherAdmin);
    await passkeyOf(other.tenant, otherSub);

    const cross = await p.asAdminSession('DELETE', `/users/${otherSub}/factors`);
    const junk = await json(await p.asAdminSession('GET', '/users/robert%27);drop/factors'));

    expect(cross.status).toBe(404);
    expect(junk).toEqual({ status: 404, body: { error: 404, message: 'User not found' } });
    const kept = await json(await p.call(otherAdmin, 'GET', '/me/factors'));
    expect(kept.body.factors).toHaveLength(1);
  });
});

describe('the people policy', () => {
  test('When an admin without a factor reads and turns on the policy, then it answers require_admin_second_factor and the change is audited, a bad body is 400, and their own session ends: they enrol at their next sign-in', async () => {
    // A tenant of its own: switching the policy on ends every session of an admin without a factor.
    const own = await createTenant(p.ts);
    const user = own.admin;
    const session = await signIn(p.portal.url, own.tenant, user);
    const before = await json(await p.call(session, 'GET', '/settings/people'));
    const wrongType = await p.call(session, 'PATCH', '/settings/people', {
      body: { require_admin_second_factor: 'yes' },
    });
    const extra = await p.call(session, 'PATCH', '/settings/people', {
      body: { require_admin_second_factor: true, role: 'View' },
    });
    const set = await json(
      await p.call(session, 'PATCH', '/settings/people', {
        body: { require_admin_second_factor: true },
      }),
    );
    // The policy reaches the session when its replica hears the version bump (the next request after it).
    await eventually(
      async () => (await p.call(session, 'GET', '/settings/people')).status === 401,
      'the session of the admin without a factor ends',
    );
    const jar = new CookieJar();
    const again = await walk(jar, p.portal.url, `${p.portal.url}/login?tenant=${own.tenant}`, {
      user,
      enrol: true,
    });
    const enrolled = sessionOf(jar, p.portal.url);
    const read = await json(await p.call(enrolled, 'GET', '/settings/people'));

    expect(before).toEqual({ status: 200, body: { require_admin_second_factor: false } });
    expect([wrongType.status, extra.status]).toEqual([400, 400]);
    expect(set).toEqual({ status: 200, body: { require_admin_second_factor: true } });
    expect(again.passed).toEqual(['password', 'enrol', 'codes']);
    expect(read.body).toEqual({ require_admin_second_factor: true });
    const [event] = (await p.auditEvents(enrolled)).filter(
      (e) => e.action === 'tenant.policy_change',
    );
    expect(event).toMatchObject({
      actor_email: user.email,
      details: { require_admin_second_factor: true },
    });
    await p.call(enrolled, 'PATCH', '/settings/people', {
      body: { require_admin_second_factor: false },
    });
  });
});
