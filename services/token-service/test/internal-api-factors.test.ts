import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { StaleFactorGeneration } from '../src/platform/errors.js';
import { startHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { AUTH } from './helpers/internal-client.js';

/**
 * The internal API of a person's second factors and the realm's policy, as account-admin calls
 * it: list, remove one, reset all (the person's version moves), get and set the policy; and
 * the attacker's side: another realm's person or factor, ids that are not ids, bodies that are
 * not the shape, and a resource server's credential.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

const api = () => request(h.internalUrl);

/** Arrange: a passkey row and recovery codes for the person (as an enrolment leaves them). */
async function withFactors(tenant: string, sub: string): Promise<string> {
  const id = randomUUID();
  await h.service.identity.userFactors.addPasskey(
    tenant,
    sub,
    {
      id,
      label: 'Passkey',
      credentialId: `cred-${id}`,
      publicKey: Buffer.from('a public key'),
      signCount: 0,
      transports: ['internal'],
      aaguid: '00000000-0000-0000-0000-000000000000',
      backedUp: false,
    },
    { actorSub: sub, targetSub: sub, details: { kind: 'passkey' } },
  );
  await h.service.identity.userFactors.replaceRecoveryCodes(tenant, sub, ['d1', 'd2'], {
    actorSub: sub,
    targetSub: sub,
  });
  return id;
}

describe('internal API: second factors', () => {
  test("When account-admin lists a person's factors, then each has id, kind, label and times, with the recovery codes left, and never a key", async () => {
    const { tenant, adminId } = await h.createTenant();
    const id = await withFactors(tenant, adminId);

    const res = await api()
      .get(`/internal/v1/realms/${tenant}/users/${adminId}/factors`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      factors: [
        {
          id,
          kind: 'passkey',
          label: 'Passkey',
          created_at: expect.any(String),
          last_used_at: expect.any(String),
        },
      ],
      recovery_codes_left: 2,
    });
  });

  test('When one factor is removed, then it is gone, the event names the actor, and the last factor takes the recovery codes with it', async () => {
    const { tenant, adminId } = await h.createTenant();
    const id = await withFactors(tenant, adminId);

    const res = await api()
      .delete(`/internal/v1/realms/${tenant}/users/${adminId}/factors/${id}`)
      .set('authorization', AUTH)
      .send({ actor: 'someone@example.test' });
    const again = await api()
      .delete(`/internal/v1/realms/${tenant}/users/${adminId}/factors/${id}`)
      .set('authorization', AUTH);
    const list = await api()
      .get(`/internal/v1/realms/${tenant}/users/${adminId}/factors`)
      .set('authorization', AUTH);

    expect(res.status).toBe(204);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 404, message: 'Factor not found' });
    expect(list.body).toEqual({ factors: [], recovery_codes_left: 0 });
    const events = await h.service
      .db('user_security_events')
      .where({ realm: tenant, action: 'factor.remove' })
      .select('actor_sub', 'target_sub', 'details');
    expect(events).toEqual([
      { actor_sub: 'someone@example.test', target_sub: adminId, details: { factor_id: id } },
    ]);
  });

  test("When the factors are reset, then every factor and code goes and the person's token version moves", async () => {
    const { tenant, adminId } = await h.createTenant();
    await withFactors(tenant, adminId);
    await withFactors(tenant, adminId);
    const before = await h.service.db('principals').where({ sub: adminId }).first('token_version');

    const res = await api()
      .delete(`/internal/v1/realms/${tenant}/users/${adminId}/factors`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ removed: 2 });
    const after = await h.service.db('principals').where({ sub: adminId }).first('token_version');
    expect(Number(after.token_version)).toBe(Number(before.token_version) + 1);
    expect(await h.service.db('user_recovery_codes').where({ sub: adminId })).toEqual([]);
  });

  test("When the factors are reset, then the person's factor generation moves, their realm sessions go, and an enrolment begun before the reset is refused", async () => {
    const { tenant, adminId } = await h.createTenant();
    await withFactors(tenant, adminId);
    const begun = (await h.service.identity.userFactors.person(tenant, adminId))!.factorGeneration;
    // The realm's sign-in session of the person, as oidc-provider stores it.
    await h.service.identity.oidcPayloads.upsert(
      tenant,
      'Session',
      `session-of-${adminId}`,
      { accountId: adminId, uid: randomUUID() },
      3600,
    );

    const res = await api()
      .delete(`/internal/v1/realms/${tenant}/users/${adminId}/factors`)
      .set('authorization', AUTH);
    const late = h.service.identity.userFactors.addPasskey(
      tenant,
      adminId,
      {
        id: randomUUID(),
        label: 'Passkey',
        credentialId: `cred-${randomUUID()}`,
        publicKey: Buffer.from('the holder of the old session'),
        signCount: 0,
        transports: ['internal'],
        aaguid: '00000000-0000-0000-0000-000000000000',
        backedUp: false,
        generation: begun,
      },
      { actorSub: adminId, targetSub: adminId },
    );

    expect(res.status).toBe(200);
    await expect(late).rejects.toBeInstanceOf(StaleFactorGeneration);
    const person = (await h.service.identity.userFactors.person(tenant, adminId))!;
    expect({ generation: person.factorGeneration, passkeys: person.passkeys }).toEqual({
      generation: begun + 1,
      passkeys: 0,
    });
    const sessions = await h.service
      .db('oidc_payloads')
      .where({ realm: tenant, model: 'Session' })
      .whereRaw("payload->>'accountId' = ?", [adminId]);
    expect(sessions).toEqual([]);
  });

  test("When another realm's person, another person's factor or an id that is no id is named, then 404 and nothing changes", async () => {
    const a = await h.createTenant();
    const b = await h.createTenant();
    const factor = await withFactors(a.tenant, a.adminId);
    const user = await h.createUser(a.tenant, 'View');

    const answers = await Promise.all([
      api()
        .get(`/internal/v1/realms/${b.tenant}/users/${a.adminId}/factors`)
        .set('authorization', AUTH),
      api()
        .delete(`/internal/v1/realms/${b.tenant}/users/${a.adminId}/factors`)
        .set('authorization', AUTH),
      api()
        .delete(`/internal/v1/realms/${b.tenant}/users/${a.adminId}/factors/${factor}`)
        .set('authorization', AUTH),
      api()
        .delete(`/internal/v1/realms/${a.tenant}/users/${user.id}/factors/${factor}`)
        .set('authorization', AUTH),
      api()
        .delete(`/internal/v1/realms/${a.tenant}/users/${a.adminId}/factors/not-a-uuid`)
        .set('authorization', AUTH),
      api().get(`/internal/v1/realms/${a.tenant}/users/nobody/factors`).set('authorization', AUTH),
    ]);

    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    const list = await api()
      .get(`/internal/v1/realms/${a.tenant}/users/${a.adminId}/factors`)
      .set('authorization', AUTH);
    expect(list.body.factors).toHaveLength(1);
  });

  test("When a resource server's credential asks for factors or the policy, then 403", async () => {
    const { tenant, adminId } = await h.createTenant();
    const rs = `Bearer ${TEST_ENV.RESOURCE_SERVER_TOKENS.split(',')[0]}`;

    const answers = await Promise.all([
      api().get(`/internal/v1/realms/${tenant}/users/${adminId}/factors`).set('authorization', rs),
      api()
        .delete(`/internal/v1/realms/${tenant}/users/${adminId}/factors`)
        .set('authorization', rs),
      api()
        .put(`/internal/v1/realms/${tenant}/factor-policy`)
        .set('authorization', rs)
        .send({ require_admin_factor: false }),
    ]);

    expect(answers.map((r) => r.status)).toEqual([403, 403, 403]);
  });
});

describe("internal API: the realm's policy", () => {
  test('When the policy is read and set, then it answers require_admin_factor and its revision, counted up, and records the change; a bad body is 400', async () => {
    const { tenant } = await h.createTenant(undefined, { requireAdminFactor: true });

    const read = await api()
      .get(`/internal/v1/realms/${tenant}/factor-policy`)
      .set('authorization', AUTH);
    const set = await api()
      .put(`/internal/v1/realms/${tenant}/factor-policy`)
      .set('authorization', AUTH)
      .send({ require_admin_factor: false, actor: 'owner@example.test' });
    const bad = await api()
      .put(`/internal/v1/realms/${tenant}/factor-policy`)
      .set('authorization', AUTH)
      .send({ require_admin_factor: 'no' });
    const unknown = await api()
      .get('/internal/v1/realms/no-such-realm-here/factor-policy')
      .set('authorization', AUTH);

    // The revision counts every change (account-admin's ETag on /settings/people).
    expect(read.body).toEqual({ require_admin_factor: true, revision: 1 });
    expect(set.body).toEqual({ require_admin_factor: false, revision: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 400,
      message: expect.stringContaining('require_admin_factor'),
    });
    expect(unknown.status).toBe(404);
    const events = await h.service
      .db('user_security_events')
      .where({ realm: tenant, action: 'tenant.policy_change' })
      .select('actor_sub', 'details');
    expect(events).toEqual([
      { actor_sub: 'owner@example.test', details: { require_admin_factor: false } },
    ]);
  });
});
