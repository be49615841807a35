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
import { signIn, type PortalSession } from './helpers/browser-client.js';
import { arraySchemaErrors } from './helpers/openapi-check.js';
import { createTenant } from './helpers/platform.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
/** The token service's schema, to arrange factors as an enrolment at the realm leaves them. */
let auth: Knex;
let viewer: PortalSession;
let adminSub: string;
let viewerSub: string;

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
  [adminSub, viewerSub] = await Promise.all([subOf(p.admin), subOf(viewer)]);
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

describe('my factors', () => {
  test('When a person lists and removes a factor of their own, then the list shows it without a key, it goes, and the removal is audited', async () => {
    const id = await passkeyOf(p.acme.tenant, viewerSub);

    const listed = await json(await p.call(viewer, 'GET', '/me/factors'));
    const removed = await p.call(viewer, 'DELETE', `/me/factors/${id}`);
    const after = await json(await p.call(viewer, 'GET', '/me/factors'));

    expect(listed).toEqual({
      status: 200,
      body: {
        factors: [{ id, kind: 'passkey', label: 'Passkey', created_at: ISO, last_used_at: null }],
        recovery_codes_left: 0,
      },
    });
    expect(removed.status).toBe(204);
    expect(after.body).toEqual({ factors: [], recovery_codes_left: 0 });
    const [event] = (await p.auditEvents()).filter((e) => e.action === 'factor.remove');
    expect(event).toMatchObject({
      actor_email: p.acme.viewer.email,
      client_id: viewerSub,
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
  test("When the admin resets a person's factors, then they are gone, the answer counts them, and the reset is audited", async () => {
    await passkeyOf(p.acme.tenant, viewerSub);
    await passkeyOf(p.acme.tenant, viewerSub);

    const listed = await json(await p.asAdminSession('GET', `/users/${viewerSub}/factors`));
    const reset = await json(await p.asAdminSession('DELETE', `/users/${viewerSub}/factors`));
    const after = await json(await p.asAdminSession('GET', `/users/${viewerSub}/factors`));

    expect(listed.body.factors).toHaveLength(2);
    expect(reset).toEqual({ status: 200, body: { removed: 2 } });
    expect(after.body.factors).toEqual([]);
    const [event] = (await p.auditEvents()).filter((e) => e.action === 'user.factors_reset');
    expect(event).toMatchObject({
      actor_email: p.acme.admin.email,
      client_id: viewerSub,
      details: { removed: 2 },
    });
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
  test('When the admin reads and turns on the policy, then it answers require_admin_second_factor and the change is audited; a bad body is 400', async () => {
    const before = await json(await p.asAdminSession('GET', '/settings/people'));
    const set = await json(
      await p.asAdminSession('PATCH', '/settings/people', { require_admin_second_factor: true }),
    );
    const read = await json(await p.asAdminSession('GET', '/settings/people'));
    const wrongType = await p.asAdminSession('PATCH', '/settings/people', {
      require_admin_second_factor: 'yes',
    });
    const extra = await p.asAdminSession('PATCH', '/settings/people', {
      require_admin_second_factor: true,
      role: 'View',
    });

    expect(before).toEqual({ status: 200, body: { require_admin_second_factor: false } });
    expect(set).toEqual({ status: 200, body: { require_admin_second_factor: true } });
    expect(read.body).toEqual({ require_admin_second_factor: true });
    expect([wrongType.status, extra.status]).toEqual([400, 400]);
    const [event] = (await p.auditEvents()).filter((e) => e.action === 'tenant.policy_change');
    expect(event).toMatchObject({
      actor_email: p.acme.admin.email,
      details: { require_admin_second_factor: true },
    });
    await p.asAdminSession('PATCH', '/settings/people', { require_admin_second_factor: false });
  });
});
