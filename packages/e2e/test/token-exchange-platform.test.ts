/**
 * Calls on behalf of others, end to end with the services as processes: the inventory example
 * (examples/inventory-api, built from the packed @plant/resource-auth as another team builds it)
 * receives a caller's token and calls the Plant Store for the caller with a token exchanged for
 * it (RFC 8693) that names both; the Plant Store enforces the caller's grants, narrowed to what
 * was asked; and resetting the caller's or the inventory API's service account refuses the
 * exchanged token at its next use on both Plant Store replicas and at introspection. The
 * exchange itself is also made by an unmodified openid-client (`genericGrantRequest`), with a
 * caller's access token and with a trusted workload's platform token as the subject.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import {
  buildExampleFromTarball,
  eventually,
  outsideWorkspace,
  packResourceAuth,
  PLANT_STORE_AUDIENCE,
  spawnServer,
  startWorkloadIssuer,
  TEST_SECRETS,
  type WorkloadIssuer,
  type ServerProcess,
  type ServiceAccount,
} from '@plant/test-kit';
import { startPlatform, type Platform } from '../src/index.js';

const INVENTORY = 'http://inventory.test';
const INVENTORY_CREDENTIAL = 'test-inventory-api-internal-token-3b8d5e07';
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';

let p: Platform;
let api: ServerProcess;
let tenant: string;
/** The platform the callers' jobs run on (a cluster): its tokens are trusted workloads' credentials. */
let cluster: WorkloadIssuer;
/** The inventory API's own service account, allowed to act for others at the Plant Store. */
let inventoryAccount: ServiceAccount;
const scratch = outsideWorkspace('inventory-api-exchange');

async function allowToActForOthers(clientId: string): Promise<void> {
  const res = await fetch(
    `${p.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${clientId}/delegations`,
    {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${TEST_SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        delegations: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read plants:write' }],
        actor: 'admin@test',
      }),
    },
  );
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  const tarball = await packResourceAuth(scratch.dir);
  const server = await buildExampleFromTarball(`${scratch.dir}/inventory-api`, tarball);
  cluster = await startWorkloadIssuer();
  p = await startPlatform({
    plantStores: 2,
    serviceEnv: {
      'token-service': {
        FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
        FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
        API_AUDIENCES: INVENTORY,
        RESOURCE_SERVER_TOKENS: `${TEST_SECRETS.PLANT_STORE_INTERNAL_TOKEN},${INVENTORY_CREDENTIAL}`,
      },
    },
  });
  tenant = await p.createTenant('obo');
  inventoryAccount = await p.createServiceAccount(tenant, { name: 'inventory-api' });
  await allowToActForOthers(inventoryAccount.clientId);
  api = await spawnServer({
    name: 'inventory-api',
    script: server,
    env: {
      AUTH_URL: p.authUrl,
      TOKEN_SERVICE_INTERNAL_URL: p.internalUrl,
      INTERNAL_API_TOKEN: INVENTORY_CREDENTIAL,
      REDIS_URL: p.redisUrl,
      API_AUDIENCE: INVENTORY,
      PUBLIC_URL: INVENTORY,
      EXCHANGE_CLIENT_ID: inventoryAccount.clientId,
      EXCHANGE_CLIENT_SECRET: inventoryAccount.secret,
      PLANT_STORE_URL: p.plantStores[0]!.url,
      PLANT_STORE_AUDIENCE,
    },
  });
  await eventually(
    async () => (await fetch(`${api.url}/healthz`)).status === 200,
    'the inventory API has its revocation snapshot',
  );
}, 300_000);

afterAll(async () => {
  await api?.stop();
  await p?.close();
  await cluster?.close();
  scratch.remove();
});

/** A View caller allowed to create plants tagged `ferns` only, and its token for the inventory API. */
async function caller(): Promise<{ account: ServiceAccount; token: string }> {
  const account = await p.createServiceAccount(tenant);
  await p.updateServiceAccount(tenant, account.clientId, {
    grants: [{ tag: 'ferns', permission: 'edit' }],
  });
  return { account, token: await p.grantToken(tenant, account, { resource: INVENTORY }) };
}

/** The exchange as any OAuth client makes it: openid-client's generic grant, unmodified. */
async function exchangeWithOpenidClient(
  actor: ServiceAccount,
  subjectToken: string,
  scope = 'plants:read',
  subjectTokenType = AT,
): Promise<oidc.TokenEndpointResponse> {
  const config = await oidc.discovery(
    new URL(`${p.authUrl}/realms/${tenant}`),
    actor.clientId,
    undefined,
    oidc.ClientSecretBasic(actor.secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  return oidc.genericGrantRequest(config, GRANT, {
    subject_token: subjectToken,
    subject_token_type: subjectTokenType,
    audience: PLANT_STORE_AUDIENCE,
    scope,
  });
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

async function statusAt(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/plants?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status;
}

async function introspect(token: string): Promise<boolean> {
  const res = await fetch(
    `${p.authUrl}/realms/${tenant}/protocol/openid-connect/token/introspect`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${INVENTORY_CREDENTIAL}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    },
  );
  return ((await res.json()) as { active: boolean }).active;
}

function createThroughInventory(token: string, plant: { id: number; name: string; tag: string }) {
  return fetch(`${api.url}/inventory/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(plant),
  });
}

describe('Calls on behalf of others', () => {
  test('When the inventory API creates and lists plants for a caller, then the Plant Store applies the caller grants and logs both', async () => {
    const { account, token } = await caller();
    const ferns = await createThroughInventory(token, { id: 1, name: 'Maidenhair', tag: 'ferns' });
    expect({ status: ferns.status, body: await ferns.json() }).toEqual({
      status: 200,
      body: { name: 'Maidenhair', tag: 'ferns' },
    });
    // The caller's grant is for ferns only: roses are refused, whatever the inventory API may do itself.
    const roses = await createThroughInventory(token, { id: 2, name: 'Damask', tag: 'roses' });
    expect(roses.status).toBe(403);
    const listed = await fetch(`${api.url}/inventory/plants`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect({ status: listed.status, body: await listed.json() }).toEqual({
      status: 200,
      body: [{ name: 'Maidenhair', tag: 'ferns' }],
    });
    // The create's access line names whose grants it used and which services acted.
    const lines = (await p.plantStores[0]!.flushedLogs())
      .filter((line) => line.includes('"on_behalf_of"'))
      .map((line) => JSON.parse(line));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          msg: 'request completed',
          req: { method: 'POST', path: '/plants' },
          on_behalf_of: { tenant, sub: account.clientId, actors: [inventoryAccount.clientId] },
        }),
      ]),
    );
  });

  test('When openid-client exchanges a caller token, then the token names both and is for the Plant Store only, within the caller token', async () => {
    const { account, token } = await caller();
    const tokens = await exchangeWithOpenidClient(inventoryAccount, token);
    expect(tokens).toMatchObject({
      issued_token_type: AT,
      token_type: 'bearer',
      scope: 'plants:read',
    });
    const claims = claimsOf(tokens.access_token);
    expect(claims).toMatchObject({
      sub: account.clientId,
      client_id: inventoryAccount.clientId,
      aud: PLANT_STORE_AUDIENCE,
      act: { sub: inventoryAccount.clientId },
      grants: [{ tag: 'ferns', permission: 'edit' }],
    });
    expect(claims.exp as number).toBeLessThanOrEqual(claimsOf(token).exp as number);
    // For the Plant Store only: the inventory API itself refuses it.
    const atInventory = await fetch(`${api.url}/inventory`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(atInventory.status).toBe(401);
  });

  test.each<[string, (subject: ServiceAccount) => ServiceAccount]>([
    ["the caller's", (subject) => subject],
    ["the inventory API's", () => inventoryAccount],
  ])(
    'When %s service account is reset, then the exchanged token fails at its next use on every Plant Store replica and at introspection',
    async (_whose, whom) => {
      const { account, token } = await caller();
      const exchanged = (await exchangeWithOpenidClient(inventoryAccount, token)).access_token;
      const replicas = p.plantStores.map((replica) => replica.url);
      expect(await Promise.all(replicas.map((url) => statusAt(url, exchanged)))).toEqual([
        200, 200,
      ]);
      const target = whom(account);
      const secret = await p.resetSecret(tenant, target.clientId);
      if (target === inventoryAccount) inventoryAccount = { ...inventoryAccount, secret };
      await Promise.all([
        ...replicas.map((url) =>
          eventually(async () => (await statusAt(url, exchanged)) === 401, `${url} refuses it`),
        ),
        eventually(async () => !(await introspect(exchanged)), 'introspection refuses it'),
      ]);
    },
  );

  test("When openid-client exchanges a trusted job's platform token, then the Plant Store applies the trusting account's grants for it until that account is reset", async () => {
    const { account } = await caller();
    const subject = `system:serviceaccount:jobs:${account.clientId.slice(-8)}`;
    const audience = `${p.authUrl}/realms/${tenant}`;
    const trusted = await fetch(
      `${p.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${account.clientId}/trusts`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ issuer: cluster.issuer, subject, audience, actor: 'admin@test' }),
      },
    );
    expect(trusted.status).toBe(201);
    const platformToken = cluster.mint({ subject, audience });
    const tokens = await exchangeWithOpenidClient(
      inventoryAccount,
      platformToken,
      'plants:read plants:write',
      JWT,
    );
    expect(tokens).toMatchObject({ issued_token_type: AT, scope: 'plants:read plants:write' });
    expect(claimsOf(tokens.access_token)).toMatchObject({
      sub: account.clientId,
      act: { sub: inventoryAccount.clientId },
      grants: [{ tag: 'ferns', permission: 'edit' }],
    });
    const create = (tag: string, id: number) =>
      fetch(`${p.plantStores[1]!.url}/plants`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ id, name: `job's ${tag}`, tag }),
      });
    expect((await create('ferns', 11)).status).toBe(200);
    expect((await create('roses', 12)).status).toBe(403);
    await p.resetSecret(tenant, account.clientId);
    await Promise.all(
      p.plantStores.map((replica) =>
        eventually(
          async () => (await statusAt(replica.url, tokens.access_token)) === 401,
          `${replica.url} refuses it`,
        ),
      ),
    );
    // Forged: signed by a key the cluster does not publish.
    await expect(
      exchangeWithOpenidClient(
        inventoryAccount,
        cluster.mintWithUnpublishedKey({ subject, audience }),
        'plants:read',
        JWT,
      ),
    ).rejects.toMatchObject({ error: 'invalid_request', status: 400 });
  });
});
