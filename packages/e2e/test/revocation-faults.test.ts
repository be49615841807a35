/**
 * Revocation end to end under faults: the Plant Stores' Redis (a server of this file alone) is
 * stopped, restarted empty, flushed, or has its subscriber connections killed while
 * revocations happen; the token service goes down too. A revoked token is never accepted,
 * the stores recover without a restart, and with neither Redis nor the token service the
 * answer is 503, not 200. The re-sync period is long (60 s) so recovery is the reconnect's doing.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually } from '@plant/test-kit';
import { metric } from '../src/index.js';
import {
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

/** Waits until every Plant Store reports `revocation_live` = `value` on /metrics. */
async function everyStoreLive(value: 0 | 1): Promise<void> {
  await eventually(
    async () =>
      (
        await Promise.all(platform.plantStores.map((store) => metric(store, 'revocation_live')))
      ).every((v) => v === value),
    `every Plant Store reports revocation_live ${value}`,
  );
}

describe('revocation while Redis fails', () => {
  test('When Redis is stopped while a reset happens, then both Plant Stores still refuse the old token; when Redis is back, they recover without a restart', async () => {
    const account = await platform.createServiceAccount(tenant);
    const before = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(before)).toEqual([LISTED, LISTED]);

    await platform.redis.stop();
    await everyStoreLive(0);
    await platform.resetSecret(tenant, account.clientId); // its publish fails: nobody hears it

    expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);

    await platform.redis.start();
    await everyStoreLive(1);
    expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);
    // Events flow again: a new reset is refused at the next call, from memory.
    const fallbacksBefore = await metric(platform.plantStores[0]!, 'revocation_fallbacks_total');
    const next = await platform.createServiceAccount(tenant);
    const nextToken = await platform.grantToken(tenant, next);
    expect(await platform.atEveryStore(nextToken)).toEqual([LISTED, LISTED]);
    await platform.published(() => platform.resetSecret(tenant, next.clientId));
    expect(await platform.atEveryStore(nextToken)).toEqual([REVOKED, REVOKED]);
    expect(await metric(platform.plantStores[0]!, 'revocation_fallbacks_total')).toBe(
      fallbacksBefore,
    );
  }, 120_000);

  test('When the subscriber connections are killed while a reset happens, then both Plant Stores refuse the old token and re-subscribe', async () => {
    const account = await platform.createServiceAccount(tenant);
    const before = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(before)).toEqual([LISTED, LISTED]);

    const killed = await platform.redis.cli('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const secret = await platform.resetSecret(tenant, account.clientId);

    expect(Number(killed)).toBeGreaterThanOrEqual(2);
    expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);
    const after = await platform.grantToken(tenant, { clientId: account.clientId, secret });
    expect(await platform.atEveryStore(after)).toEqual([LISTED, LISTED]);
    await everyStoreLive(1);
    expect(await platform.atEveryStore(before)).toEqual([REVOKED, REVOKED]);
  }, 120_000);

  test('When Redis is flushed, or restarted empty, then no revoked token comes back to life', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    await platform.published(() => platform.deleteServiceAccount(tenant, account.clientId));
    expect(await platform.atEveryStore(token)).toEqual([REVOKED, REVOKED]);

    expect(await platform.redis.cli('FLUSHALL')).toBe('OK');
    expect(await platform.atEveryStore(token)).toEqual([REVOKED, REVOKED]);

    await platform.redis.stop();
    await platform.redis.start();
    await everyStoreLive(1);
    expect(await platform.atEveryStore(token)).toEqual([REVOKED, REVOKED]);
  }, 120_000);

  test('When the token service and Redis are both down, then a Plant Store answers 503, not 200; when they are back, the token works again', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(token)).toEqual([LISTED, LISTED]);

    await platform.stopTokenService();
    // Redis alone still carries the stores: their maps are complete.
    expect(await platform.atEveryStore(token)).toEqual([LISTED, LISTED]);
    await platform.redis.stop();
    await everyStoreLive(0);

    const answers = await platform.atEveryStore(token);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual([
      {
        status: 503,
        body: { error: 503, message: 'Token verification is temporarily unavailable' },
      },
      {
        status: 503,
        body: { error: 503, message: 'Token verification is temporarily unavailable' },
      },
    ]);

    await platform.redis.start();
    await platform.startTokenService();
    await everyStoreLive(1);
    expect(await platform.atEveryStore(token)).toEqual([LISTED, LISTED]);
  }, 120_000);

  test('When a Plant Store starts while the token service is down, then /readyz says not ready until the first snapshot loads, and tokens get 503 meanwhile', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    await platform.stopTokenService();
    const late = await platform.startPlantStore();
    try {
      const notReady = await fetch(`${late.managementUrl}/readyz`);
      expect({ status: notReady.status, body: await notReady.json() }).toEqual({
        status: 503,
        body: { error: 503, message: 'Not ready: revocation' },
      });
      // Neither the JWKS nor the revocation state can be had: fail closed.
      expect(await listPlants(late, token)).toMatchObject({ status: 503 });

      await platform.startTokenService();
      await eventually(
        async () => (await fetch(`${late.managementUrl}/readyz`)).status === 200,
        'the late Plant Store is ready',
      );
      expect(await metric(late, 'revocation_live')).toBe(1);
      // The failed JWKS fetch of the outage is retried at most every 5 s (bearer verification's throttle).
      await eventually(
        async () => (await listPlants(late, token)).status !== 503,
        'the realm keys are fetched again',
      );
      expect(await listPlants(late, token)).toEqual(LISTED);
    } finally {
      await late.stop();
      platform.plantStores.splice(platform.plantStores.indexOf(late), 1);
    }
  }, 120_000);
});
