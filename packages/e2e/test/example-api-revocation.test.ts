/**
 * An API outside the Plant Store (examples/inventory-api, another team's, built
 * on @plant/resource-auth with its own read-only credential and audience) next to the real token
 * service and Plant Store processes. Its tokens are its own (an audience of API_AUDIENCES); a reset
 * or delete refuses its old token as the Plant Store's is refused, and token introspection
 * agrees; its DPoP works like the Plant Store's. How soon a revocation takes effect is measured
 * by `pnpm bench:revocation`, not bounded here: a loaded machine would fail a fixed deadline.
 *
 * The API is built as another team builds it: the example copied outside the workspace, the
 * packed `@plant/resource-auth` tarball installed with npm as its README says, compiled by its
 * own TypeScript against the tarball's declarations, and run from there.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  buildExampleFromTarball,
  dpopKey,
  eventually,
  outsideWorkspace,
  packResourceAuth,
  spawnServer,
  TEST_SECRETS,
  type ServerProcess,
  type ServiceAccount,
} from '@plant/test-kit';
import { startPlatform, type Platform } from '../src/index.js';

const INVENTORY = 'http://inventory.test';
/** The inventory API's own credential for the internal API: one more entry of RESOURCE_SERVER_TOKENS. */
const INVENTORY_CREDENTIAL = 'test-inventory-api-internal-token-7c1e9b25';

let p: Platform;
let api: ServerProcess;
let tenant: string;
const scratch = outsideWorkspace('inventory-api');

beforeAll(async () => {
  const tarball = await packResourceAuth(scratch.dir);
  const server = await buildExampleFromTarball(`${scratch.dir}/inventory-api`, tarball);
  p = await startPlatform({
    plantStores: 1,
    serviceEnv: {
      'token-service': {
        API_AUDIENCES: INVENTORY,
        RESOURCE_SERVER_TOKENS: `${TEST_SECRETS.PLANT_STORE_INTERNAL_TOKEN},${INVENTORY_CREDENTIAL}`,
      },
    },
  });
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
    },
  });
  await eventually(
    async () => (await fetch(`${api.url}/healthz`)).status === 200,
    'the inventory API has its revocation snapshot',
  );
  tenant = await p.createTenant('inv');
}, 300_000);

afterAll(async () => {
  await api?.stop();
  await p?.close();
  scratch.remove();
});

async function status(
  url: string,
  token: string,
  init: { scheme?: string; proof?: string; method?: string } = {},
): Promise<number> {
  const headers: Record<string, string> = { authorization: `${init.scheme ?? 'Bearer'} ${token}` };
  if (init.proof !== undefined) headers.dpop = init.proof;
  const res = await fetch(url, { method: init.method ?? 'GET', headers });
  await res.arrayBuffer();
  return res.status;
}

const inventory = () => `${api.url}/inventory`;
const plants = () => `${p.plantStores[0]!.url}/plants?limit=1`;

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

/** Makes the change, then waits until every check sees the old token refused; resolves with the checks' names. */
async function refusedEverywhere(
  change: () => Promise<unknown>,
  checks: Record<string, () => Promise<boolean>>,
): Promise<string[]> {
  await change();
  await Promise.all(
    Object.entries(checks).map(([name, refused]) =>
      eventually(refused, `${name} refuses the old token`),
    ),
  );
  return Object.keys(checks);
}

describe('An API of another team, protected by @plant/resource-auth', () => {
  let account: ServiceAccount;
  beforeAll(async () => {
    account = await p.createServiceAccount(tenant, { role: 'Edit' });
  });

  test('When a service account asks tokens for the inventory API and for the Plant Store, then each is accepted where it is meant for, and refused at the other', async () => {
    const forInventory = await p.grantToken(tenant, account, { resource: INVENTORY });
    const forPlants = await p.grantToken(tenant, account);
    expect([await status(inventory(), forInventory), await status(plants(), forPlants)]).toEqual([
      200, 200,
    ]);
    expect([await status(inventory(), forPlants), await status(plants(), forInventory)]).toEqual([
      401, 401,
    ]);
    expect(await status(inventory(), forInventory, { method: 'POST' })).toBe(201);
  });

  test('When an Edit account asks a token for the inventory API with scope=plants:read, then the API lets it read and refuses its write with 403', async () => {
    const narrowed = await p.grantToken(tenant, account, {
      resource: INVENTORY,
      scope: 'plants:read',
    });
    const written = await fetch(inventory(), {
      method: 'POST',
      headers: { authorization: `Bearer ${narrowed}` },
    });
    expect(await status(inventory(), narrowed)).toBe(200);
    expect({
      status: written.status,
      challenge: written.headers.get('www-authenticate'),
      body: await written.json(),
    }).toEqual({
      status: 403,
      challenge: expect.stringContaining('error="insufficient_scope"'),
      body: {
        error: 403,
        message: "This operation needs the plants:write scope; the token's scope is narrower",
      },
    });
  });

  test.each<[string, (a: ServiceAccount) => Promise<unknown>]>([
    ['its secret is reset', (a) => p.resetSecret(tenant, a.clientId)],
    ['it is deleted', (a) => p.deleteServiceAccount(tenant, a.clientId)],
    ['it is demoted to View', (a) => p.updateServiceAccount(tenant, a.clientId, { role: 'View' })],
  ])(
    'When %s, then the inventory API, the Plant Store and introspection all refuse the old tokens',
    async (_case, change) => {
      const target = await p.createServiceAccount(tenant, { role: 'Edit' });
      const [forInventory, forPlants] = [
        await p.grantToken(tenant, target, { resource: INVENTORY }),
        await p.grantToken(tenant, target),
      ];
      expect([
        await status(inventory(), forInventory),
        await status(plants(), forPlants),
        await introspect(forInventory),
      ]).toEqual([200, 200, true]);
      const refusing = await refusedEverywhere(() => change(target), {
        inventory: async () => (await status(inventory(), forInventory)) === 401,
        plantStore: async () => (await status(plants(), forPlants)) === 401,
        introspection: async () => !(await introspect(forInventory)),
      });
      expect(refusing.sort()).toEqual(['introspection', 'inventory', 'plantStore']);
    },
  );

  test('When the account requires DPoP, then the inventory API takes its bound token only with a proof for its own URL', async () => {
    const bound = await p.createServiceAccount(tenant, { role: 'View' });
    await p.updateServiceAccount(tenant, bound.clientId, { dpop_bound_access_tokens: true });
    const key = dpopKey();
    const token = await p.grantToken(tenant, bound, { resource: INVENTORY }, { dpop: key });
    const proof = (htu = `${INVENTORY}/inventory`) => key.proof({ htm: 'GET', htu, token });
    expect(await status(inventory(), token, { scheme: 'DPoP', proof: proof() })).toBe(200);
    expect(await status(inventory(), token)).toBe(401);
    expect(
      await status(inventory(), token, { scheme: 'DPoP', proof: proof(`${INVENTORY}/other`) }),
    ).toBe(401);
    expect(
      await status(inventory(), token, {
        scheme: 'DPoP',
        proof: key.proof({ htm: 'POST', htu: `${INVENTORY}/inventory`, token }),
        method: 'POST',
      }),
    ).toBe(403);
  });

  test("When no token, or a token for no audience of ours, is sent, then 401 in the Error shape with the API's own challenge", async () => {
    const res = await fetch(inventory());
    expect({
      status: res.status,
      challenge: res.headers.get('www-authenticate'),
      body: await res.json(),
    }).toEqual({
      status: 401,
      challenge: 'Bearer realm="inventory"',
      body: {
        error: 401,
        message: 'Authentication required: send Authorization: Bearer <access token>',
      },
    });
    const refused = await fetch(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: account.clientId,
        client_secret: account.secret,
        resource: 'http://not-ours.test',
      }).toString(),
    });
    expect({
      status: refused.status,
      error: ((await refused.json()) as { error: string }).error,
    }).toEqual({ status: 400, error: 'invalid_target' });
  });
});
