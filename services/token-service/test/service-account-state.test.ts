/** Disabling and enabling a service account, and removing its secret when keys or trusts remain. */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startWorkloadIssuer, type WorkloadIssuer } from '@plant/test-kit';
import { basic, useHarness, type Harness } from './helpers/harness.js';
import { assertionGrant, keyedAccount } from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { tokenRequest, verifyToken } from './helpers/token-client.js';
import { FEDERATION_TEST_ENV, trustedWorkload, workloadGrant } from './helpers/workload-client.js';

let h: Harness;
let tenant: string;
let cluster: WorkloadIssuer;

useHarness((started, first) => {
  h = started;
  tenant = first;
}, FEDERATION_TEST_ENV);

beforeAll(async () => {
  cluster = await startWorkloadIssuer();
});

afterAll(() => cluster.close());

const bySecret = (clientId: string, secret: string) =>
  tokenRequest(h, tenant)
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
const principal = (sub: string) =>
  internal(h)
    .raw.get(`/internal/v1/realms/${tenant}/principals/${sub}`)
    .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`);

describe('disabling a service account', () => {
  test('When an account is disabled, then its secret, its key and its trusted workload are all refused, its version is bumped, and the account shows the state', async () => {
    const keyed = await keyedAccount(h, tenant);
    const { account } = keyed;
    const subject = 'system:serviceaccount:jobs:nightly';
    await internal(h)
      .addTrust(tenant, account.client_id, {
        issuer: cluster.issuer,
        subject,
        audience: h.issuer(tenant),
      })
      .expect(201);
    const workload = { account, issuer: cluster, subject, audience: h.issuer(tenant), trustId: '' };
    const before = await bySecret(account.client_id, account.secret).expect(200);

    const disabled = await internal(h).setDisabled(tenant, account.client_id, true).expect(200);

    expect(disabled.body).toMatchObject({
      client_id: account.client_id,
      disabled: true,
      disabled_at: expect.any(String),
    });
    expect((await principal(account.client_id)).body).toEqual({
      tenant,
      sub: account.client_id,
      version: 2,
      deleted: false,
    });
    expect((await verifyToken(h, before.body.access_token, tenant)).ver).toBe(1);
    const answers = [
      (await bySecret(account.client_id, account.secret)).status,
      (await assertionGrant(h, tenant, keyed)).status,
      (await workloadGrant(h, tenant, workload)).status,
    ];
    expect(answers).toEqual([401, 401, 401]);
    expect((await internal(h).credentials(tenant, account.client_id)).body.disabled).toBe(true);
  });

  test('When a disabled account is enabled, then every credential works again, nothing more is revoked, and disabling twice bumps the version once', async () => {
    const keyed = await keyedAccount(h, tenant);
    const { account } = keyed;

    await internal(h).setDisabled(tenant, account.client_id, true).expect(200);
    await internal(h).setDisabled(tenant, account.client_id, true).expect(200);
    const enabled = await internal(h).setDisabled(tenant, account.client_id, false).expect(200);

    expect(enabled.body).toMatchObject({ disabled: false, disabled_at: null });
    expect((await principal(account.client_id)).body.version).toBe(2);
    const token = await bySecret(account.client_id, account.secret).expect(200);
    await assertionGrant(h, tenant, keyed).expect(200);
    expect((await verifyToken(h, token.body.access_token, tenant)).ver).toBe(2);
  });
});

describe('an account without a secret', () => {
  test('When the secret is its only credential, then removing it is refused and the secret keeps working', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const res = await internal(h).removeSecret(tenant, account.client_id).expect(409);

    expect(res.body).toEqual({
      error: 409,
      message:
        "The secret is this service account's only credential: add a key or a trust before removing it",
    });
    await bySecret(account.client_id, account.secret).expect(200);
  });

  test('When an account with a key has its secret removed, then the secret fails, the key works, the credentials show no secret, and Reset Secret gives one again', async () => {
    const keyed = await keyedAccount(h, tenant);
    const { account } = keyed;

    await internal(h).removeSecret(tenant, account.client_id).expect(204);
    const secretAfter = await bySecret(account.client_id, account.secret);
    await assertionGrant(h, tenant, keyed).expect(200);
    const credentials = (await internal(h).credentials(tenant, account.client_id)).body;
    const again = await internal(h).removeSecret(tenant, account.client_id).expect(409);
    const reset = await internal(h).reset(tenant, account.client_id).expect(200);

    expect(secretAfter.status).toBe(401);
    expect(credentials.secret).toBeNull();
    expect(again.body.message).toBe(
      'This service account has no secret; Reset Secret gives it one',
    );
    await bySecret(account.client_id, reset.body.secret).expect(200);
    expect((await internal(h).credentials(tenant, account.client_id)).body.secret).toEqual({
      created_at: expect.any(String),
      last_used_at: null,
      expires_at: null,
    });
  });

  test('When an account that uses only a trusted workload has no secret, then an empty or guessed secret never authenticates it', async () => {
    const workload = await trustedWorkload(h, tenant, cluster);
    await internal(h).removeSecret(tenant, workload.account.client_id).expect(204);

    const answers = [];
    for (const guess of ['no-secret', 'x', workload.account.secret])
      answers.push((await bySecret(workload.account.client_id, guess)).status);

    expect(answers).toEqual([401, 401, 401]);
    await workloadGrant(h, tenant, workload).expect(200);
  });
});
