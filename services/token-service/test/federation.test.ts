import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startWorkloadIssuer, type WorkloadIssuer } from '@plant/test-kit';
import { decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import { sendAssertion } from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { verifyToken } from './helpers/token-client.js';
import { FEDERATION_TEST_ENV, trustedWorkload, workloadGrant } from './helpers/workload-client.js';

let h: Harness;
let tenant: string;
let cluster: WorkloadIssuer;

useHarness(
  (started, first) => {
    h = started;
    tenant = first;
  },
  { ...FEDERATION_TEST_ENV, FEDERATION_MAX_ISSUERS_PER_TENANT: '3' },
);

beforeAll(async () => {
  cluster = await startWorkloadIssuer();
});

afterAll(() => cluster.close());

const refused = { error: 'invalid_client', error_description: 'client authentication failed' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('trusted workloads (federation)', () => {
  test("When a workload presents its platform's token as the client assertion, then it gets the service account's token, and the trust's last-used time is set", async () => {
    const workload = await trustedWorkload(h, tenant, cluster);

    const res = await workloadGrant(h, tenant, workload).expect(200);
    await h.service.usage.flush();

    expect(await verifyToken(h, res.body.access_token, tenant)).toMatchObject({
      sub: workload.account.client_id,
      client_id: workload.account.client_id,
      role: 'View',
      ver: 1,
    });
    const trust = (await internal(h).credentials(tenant, workload.account.client_id).expect(200))
      .body.trusts[0];
    expect(trust).toMatchObject({
      id: workload.trustId,
      issuer: cluster.issuer,
      subject: workload.subject,
      audience: h.issuer(tenant),
      last_used_at: expect.any(String),
    });
  });

  test('When the same platform token is presented again, then it works again (platform tokens are reused until their platform renews them)', async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    const token = cluster.mint({ subject: workload.subject, audience: workload.audience });

    await sendAssertion(h, tenant, workload.account.client_id, token).expect(200);
    await sendAssertion(h, tenant, workload.account.client_id, token).expect(200);
  });

  const wrong: Array<[string, Record<string, unknown>]> = [
    [
      'another workload of the same platform (subject does not match)',
      { sub: 'system:serviceaccount:jobs:intruder' },
    ],
    ['another audience', { aud: 'https://some-other-service.example' }],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 120 }],
    ['a token with no exp', { exp: undefined }],
    ['a token not yet valid', { nbf: Math.floor(Date.now() / 1000) + 600 }],
  ];
  test.each(wrong)(
    'When the workload presents %s, then 401 invalid_client',
    async (_case, claims) => {
      const workload = await trustedWorkload(h, tenant, cluster);

      const res = await workloadGrant(h, tenant, workload, claims).expect(401);

      expect(res.body).toEqual(refused);
      await internal(h).remove(tenant, workload.account.client_id).expect(204);
    },
  );

  test('When a token of an issuer the account does not trust is presented, then 401, and that issuer is never fetched', async () => {
    const stranger = await startWorkloadIssuer();
    try {
      const workload = await trustedWorkload(h, tenant, cluster);
      const token = stranger.mint({ subject: workload.subject, audience: workload.audience });

      await sendAssertion(h, tenant, workload.account.client_id, token).expect(401);

      expect(stranger.requests()).toEqual({ discovery: 0, jwks: 0 });
    } finally {
      await stranger.close();
    }
  });

  test('When tokens signed by a key the issuer does not publish arrive at once, then each is refused and they share one fetch of the JWKS', async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    await workloadGrant(h, tenant, workload).expect(200);
    await sleep(1100);
    const before = cluster.requests().jwks;

    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        sendAssertion(
          h,
          tenant,
          workload.account.client_id,
          cluster.mintWithUnpublishedKey({
            subject: workload.subject,
            audience: workload.audience,
          }),
        ),
      ),
    );

    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(401));
    expect(cluster.requests().jwks - before).toBe(1);
  });

  test('When the issuer rotates its key, then the first token with the new kid fetches the JWKS again and works', async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    await workloadGrant(h, tenant, workload).expect(200);
    await sleep(1100);

    cluster.rotateKey();
    const res = await workloadGrant(h, tenant, workload);

    expect(res.status).toBe(200);
  });

  test("When another tenant's account presents a workload token trusted only here, or this account's token is sent to another realm, then 401 both ways", async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    const { tenant: other } = await h.createTenant();
    const otherAccount = await internal(h).createServiceAccount(other);
    const token = cluster.mint({ subject: workload.subject, audience: workload.audience });

    await sendAssertion(h, other, otherAccount.client_id, token).expect(401);
    await sendAssertion(h, other, workload.account.client_id, token).expect(401);
    const sameTenantOther = await internal(h).createServiceAccount(tenant);
    await sendAssertion(h, tenant, sameTenantOther.client_id, token).expect(401);
  });

  test('When a trust is removed, then the workload is refused and exactly the tokens it obtained are revoked (its credential named, the version kept)', async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    const before = await workloadGrant(h, tenant, workload).expect(200);

    await internal(h).removeTrust(tenant, workload.account.client_id, workload.trustId).expect(204);

    await workloadGrant(h, tenant, workload).expect(401);
    expect((await verifyToken(h, before.body.access_token, tenant)).ver).toBe(1);
    const account = await internal(h)
      .raw.get(`/internal/v1/realms/${tenant}/principals/${workload.account.client_id}`)
      .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`)
      .expect(200);
    expect(account.body).toEqual({
      tenant,
      sub: workload.account.client_id,
      version: 1,
      deleted: false,
      credentials: [`trust:${workload.trustId}`],
    });
    expect(decodeJwt(before.body.access_token).payload.cred).toBe(`trust:${workload.trustId}`);
  });

  test('When six distinct issuers are trusted at once over a tenant capped at three, then exactly three are kept, and another trust of a kept issuer still goes in', async () => {
    const { tenant: own } = await h.createTenant();
    const accounts = await Promise.all([1, 2].map(() => internal(h).createServiceAccount(own)));

    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        internal(h).addTrust(own, accounts[i % 2]!.client_id, {
          issuer: `https://ci-${i}.example`,
          subject: 'repo:acme/app',
          audience: h.issuer(own),
        }),
      ),
    );
    const kept = answers.filter((a) => a.status === 201).map((a) => a.body.issuer as string);
    const again = await internal(h).addTrust(own, accounts[0]!.client_id, {
      issuer: kept[0]!,
      subject: 'repo:acme/other',
      audience: h.issuer(own),
    });

    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    expect(answers.find((a) => a.status === 409)!.body).toEqual({
      error: 409,
      message: 'This tenant already trusts the maximum number of issuers',
    });
    expect(again.status).toBe(201);
  });

  test('When eleven trusts are added to one account at once, then ten are kept, and the same trust twice is a conflict', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const trust = (i: number) => ({
      issuer: cluster.issuer,
      subject: `system:serviceaccount:jobs:w${i}`,
      audience: h.issuer(tenant),
    });

    const answers = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        internal(h).addTrust(tenant, account.client_id, trust(i)),
      ),
    );
    const twice = await internal(h).addTrust(
      tenant,
      account.client_id,
      trust(answers.findIndex((a) => a.status === 201)),
    );

    expect(answers.map((a) => a.status).sort()).toEqual([...Array(10).fill(201), 409]);
    expect(answers.find((a) => a.status === 409)!.body).toEqual({
      error: 409,
      message: 'This service account already has the maximum of 10 trusts',
    });
    expect(twice.body).toEqual({
      error: 409,
      message: 'This service account already has this trust',
    });
  });
});
