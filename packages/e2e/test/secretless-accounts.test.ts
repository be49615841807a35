/**
 * Secretless service accounts end to end, every service a process: an Account Admin manages
 * keys, trusted workloads, the secret and the account's state through account-admin's
 * /api/v1; the account gets tokens with private_key_jwt or its workload's platform token; the
 * Plant Store serves them, and refuses them at their next check once the key is removed, the
 * trust removed, the secret removed or the account disabled (the versioned revocation a reset uses).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  assertionGrantBody,
  clientAssertion,
  clientKeyPair,
  eventually,
  startWorkloadIssuer,
  type ClientKeyPair,
  type WorkloadIssuer,
} from '@plant/test-kit';
import {
  httpRequest,
  startPlatform,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let adminToken: string;
let cluster: WorkloadIssuer;

beforeAll(async () => {
  cluster = await startWorkloadIssuer();
  p = await startPlatform({
    accountAdmin: true,
    serviceEnv: {
      'token-service': {
        FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
        FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
      },
    },
  });
  tenant = await p.createTenant('nosecret');
  adminToken = await p.userToken(tenant, `admin@${tenant}.test`);
}, 90_000);

afterAll(async () => {
  await p?.close();
  await cluster?.close();
});

const issuer = () => `${p.authUrl}/realms/${tenant}`;

function api(method: string, path: string, body?: unknown): Promise<Answer> {
  return httpRequest(`${p.portalUrl}/api/v1/service-accounts${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function grant(body: string): Promise<Answer> {
  return httpRequest(`${issuer()}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

async function tokenOf(answer: Promise<Answer>): Promise<string> {
  const res = await answer;
  expect(res.status).toBe(200);
  return (res.body as { access_token: string }).access_token;
}

const byKey = (account: ServiceAccount, key: ClientKeyPair, kid: string) =>
  grant(
    assertionGrantBody(
      account.clientId,
      clientAssertion({ clientId: account.clientId, audience: issuer(), key, kid }),
    ),
  );
const byWorkload = (account: ServiceAccount, subject: string) =>
  grant(assertionGrantBody(account.clientId, cluster.mint({ subject, audience: issuer() })));

/** The Plant Store's verdict on a token: revocation events reach it after the change's answer, within the channel's delivery. */
async function refusedAtPlantStore(token: string): Promise<Answer> {
  let answer: Answer | undefined;
  await eventually(async () => {
    answer = await p.listPlants(token);
    return answer.status === 401;
  }, 'the Plant Store refuses the token');
  return answer!;
}

describe('secretless service accounts across the platform', () => {
  test('When a key is added through /api/v1, then private_key_jwt gets a token the Plant Store serves; once the key is removed, that token is refused as revoked and the key gets no other', async () => {
    const account = await p.createServiceAccount(tenant);
    const key = clientKeyPair('rsa');
    const added = await api('POST', `/${account.clientId}/keys`, { pem: key.publicPem });
    const kid = (added.body as { id: string }).id;

    const token = await tokenOf(byKey(account, key, kid));
    expect((await p.listPlants(token)).status).toBe(200);
    expect((await api('DELETE', `/${account.clientId}/keys/${kid}`)).status).toBe(204);

    expect(added.status).toBe(201);
    const refused = await refusedAtPlantStore(token);
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    expect((await byKey(account, key, kid)).status).toBe(401);
    expect((await p.requestToken(tenant, account.clientId, account.secret)).status).toBe(200);
  });

  test('When a workload is trusted and the secret removed, then only the workload gets tokens; the token minted with the secret before is refused at the Plant Store', async () => {
    const account = await p.createServiceAccount(tenant);
    const subject = 'repo:acme/shop:ref:refs/heads/main';
    const bySecretBefore = await tokenOf(p.requestToken(tenant, account.clientId, account.secret));
    expect(
      (
        await api('POST', `/${account.clientId}/trusts`, {
          issuer: cluster.issuer,
          subject,
          audience: issuer(),
        })
      ).status,
    ).toBe(201);

    expect((await api('DELETE', `/${account.clientId}/secret`)).status).toBe(204);
    const byPlatform = await tokenOf(byWorkload(account, subject));

    await refusedAtPlantStore(bySecretBefore);
    expect((await p.requestToken(tenant, account.clientId, account.secret)).status).toBe(401);
    expect((await p.listPlants(byPlatform)).status).toBe(200);
    expect((await byWorkload(account, 'repo:acme/shop:ref:refs/heads/feature')).status).toBe(401);
  });

  test('When the account is disabled through /api/v1, then every token it holds is refused at the Plant Store and no credential gets a new one, until it is enabled', async () => {
    const account = await p.createServiceAccount(tenant);
    const key = clientKeyPair('ed25519');
    const kid = (
      (await api('POST', `/${account.clientId}/keys`, { jwk: key.publicJwk })).body as {
        id: string;
      }
    ).id;
    const tokens = [
      await tokenOf(p.requestToken(tenant, account.clientId, account.secret)),
      await tokenOf(byKey(account, key, kid)),
    ];

    const disabled = await api('POST', `/${account.clientId}/disable`);
    for (const token of tokens) await refusedAtPlantStore(token);
    const whileDisabled = [
      (await p.requestToken(tenant, account.clientId, account.secret)).status,
      (await byKey(account, key, kid)).status,
    ];
    const enabled = await api('POST', `/${account.clientId}/enable`);
    const fresh = await tokenOf(byKey(account, key, kid));

    expect(disabled.body).toMatchObject({ client_id: account.clientId, disabled: true });
    expect(whileDisabled).toEqual([401, 401]);
    expect(enabled.body).toMatchObject({ disabled: false });
    expect((await p.listPlants(fresh)).status).toBe(200);
  });

  test("When another tenant's admin tries to add a key to this account, then 404, and the key authenticates nothing", async () => {
    const account = await p.createServiceAccount(tenant);
    const other = await p.createTenant('intruder');
    const intruder = await p.userToken(other, `admin@${other}.test`);
    const key = clientKeyPair('ec');

    const res = await httpRequest(
      `${p.portalUrl}/api/v1/service-accounts/${account.clientId}/keys`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${intruder}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jwk: key.publicJwk }),
      },
    );

    expect(res.status).toBe(404);
    expect((await byKey(account, key, 'anything')).status).toBe(401);
    expect(
      ((await api('GET', `/${account.clientId}/credentials`)).body as { keys: unknown[] }).keys,
    ).toEqual([]);
  });
});
