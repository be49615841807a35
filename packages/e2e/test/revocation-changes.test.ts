/**
 * The revocation change feed, end to end: real processes (token service, two Plant Stores, a redis-server of this
 * file), real Postgres. A reset, a deletion or a role/grant change refuses every older token at
 * both Plant Stores at their next call, while a token minted after it works, even within the
 * same second. The re-sync period is long (60 s) so only the published events can do it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { metric } from '../src/index.js';
import {
  createPlant,
  LISTED,
  listPlants,
  REVOKED,
  startRevocationPlatform,
  type Platform,
} from './revocation-platform.js';

let platform: Platform;
let tenant: string;

beforeAll(async () => ({ platform, tenant } = await startRevocationPlatform()), 180_000);
afterAll(() => platform?.close(), 60_000);

const iatOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { iat: number })
    .iat;

describe('revocation reaches every Plant Store', () => {
  test('When a secret is reset, then the older token is refused by both Plant Stores at their next call and a token minted after it works', async () => {
    const account = await platform.createServiceAccount(tenant);
    const before = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(before)).toEqual([LISTED, LISTED]);

    const secret = await platform.published(() => platform.resetSecret(tenant, account.clientId));
    const after = await platform.grantToken(tenant, { clientId: account.clientId, secret });

    expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);
    expect(await platform.atEveryStore(after)).toEqual([LISTED, LISTED]);
  });

  test('When a token is minted in the same second as the reset that revoked its predecessor, then only the predecessor is refused', async () => {
    // Repeat until a pair shares its iat second (the interesting case), at most a few times.
    let sameSecond = false;
    for (let attempt = 0; attempt < 5 && !sameSecond; attempt += 1) {
      const account = await platform.createServiceAccount(tenant);
      const before = await platform.grantToken(tenant, account);
      // Minted right after the reset answers; the assertions wait for the event to arrive.
      const after = await platform.published(async () => {
        const secret = await platform.resetSecret(tenant, account.clientId);
        return platform.grantToken(tenant, { clientId: account.clientId, secret });
      });
      sameSecond = iatOf(before) === iatOf(after);

      expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);
      expect(await platform.atEveryStore(after)).toEqual([LISTED, LISTED]);
    }
    expect(sameSecond).toBe(true);
  });

  test('When a service account is deleted, then its token is refused by both Plant Stores at their next call', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(token)).toEqual([LISTED, LISTED]);

    await platform.published(() => platform.deleteServiceAccount(tenant, account.clientId));

    expect(await platform.atEveryStore(token)).toEqual([REVOKED, REVOKED]);
  });

  test('When a role is changed, then the token with the old role is refused by both Plant Stores and a new token carries the new role', async () => {
    // A tenant of its own: this test creates plants, the others expect an empty list.
    const tenant = await platform.createTenant();
    const account = await platform.createServiceAccount(tenant);
    const viewToken = await platform.grantToken(tenant, account);
    const [store1, store2] = platform.plantStores as [
      (typeof platform.plantStores)[0],
      (typeof platform.plantStores)[0],
    ];
    expect(await createPlant(store1, viewToken, { id: 1, name: 'Basil' })).toMatchObject({
      status: 403,
    });

    await platform.published(() =>
      platform.updateServiceAccount(tenant, account.clientId, { role: 'Edit' }),
    );
    const editToken = await platform.grantToken(tenant, account);

    expect(await platform.atEveryStore(viewToken)).toEqual([REVOKED, REVOKED]);
    expect(await createPlant(store2, editToken, { id: Date.now(), name: 'Basil' })).toEqual({
      status: 200,
      body: { name: 'Basil' },
      wwwAuthenticate: null,
    });

    // A demotion revokes just the same: the Edit token loses its power at once.
    await platform.published(() =>
      platform.updateServiceAccount(tenant, account.clientId, { role: 'View' }),
    );
    expect(await createPlant(store1, editToken, { id: Date.now() + 1, name: 'Mint' })).toEqual(
      REVOKED,
    );
    expect(await createPlant(store2, editToken, { id: Date.now() + 2, name: 'Mint' })).toEqual(
      REVOKED,
    );
  });

  test('When a grant is added or removed, then older tokens are refused by both Plant Stores', async () => {
    const account = await platform.createServiceAccount(tenant);
    const plain = await platform.grantToken(tenant, account);

    await platform.published(() =>
      platform.updateServiceAccount(tenant, account.clientId, {
        grants: [{ tag: 'herbs', permission: 'edit' }],
      }),
    );
    const granted = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(plain)).toEqual([REVOKED, REVOKED]);
    expect(await platform.atEveryStore(granted)).toEqual([LISTED, LISTED]);

    await platform.published(() =>
      platform.updateServiceAccount(tenant, account.clientId, { grants: [] }),
    );
    expect(await platform.atEveryStore(granted)).toEqual([REVOKED, REVOKED]);
  });

  test('When a Plant Store process starts after the reset, then it refuses the old token from its first request', async () => {
    const account = await platform.createServiceAccount(tenant);
    const before = await platform.grantToken(tenant, account);
    await platform.resetSecret(tenant, account.clientId);

    const late = await platform.startPlantStore();

    expect(await listPlants(late, before)).toEqual(REVOKED);
    expect(await metric(late, 'revocation_live')).toBe(1);
  }, 90_000);

  test('When tokens are revoked, then no token, secret or internal token appears in any process log', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    await platform.atEveryStore(token);
    await platform.resetSecret(tenant, account.clientId);
    await platform.atEveryStore(token);

    const logs = (
      await Promise.all(
        [platform.tokenService, ...platform.plantStores].map((p) => p.flushedLogs()),
      )
    )
      .flat()
      .join('\n');
    expect(logs).not.toContain(token.split('.')[2]!);
    expect(logs).not.toContain(account.secret);
    expect(logs).not.toContain(platform.secrets.PLANT_STORE_INTERNAL_TOKEN);
    expect(logs).not.toContain(platform.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN);
  });
});
