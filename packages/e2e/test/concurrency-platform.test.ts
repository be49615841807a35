/**
 * Races across processes: two token service replicas and account-admin all writing the same
 * realm, two Plant Stores writing the same tenant. services/token-service/test/concurrency
 * proves the same rules inside one process; here the requests meet only in Postgres.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  httpRequest,
  startPlatform,
  TEST_SECRETS,
  type Answer,
  type Platform,
} from '../src/index.js';
import { eventually, type ServiceProcess } from '@plant/test-kit';
import { eventsReceived } from './revocation-platform.js';

let p: Platform;
let replica: ServiceProcess;
let internalUrls: string[];

beforeAll(async () => {
  p = await startPlatform({ plantStores: 2, accountAdmin: true });
  replica = await p.startTokenServiceReplica();
  internalUrls = [p.internalUrl, replica.internalUrl!];
}, 90_000);

afterAll(() => p?.close());

const internalHeaders = {
  authorization: `Bearer ${TEST_SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
  'content-type': 'application/json',
};

/** The i-th writer: token service A, token service B, or account-admin as the tenant's Account Admin. */
function writer(tenant: string, adminToken: string, i: number) {
  const viaAdmin = i % 3 === 2;
  const base = viaAdmin
    ? `${p.portalUrl}/api/v1`
    : `${internalUrls[i % 3]}/internal/v1/realms/${tenant}`;
  const headers = viaAdmin
    ? { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }
    : internalHeaders;
  return {
    create: (name: string) =>
      httpRequest(`${base}/service-accounts`, {
        method: 'POST',
        headers,
        body: JSON.stringify(viaAdmin ? { name } : { name, actor: 'e2e' }),
      }),
    reset: (clientId: string) =>
      httpRequest(`${base}/service-accounts/${clientId}/reset-secret`, {
        method: 'POST',
        headers,
        body: JSON.stringify(viaAdmin ? {} : { actor: 'e2e' }),
      }),
    remove: (clientId: string) =>
      httpRequest(`${base}/service-accounts/${clientId}`, { method: 'DELETE', headers }),
  };
}

async function newTenant(): Promise<{ tenant: string; adminToken: string }> {
  const tenant = await p.createTenant('cc');
  return { tenant, adminToken: await p.userToken(tenant, `admin@${tenant}.test`) };
}

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort();
const listed = async (tenant: string) =>
  (await p.internal('GET', `/internal/v1/realms/${tenant}/service-accounts`)).body as Array<{
    name: string;
    client_id: string;
  }>;

describe('Service accounts written from several processes at once', () => {
  test('When 30 accounts are created at once through two token service replicas and account-admin, then exactly 25 exist and 5 got the cap error', async () => {
    const { tenant, adminToken } = await newTenant();

    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => writer(tenant, adminToken, i).create(`cap-${i}`)),
    );

    expect(statuses(answers)).toEqual([...Array(25).fill(201), ...Array(5).fill(409)]);
    const refusals = answers.filter((a) => a.status === 409).map((a) => a.body);
    expect(new Set(refusals.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(refusals[0]).toEqual({ error: 409, message: expect.stringMatching(/25/) });
    expect((await listed(tenant)).length).toBe(25);
  });

  test('When one name is created 10 times at once in different cases through the three writers, then exactly one account exists', async () => {
    const { tenant, adminToken } = await newTenant();
    const spellings = [
      'Robot',
      'robot',
      'ROBOT',
      'rObOt',
      'RoBoT',
      'robOT',
      'ROBot',
      'Robot',
      'robot',
      'ROBOT',
    ];

    const answers = await Promise.all(
      spellings.map((name, i) => writer(tenant, adminToken, i).create(name)),
    );

    expect(statuses(answers)).toEqual([201, ...Array(9).fill(409)]);
    expect((await listed(tenant)).map((a) => a.name.toLowerCase())).toEqual(['robot']);
  });

  test('When one account is reset 6 times at once through the three writers, then every reset answers a secret and exactly one of them works at the end', async () => {
    const { tenant, adminToken } = await newTenant();
    const account = await p.createServiceAccount(tenant);

    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => writer(tenant, adminToken, i).reset(account.clientId)),
    );
    const secrets = answers.map((a) => (a.body as { secret: string }).secret);
    const grants = await Promise.all(
      [account.secret, ...secrets].map((secret) =>
        p.requestToken(tenant, account.clientId, secret),
      ),
    );

    expect(statuses(answers)).toEqual(Array(6).fill(200));
    expect(new Set(secrets).size).toBe(6);
    expect(statuses(grants)).toEqual([200, 401, 401, 401, 401, 401, 401]);
    expect(grants[0]!.status).toBe(401);
  });

  test('When an account is deleted while tokens are requested for it (10 rounds, delete and grant on different processes), then every token that was issued is refused at its first use once the deletions have reached the Plant Stores', async () => {
    const { tenant, adminToken } = await newTenant();
    const accounts = await Promise.all(
      Array.from({ length: 10 }, () => p.createServiceAccount(tenant)),
    );
    const heardBefore = await Promise.all(p.plantStores.map(eventsReceived));

    const rounds = await Promise.all(
      accounts.map(async (account, i) => {
        const [removed, granted] = await Promise.all([
          writer(tenant, adminToken, i).remove(account.clientId),
          httpRequest(
            `${i % 2 === 0 ? p.authUrl : replica.url}/realms/${tenant}/protocol/openid-connect/token`,
            {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({
                grant_type: 'client_credentials',
                client_id: account.clientId,
                client_secret: account.secret,
              }).toString(),
            },
          ),
        ]);
        return {
          removed: removed.status,
          granted: granted.status,
          token: (granted.body as { access_token?: string }).access_token,
        };
      }),
    );
    // The token service publishes each deletion before its 204, but a Plant Store applies it when
    // the message arrives, a few ms later (the design's target is p99 <= 10 ms, measured by
    // `pnpm bench:revocation`, not zero). A token used in that moment was the test racing the
    // message, not a token outliving the deletion; so the first use waits until every store has
    // heard all ten deletions.
    await eventually(
      async () =>
        (await Promise.all(p.plantStores.map(eventsReceived))).every(
          (n, i) => n >= heardBefore[i]! + accounts.length,
        ),
      'every Plant Store heard the ten deletions',
    );
    const firstUses = await Promise.all(
      rounds.map(async ({ token }, i) =>
        token === undefined
          ? undefined
          : (await p.listPlants(token, 'limit=1', p.plantStores[i % 2])).status,
      ),
    );

    expect(rounds.map((r) => r.removed)).toEqual(Array(10).fill(204));
    expect(rounds.filter((r, i) => r.granted === 200 && firstUses[i] !== 401)).toEqual([]);
    expect(rounds.filter((r) => ![200, 401].includes(r.granted))).toEqual([]);
  });
});

describe('Plants written through two Plant Store processes at once', () => {
  test('When the same id is posted 10 times at once through two Plant Stores, then exactly one answers 200, the others 409, and one plant is listed', async () => {
    const tenant = await p.createTenant('cp');
    const account = await p.createServiceAccount(tenant, { role: 'Edit' });
    const token = await p.grantToken(tenant, account);

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        p.createPlant(token, `{"id":9007199254740993,"name":"same-${i}"}`, p.plantStores[i % 2]),
      ),
    );

    expect(statuses(answers)).toEqual([200, ...Array(9).fill(409)]);
    const winner = answers.find((a) => a.status === 200)!.body;
    expect((await p.listPlants(token)).body).toEqual([winner]);
  });
});
