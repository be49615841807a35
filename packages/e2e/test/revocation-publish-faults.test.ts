/**
 * End to end: the token service's revocation publish fails (its
 * Redis refuses PUBLISH) while the Plant Stores' own subscriptions stay up, so they stay live
 * and hear nothing. The token service keeps the change and publishes it again until Redis takes
 * it: the old token is refused by the republished event, long before the stores' 60 s re-sync
 * would have caught it. How soon the token service publishes again (at most REPUBLISH_MAX_MS
 * apart) is checked on an injected clock (services/token-service/test/revocation-publisher.test.ts):
 * a wall-clock bound here would measure the machine's load, not the service.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually } from '@plant/test-kit';
import { metric } from '../src/index.js';
import {
  eventsReceived,
  LISTED,
  REVOKED,
  startPlatform,
  type Platform,
} from './revocation-platform.js';

let platform: Platform;
let tenant: string;

beforeAll(async () => {
  platform = await startPlatform({ stores: 1, resyncMs: 60_000 });
  tenant = await platform.createTenant('rpf');
}, 120_000);
afterAll(() => platform?.close(), 60_000);

const refusePublish = () => platform.redis.cli('ACL', 'SETUSER', 'default', '-publish');
const allowPublish = () => platform.redis.cli('ACL', 'SETUSER', 'default', '+publish');

describe('a revocation publish that fails', () => {
  test('When the publish of a reset fails while the Plant Store stays live, then the republished event makes the store refuse the old token once Redis takes publishes again', async () => {
    const account = await platform.createServiceAccount(tenant);
    const token = await platform.grantToken(tenant, account);
    expect(await platform.atEveryStore(token)).toEqual([LISTED]);

    expect(await refusePublish()).toBe('OK');
    // Read while nothing can be published: every event the store hears from now on is a republish.
    const heardBefore = await eventsReceived(platform.plantStores[0]!);
    try {
      await platform.resetSecret(tenant, account.clientId);
      // Nothing reached the store and its subscription is fine: it is live and still takes the token.
      expect(await metric(platform.plantStores[0]!, 'revocation_live')).toBe(1);
      expect(await platform.atEveryStore(token)).toEqual([LISTED]);
      expect(await metric(platform.tokenService, 'revocation_publish_pending')).toBe(1);
    } finally {
      expect(await allowPublish()).toBe('OK');
    }
    await eventually(
      async () => (await platform.atEveryStore(token))[0]!.status === 401,
      'the store refuses the old token',
    );

    // The republished event revoked it (the store heard one more event), not a re-sync.
    expect(await eventsReceived(platform.plantStores[0]!)).toBeGreaterThan(heardBefore);
    expect(await platform.atEveryStore(token)).toEqual([REVOKED]);
    expect(await metric(platform.plantStores[0]!, 'revocation_live')).toBe(1);
    expect(await metric(platform.tokenService, 'revocation_publish_pending')).toBe(0);
  }, 60_000);

  test('When several changes of one account fail to publish, then one republish of its latest version revokes every older token', async () => {
    const account = await platform.createServiceAccount(tenant);
    const first = await platform.grantToken(tenant, account);

    expect(await refusePublish()).toBe('OK');
    // Read while nothing can be published: every event the store hears from now on is a republish.
    const heardBefore = await eventsReceived(platform.plantStores[0]!);
    let second = '';
    try {
      const secret = await platform.resetSecret(tenant, account.clientId);
      second = await platform.grantToken(tenant, { clientId: account.clientId, secret });
      await platform.updateServiceAccount(tenant, account.clientId, { role: 'Edit' });
      expect(await platform.atEveryStore(second)).toEqual([LISTED]);
    } finally {
      expect(await allowPublish()).toBe('OK');
    }

    await eventually(
      async () => (await platform.atEveryStore(second)).every((a) => a.status === 401),
      'the store refuses the second token',
    );

    expect(await eventsReceived(platform.plantStores[0]!)).toBeGreaterThan(heardBefore);
    expect(await platform.atEveryStore(first)).toEqual([REVOKED]);
    expect(await platform.atEveryStore(second)).toEqual([REVOKED]);
  }, 60_000);
});
