/**
 * Topology 4: Postgres through PgBouncer (Debian's 1.18) in transaction pooling, each service
 * as its own role (deploy/postgres/init-roles.sh), migrations straight to Postgres
 * (MIGRATION_DATABASE_URL), the replicas behind nginx. The seed's flow works, and what relies
 * on one transaction (the 25-account cap and unique names under the realm's row lock, unique
 * plant ids) still holds when every transaction may land on another server connection.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { httpRequest } from '@plant/e2e';
import { uniqueName } from '@plant/test-kit';
import {
  runSeedFlow,
  signedInTenant,
  startPooledDatabase,
  startTopology,
  type PooledDatabase,
  type Topology,
} from '../src/index.js';

let db: PooledDatabase;
let t: Topology;

beforeAll(async () => {
  db = await startPooledDatabase();
  await db.migrate();
  t = await startTopology({
    platform: {
      // The token service's role; the operator CLI uses it too.
      databaseUrl: db.pooledUrlOf('token-service'),
      serviceEnv: {
        'plant-store': {
          DATABASE_URL: db.pooledUrlOf('plant-store'),
          DATABASE_NAMED_STATEMENTS: 'false',
        },
        'account-admin': { DATABASE_URL: db.pooledUrlOf('account-admin') },
      },
    },
  });
}, 180_000);

afterAll(async () => {
  await t?.close();
  await db?.drop();
});

describe('every service through PgBouncer in transaction pooling', () => {
  test('When the seed flow runs through nginx with every database connection pooled, then each step works and the old token is refused at every Plant Store replica', async () => {
    const { tenant, admin } = await signedInTenant(t, 'pooled');

    const flow = await runSeedFlow(t, tenant, admin);

    expect(flow.me.map((res) => res.status)).toEqual(Array(6).fill(200));
    expect(flow.grants.map((g) => g.status)).toEqual([200, 200, 200, 200]);
    expect(flow.creates.map((c) => c.status)).toEqual([200, 200, 200, 200]);
    for (const list of flow.lists) expect([list.status, list.body]).toEqual([200, flow.plants]);
    expect([flow.oldSecret.status, flow.newSecret.status]).toEqual([401, 200]);
    expect([...flow.oldTokenDirect, ...flow.oldTokenViaIngress].map((a) => a.status)).toEqual([
      401, 401, 401, 401,
    ]);
    expect(flow.newTokenDirect.map((a) => a.status)).toEqual([200, 200]);
  });

  test('When 10 service accounts of one name and then 30 others are created at once, then the unique name and the cap hold: one of the name, 25 in all', async () => {
    const { admin } = await signedInTenant(t, 'cap');
    const taken = uniqueName('twin');

    const twins = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: taken }),
      ),
    );
    const burst = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('burst') }),
      ),
    );
    const listed = (await t.portalApi(admin, 'GET', '/api/v1/service-accounts')).body as Array<{
      name: string;
    }>;

    expect(twins.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect(burst.map((r) => r.status).sort()).toEqual([
      ...Array(24).fill(201),
      ...Array(6).fill(409),
    ]);
    expect(listed.map((a) => a.name).filter((name) => name === taken)).toEqual([taken]);
    expect(listed).toHaveLength(25);
  });

  test('When twenty creates of one plant id race through both Plant Store replicas, then exactly one is stored and the others get 409', async () => {
    const { tenant } = await signedInTenant(t, 'race');
    const account = await t.platform.createServiceAccount(tenant, { role: 'Edit' });
    const token = (
      (await t.grant(tenant, account.clientId, account.secret)).body as { access_token: string }
    ).access_token;
    const id = Date.now();

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.createPlant(token, { id, name: `Racer ${i}` })),
    );
    const listed = await t.listPlants(token);

    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(19).fill(409)]);
    expect(listed.body).toHaveLength(1);
  });

  test('When a Plant Store keeps its named prepared statements through the pooler, then its lists break after the first (what DATABASE_NAMED_STATEMENTS=false is for), in the Error shape', async () => {
    const { tenant } = await signedInTenant(t, 'named');
    const account = await t.platform.createServiceAccount(tenant);
    const token = (await t.grant(tenant, account.clientId, account.secret)).body as {
      access_token: string;
    };
    const named = await t.platform.startPlantStore({ DATABASE_NAMED_STATEMENTS: 'true' });
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          httpRequest(`${named.url}/plants`, {
            headers: { authorization: `Bearer ${token.access_token}` },
          }),
        ),
      );
      const failed = answers.filter((a) => a.status !== 200);

      expect(failed.length).toBeGreaterThan(0);
      for (const answer of failed)
        expect([answer.status >= 500, Object.keys(answer.body as object).sort()]).toEqual([
          true,
          ['error', 'message'],
        ]);
    } finally {
      await named.stop('SIGKILL');
    }
  });
});
