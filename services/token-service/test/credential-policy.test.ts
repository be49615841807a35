import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually } from '@plant/test-kit';
import request from 'supertest';
import { isSecretExpired, secretExpiresAt } from '../src/credentials/secret-expiry.js';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { AUTH, internal } from './helpers/internal-client.js';

/** Two replicas on the same Postgres and Redis, each with its own credential cache. */
let a: Harness;
let b: Harness;

beforeAll(async () => {
  [a, b] = await Promise.all([startHarness(), startHarness()]);
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const DAY_MS = 86_400_000;

function grant(h: Harness, tenant: string, clientId: string, secret: string, ip = uniqueIp()) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', ip)
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

function setPolicy(h: Harness, tenant: string, body: object) {
  return request(h.internalUrl)
    .patch(`/internal/v1/realms/${tenant}/credential-policy`)
    .set('authorization', AUTH)
    .send({ ...body, actor: 'admin@example.test' });
}

function setQuota(h: Harness, tenant: string, clientId: string, quota: object | null) {
  return request(h.internalUrl)
    .put(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/quota`)
    .set('authorization', AUTH)
    .send({ quota, actor: 'admin@example.test' });
}

/** Backdates the account's secret (as if made `ageMs` ago); the cache learns of it with the next policy change. */
async function ageSecret(h: Harness, clientId: string, ageMs: number): Promise<Date> {
  const createdAt = new Date(Date.now() - ageMs);
  await h.service
    .db('service_account_secrets')
    .where({ sub: clientId })
    .update({ created_at: createdAt });
  // The account row mirrors its newest secret (for replicas of the previous release).
  await h.service
    .db('service_accounts')
    .where({ sub: clientId })
    .update({ secret_created_at: createdAt });
  return createdAt;
}

describe('secret expiry', () => {
  test('When the expiry instant is reached, then the secret is expired from that millisecond on', () => {
    const created = new Date('2026-01-01T00:00:00.000Z');
    const expiry = secretExpiresAt(created, 30)!;
    expect(expiry.toISOString()).toBe('2026-01-31T00:00:00.000Z');
    expect(isSecretExpired(created, 30, expiry.getTime() - 1)).toBe(false);
    expect(isSecretExpired(created, 30, expiry.getTime())).toBe(true);
    expect(isSecretExpired(created, null, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  test('When a maximum age is set, then existing secrets count from their creation: one just inside works, one just past is invalid_client saying it expired, on every replica', async () => {
    const { tenant } = await a.createTenant();
    const young = await internal(a).createServiceAccount(tenant);
    const old = await internal(a).createServiceAccount(tenant);
    // Both replicas cache both credentials under no maximum.
    for (const h of [a, b])
      for (const acc of [young, old]) await grant(h, tenant, acc.client_id, acc.secret).expect(200);
    await ageSecret(a, young.client_id, 30 * DAY_MS - 60_000);
    const oldCreated = await ageSecret(a, old.client_id, 30 * DAY_MS + 60_000);

    const policy = await setPolicy(a, tenant, { secret_max_age_days: 30 });

    expect(policy.status).toBe(200);
    expect(policy.body).toMatchObject({ secret_max_age_days: 30, leak_response: 'revoke' });
    await grant(a, tenant, young.client_id, young.secret).expect(200);
    const refused = await grant(a, tenant, old.client_id, old.secret);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({
      error: 'invalid_client',
      error_description: `the client secret expired at ${new Date(oldCreated.getTime() + 30 * DAY_MS).toISOString()}; reset it to get a new one`,
    });
    await eventually(
      async () => (await grant(b, tenant, old.client_id, old.secret)).status === 401,
      'replica B refuses the expired secret',
    );
    await grant(b, tenant, young.client_id, young.secret).expect(200);
  });

  test('When a maximum age is set, then the expiry is shown on the account, the list and the credentials, and a reset secret starts a new age', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const createdAt = await ageSecret(a, account.client_id, 40 * DAY_MS);
    await setPolicy(a, tenant, { secret_max_age_days: 10 }).expect(200);
    const expiresAt = new Date(createdAt.getTime() + 10 * DAY_MS).toISOString();

    const one = await request(a.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
      .set('authorization', AUTH);
    const list = await request(a.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH);
    const credentials = await internal(a).credentials(tenant, account.client_id);
    const reset = await internal(a).reset(tenant, account.client_id).expect(200);

    expect(one.body.secret_expires_at).toBe(expiresAt);
    expect(list.body[0].secret_expires_at).toBe(expiresAt);
    expect(credentials.body.secret.expires_at).toBe(expiresAt);
    expect(Date.parse(reset.body.secret_expires_at)).toBeGreaterThan(Date.now() + 9 * DAY_MS);
    await grant(a, tenant, account.client_id, reset.body.secret).expect(200);
    await setPolicy(a, tenant, { secret_max_age_days: null }).expect(200);
    expect(
      (await internal(a).credentials(tenant, account.client_id)).body.secret.expires_at,
    ).toBeNull();
  });

  test('When a policy is out of bounds or names nothing, then 400 and nothing changes', async () => {
    const { tenant } = await a.createTenant();
    const answers = await Promise.all(
      [
        { secret_max_age_days: 0 },
        { secret_max_age_days: 731 },
        { secret_max_age_days: 1.5 },
        { secret_max_age_days: '30' },
        { leak_response: 'ignore' },
        { default_quota: { per_minute: 0, mode: 'enforce' } },
        { default_quota: { per_minute: 10, mode: 'block' } },
        {},
      ].map((body) => setPolicy(a, tenant, body)),
    );
    expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400, 400, 400]);
    const policy = await request(a.internalUrl)
      .get(`/internal/v1/realms/${tenant}/credential-policy`)
      .set('authorization', AUTH);
    expect(policy.body).toEqual({
      secret_max_age_days: null,
      leak_response: 'revoke',
      default_quota: { per_minute: 600, mode: 'off' },
      updated_at: null,
      updated_by: null,
      // Still the defaults' revision: a refused change counts nothing.
      revision: 1,
    });
  });
});

describe('grant quotas', () => {
  test('When a parallel burst hits an enforced quota across two replicas, then exactly the quota is issued and the rest get 429 with Retry-After in the token error shape', async () => {
    const { tenant } = await a.createTenant();
    const runaway = await internal(a).createServiceAccount(tenant);
    const neighbour = await internal(a).createServiceAccount(tenant);
    await setQuota(a, tenant, runaway.client_id, { per_minute: 5, mode: 'enforce' }).expect(200);

    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        grant(i % 2 === 0 ? a : b, tenant, runaway.client_id, runaway.secret),
      ),
    );

    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const refused = burst.find((r) => r.status === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      error: 'too_many_requests',
      error_description:
        'the service account is over its quota of 5 grants per minute; retry later',
    });
    await grant(a, tenant, neighbour.client_id, neighbour.secret).expect(200);
    await grant(b, tenant, neighbour.client_id, neighbour.secret).expect(200);
  });

  test("When an attacker sends wrong secrets for an account, then the account's quota is not spent", async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    await setQuota(a, tenant, account.client_id, { per_minute: 3, mode: 'enforce' }).expect(200);

    const wrong = await Promise.all(
      Array.from({ length: 10 }, () => grant(a, tenant, account.client_id, `${account.secret}x`)),
    );
    const right = await Promise.all(
      Array.from({ length: 3 }, () => grant(a, tenant, account.client_id, account.secret)),
    );

    expect(wrong.every((r) => r.status === 401)).toBe(true);
    expect(right.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await grant(a, tenant, account.client_id, account.secret)).status).toBe(429);
  });

  test('When the quota is in log mode, then every grant is issued, the overage is counted in a metric without the account, and one security event is written per window', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    await setPolicy(a, tenant, { default_quota: { per_minute: 2, mode: 'log' } }).expect(200);

    const grants = await Promise.all(
      Array.from({ length: 6 }, () => grant(a, tenant, account.client_id, account.secret)),
    );

    expect(grants.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const metrics = (await request(a.managementUrl).get('/metrics')).text;
    expect(metrics).toMatch(/grant_quota_checks_total\{mode="log",outcome="over"[^}]*\} 4/);
    expect(metrics).not.toContain(account.client_id);
    await eventually(
      async () =>
        (await a.service.db('user_security_events').where({ target_sub: account.client_id }))
          .length === 1,
      'the quota event is written',
    );
    const [event] = await a.service
      .db('user_security_events')
      .where({ target_sub: account.client_id })
      .select('action', 'details');
    expect(event).toEqual({
      action: 'service_account.quota_exceeded',
      details: { mode: 'log', per_minute: 2 },
    });
  });

  test("When the tenant enforces a quota and one account's own is off, then only the others are held to it, and clearing the override restores the default", async () => {
    const { tenant } = await a.createTenant();
    const exempt = await internal(a).createServiceAccount(tenant);
    const held = await internal(a).createServiceAccount(tenant);
    await setPolicy(a, tenant, { default_quota: { per_minute: 1, mode: 'enforce' } }).expect(200);
    const overridden = await setQuota(a, tenant, exempt.client_id, { per_minute: 1, mode: 'off' });

    expect(overridden.body.quota).toEqual({ per_minute: 1, mode: 'off' });
    for (let i = 0; i < 3; i += 1)
      await grant(a, tenant, exempt.client_id, exempt.secret).expect(200);
    await grant(a, tenant, held.client_id, held.secret).expect(200);
    await grant(a, tenant, held.client_id, held.secret).expect(429);
    const cleared = await setQuota(a, tenant, exempt.client_id, null).expect(200);
    expect(cleared.body.quota).toBeNull();
    // Off, nothing was counted: the default's one grant a minute starts now.
    await grant(a, tenant, exempt.client_id, exempt.secret).expect(200);
    await grant(a, tenant, exempt.client_id, exempt.secret).expect(429);
  });

  test('When a quota body is malformed, then 400; for an unknown account, 404', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const answers = await Promise.all([
      setQuota(a, tenant, account.client_id, { per_minute: 100_001, mode: 'enforce' }),
      setQuota(a, tenant, account.client_id, { per_minute: 5 }),
      request(a.internalUrl)
        .put(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/quota`)
        .set('authorization', AUTH)
        .send({}),
      setQuota(a, tenant, 'sa-00000000000000000000000000000000', null),
    ]);
    expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 404]);
  });
});
