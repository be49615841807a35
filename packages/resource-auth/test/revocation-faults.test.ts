/**
 * The revocation map under Redis faults, on a redis-server of this file alone (stopped,
 * restarted, flushed, paused, its subscriber connection killed), with a stand-in for the
 * token service's internal API. Never a revoked token accepted; 'unavailable' when nothing
 * can answer; recovery without a restart.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { captureLogs, eventually, sleep, uniqueName, type CapturedLogger } from '@plant/test-kit';
import { createRevocationSync, REVOCATION_CHANNEL, type RevocationSync } from '../src/index.js';
import {
  INTERNAL_TOKEN,
  startDedicatedRedis,
  startFakeInternalApi,
  type DedicatedRedis,
  type FakeInternalApi,
} from './revocation-support.js';

let api: FakeInternalApi;
let redis: DedicatedRedis;
let admin: Redis;
let sync: RevocationSync;
let registry: Registry;
let captured: CapturedLogger;
const allLogs: string[] = [];

beforeAll(async () => {
  api = await startFakeInternalApi();
  redis = await startDedicatedRedis();
  admin = redis.client();
});

afterAll(async () => {
  await redis.close();
  await api.close();
  expect(allLogs.join('')).not.toContain(INTERNAL_TOKEN);
  expect(api.unauthorized()).toBe(0);
});

beforeEach(async () => {
  captured = captureLogs('revocation-test');
  registry = new Registry();
  sync = createRevocationSync({
    redis: redis.url,
    tokenServiceUrl: api.url,
    internalToken: INTERNAL_TOKEN,
    resyncMs: 60_000,
    heartbeatMs: 300,
    logger: captured.logger,
    metricsRegistry: registry,
  });
  await sync.start();
  expect(sync.state()).toMatchObject({ ready: true, live: true });
});

afterEach(async () => {
  await sync.stop();
  allLogs.push(captured.text());
  // A test that stopped or paused the server leaves it running for the next one.
  await redis.start().catch(() => undefined);
});

async function metric(name: string): Promise<Record<string, number>> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return Object.fromEntries(
    values.map((v) => [
      Object.values(v.labels)
        .filter((l) => l !== undefined)
        .join(',') || '_',
      v.value,
    ]),
  );
}

function newPrincipal(): { tenant: string; sub: string } {
  const tenant = uniqueName('revf');
  const sub = `sa-${uniqueName('p')}`;
  api.addPrincipal(tenant, sub);
  return { tenant, sub };
}

describe('revocation sync: Redis down', () => {
  test('When Redis is stopped and a reset happens meanwhile, then the old token is refused by the fallback lookup and the new one accepted', async () => {
    const { tenant, sub } = newPrincipal();
    await redis.stop();
    await eventually(() => !sync.state().live, 'the sync notices');

    api.revoke(tenant, sub);

    const old = sync.check(tenant, sub, 1);
    expect(old).toBeInstanceOf(Promise);
    await expect(old).resolves.toBe('revoked');
    expect(sync.check(tenant, sub, 2)).toBe('valid'); // the answer is cached: synchronous
    expect(api.lookups(tenant, sub)).toBe(1);
    expect(await metric('revocation_fallbacks_total')).toMatchObject({ revoked: 1, valid: 1 });
    expect(await metric('revocation_fallback_lookups_total')).toMatchObject({ found: 1 });
    expect(await metric('revocation_subscription_up')).toEqual({ _: 0 });
    expect(captured.text()).toContain('revocation subscription lost');
  });

  test('When Redis is down, then concurrent checks of one principal share one lookup, and its answer is reused for at most a second', async () => {
    const { tenant, sub } = newPrincipal();
    await redis.stop();
    await eventually(() => !sync.state().live, 'the sync notices');

    const verdicts = await Promise.all([1, 1, 1, 1].map((ver) => sync.check(tenant, sub, ver)));
    expect(verdicts).toEqual(['valid', 'valid', 'valid', 'valid']);
    expect(api.lookups(tenant, sub)).toBe(1);

    api.revoke(tenant, sub);
    await sleep(1100);

    await expect(Promise.resolve(sync.check(tenant, sub, 1))).resolves.toBe('revoked');
    expect(api.lookups(tenant, sub)).toBe(2);
  });

  test('When Redis is down and the principal never existed, then its token is refused (not 503)', async () => {
    const tenant = uniqueName('revf');
    await redis.stop();
    await eventually(() => !sync.state().live, 'the sync notices');

    await expect(Promise.resolve(sync.check(tenant, 'sa-never-created', 1))).resolves.toBe(
      'revoked',
    );
    expect(await metric('revocation_fallback_lookups_total')).toMatchObject({ not_found: 1 });
  });

  test('When Redis and the token service are both down, then a check answers unavailable, but a token memory proves revoked is still refused', async () => {
    const { tenant, sub } = newPrincipal();
    const revoked = newPrincipal();
    await admin.publish(
      REVOCATION_CHANNEL,
      JSON.stringify(api.revoke(revoked.tenant, revoked.sub)),
    );
    await eventually(
      () => sync.check(revoked.tenant, revoked.sub, 1) === 'revoked',
      'the event is applied',
    );
    await redis.stop();
    await eventually(() => !sync.state().live, 'the sync notices');
    api.setDown(true);
    try {
      await expect(Promise.resolve(sync.check(tenant, sub, 1))).resolves.toBe('unavailable');
      expect(sync.check(revoked.tenant, revoked.sub, 1)).toBe('revoked');
      await expect(Promise.resolve(sync.check(revoked.tenant, revoked.sub, 2))).resolves.toBe(
        'unavailable',
      );
      expect(await metric('revocation_fallback_lookups_total')).toMatchObject({ failed: 2 });
      expect(await metric('revocation_fallbacks_total')).toMatchObject({
        unavailable: 2,
        revoked: 1,
      });
    } finally {
      api.setDown(false);
    }
  });

  test('When Redis comes back, then the sync re-subscribes, re-syncs and is live again without a restart', async () => {
    const { tenant, sub } = newPrincipal();
    const later = newPrincipal();
    await redis.stop();
    await eventually(() => !sync.state().live, 'the sync notices');
    api.revoke(tenant, sub); // its publish is lost: nobody is subscribed

    await redis.start();
    await eventually(() => sync.state().live, 'the sync is live again', 15_000);

    // The reconnect's resync brought the change made while Redis was down...
    expect(sync.check(tenant, sub, 1)).toBe('revoked');
    expect(sync.check(tenant, sub, 2)).toBe('valid');
    // ...and events flow again.
    await admin.publish(REVOCATION_CHANNEL, JSON.stringify(api.revoke(later.tenant, later.sub)));
    await eventually(
      () => sync.check(later.tenant, later.sub, 1) === 'revoked',
      'the event after recovery is applied',
    );
    expect(api.lookups(later.tenant, later.sub)).toBe(0);
    expect(await metric('revocation_live')).toEqual({ _: 1 });
  });
});

describe('revocation sync: subscription faults', () => {
  test('When the subscriber connection is killed and a change is committed before the reconnect resync, then it is refused meanwhile and after, and the resync reads the change feed, not the snapshot', async () => {
    const { tenant, sub } = newPrincipal();
    const changesBefore = api.changesRequests();
    const snapshotsBefore = api.snapshotRequests();
    let release!: () => void;
    // The reconnect's resync waits until the change is committed, then reads the feed.
    api.holdResyncs(new Promise<void>((resolve) => (release = resolve)), 'before-read');
    try {
      const killed = await admin.client('KILL', 'TYPE', 'pubsub');
      expect(killed).toBeGreaterThanOrEqual(1);
      await eventually(
        () => api.changesRequests() > changesBefore,
        'the reconnect asks for the changes',
      );
      expect(sync.state()).toMatchObject({ subscribed: true, live: false });

      api.revoke(tenant, sub); // committed; its publish is lost

      // Re-subscribed but not yet re-synced: events from the gap are missing, so no answer from memory.
      await expect(Promise.resolve(sync.check(tenant, sub, 1))).resolves.toBe('revoked');
      release();
      await eventually(() => sync.state().live, 'the reconnect resync completes');
    } finally {
      release();
      api.holdResyncs(undefined);
    }

    expect(sync.check(tenant, sub, 1)).toBe('revoked');
    expect(sync.check(tenant, sub, 2)).toBe('valid');
    expect(api.snapshotRequests()).toBe(snapshotsBefore);
  });

  test('When Redis stops answering without closing the connection, then the heartbeat notices and checks fall back', async () => {
    const { tenant, sub } = newPrincipal();
    const pid = Number((await admin.info('server')).match(/process_id:(\d+)/)![1]);
    process.kill(pid, 'SIGSTOP');
    try {
      await eventually(() => !sync.state().live, 'the heartbeat notices', 10_000);
      api.revoke(tenant, sub);
      await expect(Promise.resolve(sync.check(tenant, sub, 1))).resolves.toBe('revoked');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await eventually(() => sync.state().live, 'the sync is live again', 15_000);
    expect(sync.check(tenant, sub, 1)).toBe('revoked');
    expect(captured.text()).toContain('revocation subscriber unresponsive');
  });

  test('When Redis is flushed or restarted empty, then nothing revoked comes back to life', async () => {
    const { tenant, sub } = newPrincipal();
    await admin.publish(
      REVOCATION_CHANNEL,
      JSON.stringify(api.revoke(tenant, sub, { deleted: true })),
    );
    await eventually(() => sync.check(tenant, sub, 5) === 'revoked', 'the deletion is applied');

    await admin.flushall();
    expect(sync.check(tenant, sub, 5)).toBe('revoked');

    await redis.stop();
    await redis.start();
    await eventually(() => sync.state().live, 'the sync is live again', 15_000);
    expect(sync.check(tenant, sub, 5)).toBe('revoked');
    // A stale or forged "not deleted" event after the restart changes nothing either.
    await admin.publish(
      REVOCATION_CHANNEL,
      JSON.stringify({ tenant, sub, version: 1, deleted: false }),
    );
    await eventually(
      async () => ((await metric('revocation_events_received_total')).unchanged ?? 0) >= 1,
      'the stale event is received',
    );
    expect(sync.check(tenant, sub, 5)).toBe('revoked');
  });
});
