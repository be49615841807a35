/**
 * The revocation map against the shared real Redis (events published on the real channel,
 * for this file's own tenants) and a stand-in for the token service's internal API.
 * Faults (Redis stopped, killed, flushed, paused) are in revocation-faults.test.ts, on a
 * redis-server of their own.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { revocationMessage } from '@plant/shared/token-service-client';
import {
  captureLogs,
  eventually,
  TEST_REDIS_URL,
  uniqueName,
  type CapturedLogger,
} from '@plant/test-kit';
import {
  createRevocationSync,
  REVOCATION_CHANNEL,
  type RevocationEntry,
  type RevocationSync,
  type RevocationSyncOptions,
} from '../src/index.js';
import {
  INTERNAL_TOKEN,
  startFakeInternalApi,
  type FakeInternalApi,
} from './revocation-support.js';

let api: FakeInternalApi;
let publisher: Redis;
const running: RevocationSync[] = [];
const logs: CapturedLogger[] = [];

beforeAll(async () => {
  api = await startFakeInternalApi();
  publisher = new Redis(TEST_REDIS_URL);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((sync) => sync.stop()));
});

afterAll(async () => {
  publisher.disconnect();
  await api.close();
  // Whatever happened, the internal token never reached a log line, and every call carried it.
  for (const captured of logs) expect(captured.text()).not.toContain(INTERNAL_TOKEN);
  expect(api.unauthorized()).toBe(0);
});

function newSync(overrides: Partial<RevocationSyncOptions> = {}) {
  const captured = captureLogs('revocation-test');
  logs.push(captured);
  const registry = new Registry();
  const sync = createRevocationSync({
    redis: TEST_REDIS_URL,
    tokenServiceUrl: api.url,
    internalToken: INTERNAL_TOKEN,
    // Long, so that only what a test does (events, reconnects) can change the map.
    resyncMs: 60_000,
    logger: captured.logger,
    metricsRegistry: registry,
    ...overrides,
  });
  running.push(sync);
  return { sync, registry, logs: captured };
}

async function metric(registry: Registry, name: string): Promise<Record<string, number>> {
  const found = registry.getSingleMetric(name);
  if (!found) throw new Error(`no metric ${name}`);
  const { values } = await found.get();
  return Object.fromEntries(
    values.map((v) => [
      Object.values(v.labels)
        .filter((l) => l !== undefined)
        .join(',') || '_',
      v.value,
    ]),
  );
}

/** A principal that exists in the token service's table, at version 1. */
function newPrincipal(): { tenant: string; sub: string } {
  const tenant = uniqueName('rev');
  const sub = `sa-${uniqueName('p')}`;
  api.addPrincipal(tenant, sub);
  return { tenant, sub };
}

/** Commits a change in the "token service" and publishes it, as the token service does. */
async function revokeAndPublish(
  tenant: string,
  sub: string,
  options: { deleted?: boolean } = {},
): Promise<RevocationEntry> {
  const entry = api.revoke(tenant, sub, options);
  await publisher.publish(REVOCATION_CHANNEL, JSON.stringify(entry));
  return entry;
}

describe('revocation sync: start-up', () => {
  test('When the first snapshot has loaded, then isReady turns true and checks answer synchronously from memory', async () => {
    const revoked = newPrincipal();
    api.revoke(revoked.tenant, revoked.sub);
    api.revoke(revoked.tenant, revoked.sub);
    const deleted = newPrincipal();
    api.revoke(deleted.tenant, deleted.sub, { deleted: true });
    const untouched = newPrincipal();
    const { sync, registry } = newSync();
    expect(sync.isReady()).toBe(false);
    expect(await metric(registry, 'revocation_resync_age_seconds')).toEqual({ _: Infinity });

    const startedAt = Date.now();
    await sync.start();
    const sinceStart = (Date.now() - startedAt) / 1000;

    expect(sync.isReady()).toBe(true);
    expect(sync.state()).toMatchObject({ ready: true, subscribed: true, live: true });
    expect([1, 2, 3, 4].map((ver) => sync.check(revoked.tenant, revoked.sub, ver))).toEqual([
      'revoked',
      'revoked',
      'valid',
      'valid',
    ]);
    expect([1, 2, 9].map((ver) => sync.check(deleted.tenant, deleted.sub, ver))).toEqual([
      'revoked',
      'revoked',
      'revoked',
    ]);
    expect(sync.check(untouched.tenant, untouched.sub, 1)).toBe('valid');
    expect(api.lookups(untouched.tenant, untouched.sub)).toBe(0);
    // The resync was requested during start: its age is at most the time since then, however
    // long a loaded machine took (no fixed bound to miss).
    const age = await metric(registry, 'revocation_resync_age_seconds');
    const sinceRead = (Date.now() - startedAt) / 1000;
    expect(age._).toBeGreaterThanOrEqual(0);
    expect(age._).toBeLessThanOrEqual(sinceRead);
    expect(sinceRead).toBeGreaterThanOrEqual(sinceStart);
    expect(await metric(registry, 'revocation_subscription_up')).toEqual({ _: 1 });
    expect(await metric(registry, 'revocation_live')).toEqual({ _: 1 });
  });

  test('When the snapshot API fails at start, then the sync is not ready, counts the failure, fails closed, and becomes ready once the API answers', async () => {
    const principal = newPrincipal();
    api.setDown(true);
    try {
      const { sync, registry } = newSync({ resyncMs: 300 });
      await sync.start();

      expect(sync.isReady()).toBe(false);
      expect(sync.state()).toMatchObject({ ready: false, live: false, resyncAgeMs: undefined });
      expect((await metric(registry, 'revocation_resync_failures_total'))._).toBeGreaterThanOrEqual(
        1,
      );
      await expect(sync.check(principal.tenant, principal.sub, 1)).resolves.toBe('unavailable');

      api.setDown(false);
      await eventually(() => sync.state().live, 'the sync is live');
      expect(sync.isReady()).toBe(true);
      expect(sync.check(principal.tenant, principal.sub, 1)).toBe('valid');
    } finally {
      api.setDown(false);
    }
  });
});

describe('revocation sync: events', () => {
  test('When a reset is published on the channel, then the older token is refused and the newer one accepted, from memory', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync, registry } = newSync();
    await sync.start();
    expect(sync.check(tenant, sub, 1)).toBe('valid');

    await revokeAndPublish(tenant, sub);

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'the event is applied');
    expect(sync.check(tenant, sub, 2)).toBe('valid');
    // At least ours: test files running alongside publish on the shared channel too.
    expect(
      (await metric(registry, 'revocation_events_received_total')).applied,
    ).toBeGreaterThanOrEqual(1);
    expect(api.lookups(tenant, sub)).toBe(0);
  });

  test('When a principal is deleted, then every token of it is refused whatever its ver', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync } = newSync();
    await sync.start();

    await revokeAndPublish(tenant, sub, { deleted: true });

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'the deletion is applied');
    expect([2, 3, 1000].map((ver) => sync.check(tenant, sub, ver))).toEqual([
      'revoked',
      'revoked',
      'revoked',
    ]);
  });

  test('When events arrive out of order or twice, then the highest version wins and a deletion sticks', async () => {
    const { tenant, sub } = newPrincipal();
    const other = newPrincipal();
    const { sync, registry } = newSync();
    await sync.start();
    const publish = (entry: RevocationEntry) =>
      publisher.publish(REVOCATION_CHANNEL, JSON.stringify(entry));

    await publish({ tenant, sub, version: 5, deleted: false });
    await publish({ tenant, sub, version: 3, deleted: false });
    await publish({ tenant, sub, version: 5, deleted: false });
    await publish({ tenant: other.tenant, sub: other.sub, version: 4, deleted: true });
    await publish({ tenant: other.tenant, sub: other.sub, version: 6, deleted: false });

    await eventually(
      async () => ((await metric(registry, 'revocation_events_received_total')).applied ?? 0) >= 3,
      'the events are received',
    );
    await eventually(
      async () =>
        ((await metric(registry, 'revocation_events_received_total')).unchanged ?? 0) >= 2,
      'the repeats are received',
    );
    expect([4, 5, 6].map((ver) => sync.check(tenant, sub, ver))).toEqual([
      'revoked',
      'valid',
      'valid',
    ]);
    expect([5, 6, 7].map((ver) => sync.check(other.tenant, other.sub, ver))).toEqual([
      'revoked',
      'revoked',
      'revoked',
    ]);
  });

  test('When a malformed event arrives, then it is counted and ignored, and later events still apply', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync, registry, logs: captured } = newSync();
    await sync.start();

    await publisher.publish(REVOCATION_CHANNEL, 'not json');
    await publisher.publish(
      REVOCATION_CHANNEL,
      JSON.stringify({ tenant, sub, version: '9', deleted: false }),
    );
    await revokeAndPublish(tenant, sub);

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'the valid event is applied');
    const received = await metric(registry, 'revocation_events_received_total');
    // The channel is the shared Redis's: test files running alongside publish valid events too.
    expect(received.malformed).toBe(2);
    expect(received.applied).toBeGreaterThanOrEqual(1);
    expect(sync.check(tenant, sub, 2)).toBe('valid');
    expect(captured.text()).toContain('malformed revocation event ignored');
  });

  test('When an event says when it was published, then revocation_event_delay_seconds measures its way here', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync, registry } = newSync();
    await sync.start();

    const entry = api.revoke(tenant, sub);
    await publisher.publish(
      REVOCATION_CHANNEL,
      revocationMessage(entry, { publishedMs: Date.now() - 3000 }),
    );

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'the event is applied');
    const { values } = (await registry
      .getSingleMetric('revocation_event_delay_seconds')!
      .get()) as {
      values: Array<{ metricName?: string; labels: Record<string, unknown>; value: number }>;
    };
    const sum = values.find((v) => v.metricName === 'revocation_event_delay_seconds_sum')!.value;
    const underOne = values.find(
      (v) => v.metricName === 'revocation_event_delay_seconds_bucket' && v.labels.le === 1,
    )!.value;
    const count = values.find(
      (v) => v.metricName === 'revocation_event_delay_seconds_count',
    )!.value;
    // Other files publish on the shared channel too (timely ones): ours is the one above a second.
    expect(sum).toBeGreaterThanOrEqual(3);
    expect(count - underOne).toBeGreaterThanOrEqual(1);
  });

  test('When an event arrives while a resync read before it is still loading, then the event survives the resync', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync } = newSync({ resyncMs: 200 });
    await sync.start();
    let release!: () => void;
    api.holdResyncs(new Promise<void>((resolve) => (release = resolve)), 'after-read');
    // Counted after the hold is in place: the next request counted is a held one.
    const requestsBefore = api.changesRequests();
    try {
      // The periodic resync reads the feed now (nothing new) and answers later.
      await eventually(() => api.changesRequests() > requestsBefore, 'a resync is in flight');
      await revokeAndPublish(tenant, sub);
      await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'the event is applied');
      const loadedBefore = sync.state().resyncs;
      release();
      api.holdResyncs(undefined);
      await eventually(() => sync.state().resyncs > loadedBefore, 'the stale resync is applied');
    } finally {
      release();
      api.holdResyncs(undefined);
    }

    expect(sync.check(tenant, sub, 1)).toBe('revoked');
    expect(sync.check(tenant, sub, 2)).toBe('valid');
  });

  test('When a change is committed but never published, then the periodic re-sync refuses the older token', async () => {
    const { tenant, sub } = newPrincipal();
    const { sync } = newSync({ resyncMs: 200 });
    await sync.start();

    api.revoke(tenant, sub);

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'a re-sync brings the change');
    expect(sync.check(tenant, sub, 2)).toBe('valid');
    expect(api.lookups(tenant, sub)).toBe(0);
  });

  test('When an event forged on Redis raises a version or deletes a principal that Postgres does not, then the next re-sync undoes it', async () => {
    const raised = newPrincipal();
    const deleted = newPrincipal();
    const really = newPrincipal();
    const { sync } = newSync({ resyncMs: 200 });
    await sync.start();
    // Each has a real revocation (version 2), so the snapshot lists it.
    for (const p of [raised, deleted, really]) await revokeAndPublish(p.tenant, p.sub);
    await eventually(
      () => sync.check(deleted.tenant, deleted.sub, 1) === 'revoked',
      'the real revocations are applied',
    );

    await publisher.publish(
      REVOCATION_CHANNEL,
      JSON.stringify({ tenant: raised.tenant, sub: raised.sub, version: 2 ** 40, deleted: false }),
    );
    await publisher.publish(
      REVOCATION_CHANNEL,
      JSON.stringify({ tenant: deleted.tenant, sub: deleted.sub, version: 2, deleted: true }),
    );
    // Stricter at once: a forged event can only refuse, never accept.
    await eventually(
      () =>
        sync.check(raised.tenant, raised.sub, 2) === 'revoked' &&
        sync.check(deleted.tenant, deleted.sub, 2) === 'revoked',
      'the forged events are applied',
    );

    await eventually(
      () =>
        sync.check(raised.tenant, raised.sub, 2) === 'valid' &&
        sync.check(deleted.tenant, deleted.sub, 2) === 'valid',
      'a re-sync confirms against the source',
    );
    // What Postgres holds stays: version 2 everywhere.
    for (const p of [raised, deleted, really])
      expect([sync.check(p.tenant, p.sub, 1), sync.check(p.tenant, p.sub, 2)]).toEqual([
        'revoked',
        'valid',
      ]);
  });
});
