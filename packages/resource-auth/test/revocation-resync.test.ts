/**
 * How the resync reads the change feed (a stand-in for the token service's internal API, one per
 * test, so a quiet feed is really quiet; the shared Redis for the subscription): a quiet resync
 * moves no entries, a gap the feed cannot bridge loads the snapshot again, an entry leaves memory
 * when its ttl has passed. packages/e2e/test/revocation-feed.test.ts repeats these against the
 * real token service.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { Registry } from 'prom-client';
import { captureLogs, eventually, sleep, TEST_REDIS_URL, uniqueName } from '@plant/test-kit';
import { createRevocationSync, type RevocationSync } from '../src/index.js';
import {
  INTERNAL_TOKEN,
  startFakeInternalApi,
  type FakeInternalApi,
} from './revocation-support.js';

let api: FakeInternalApi;
let sync: RevocationSync;
let registry: Registry;

beforeEach(async () => {
  api = await startFakeInternalApi();
});

afterEach(async () => {
  await sync?.stop();
  await api.close();
});

async function startSync(resyncMs: number): Promise<void> {
  registry = new Registry();
  sync = createRevocationSync({
    redis: TEST_REDIS_URL,
    tokenServiceUrl: api.url,
    internalToken: INTERNAL_TOKEN,
    resyncMs,
    logger: captureLogs('resync-test').logger,
    metricsRegistry: registry,
  });
  await sync.start();
}

async function byKind(name: string): Promise<Record<string, number>> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.kind ?? '_'), v.value]));
}

function newPrincipal(): { tenant: string; sub: string } {
  const principal = { tenant: uniqueName('rsy'), sub: `sa-${uniqueName('p')}` };
  api.addPrincipal(principal.tenant, principal.sub);
  return principal;
}

describe('revocation resync by change feed', () => {
  test('When nothing changes, then every resync after the first asks for the changes, receives no entries and a few bytes, and no snapshot is loaded again', async () => {
    for (let i = 0; i < 20; i++) {
      const p = newPrincipal();
      api.revoke(p.tenant, p.sub);
    }
    await startSync(100);
    const first = {
      entries: await byKind('revocation_resync_entries_total'),
      bytes: await byKind('revocation_resync_bytes_total'),
    };

    await eventually(() => sync.state().resyncs >= 6, 'five quiet resyncs');
    const requests = await byKind('revocation_resync_requests_total');
    const entries = await byKind('revocation_resync_entries_total');
    const bytes = await byKind('revocation_resync_bytes_total');

    expect(first.entries).toEqual({ snapshot: 20 });
    expect(requests.snapshot).toBe(1);
    expect(api.snapshotRequests()).toBe(1);
    expect(requests.changes).toBeGreaterThanOrEqual(5);
    expect(entries).toEqual({ snapshot: 20, changes: 0 });
    expect(bytes.changes! / requests.changes!).toBeLessThan(80);
    expect(sync.state()).toMatchObject({
      live: true,
      entries: 20,
      snapshotsLoaded: 1,
      position: '20',
    });
  });

  test('When a change is committed and not published, then the next resync brings it from the feed: only that entry moves', async () => {
    const { tenant, sub } = newPrincipal();
    await startSync(100);

    api.revoke(tenant, sub);

    await eventually(() => sync.check(tenant, sub, 1) === 'revoked', 'a resync brings the change');
    expect(await byKind('revocation_resync_entries_total')).toEqual({ snapshot: 0, changes: 1 });
    expect(sync.check(tenant, sub, 2)).toBe('valid');
  });

  test('When more changes wait than one page holds, then one resync reads every page', async () => {
    const principals = Array.from({ length: 1500 }, () => newPrincipal());
    await startSync(60_000);
    await sync.stop();
    await startSync(200);

    for (const p of principals) api.revoke(p.tenant, p.sub);

    await eventually(
      () => principals.every((p) => sync.check(p.tenant, p.sub, 1) === 'revoked'),
      'every change is read',
    );
    expect((await byKind('revocation_resync_requests_total')).changes).toBeGreaterThanOrEqual(2);
    expect(sync.state().snapshotsLoaded).toBe(1);
  });

  test('When the feed was truncated past our position (a gap it cannot bridge), then the next resync loads the snapshot and catches up on the change it missed', async () => {
    const { tenant, sub } = newPrincipal();
    await startSync(200);
    const before = sync.state().snapshotsLoaded;

    // In one turn of the event loop: no resync can read the change before the feed forgets its position.
    api.revoke(tenant, sub);
    api.truncate();

    await eventually(
      () => sync.check(tenant, sub, 1) === 'revoked',
      'the snapshot brings the change',
    );
    expect(sync.state().snapshotsLoaded).toBe(before + 1);
    expect((await byKind('revocation_resync_entries_total')).snapshot).toBe(1);
    expect(sync.state().live).toBe(true);
  });

  test('When an entry is older than its ttl (the token lifetime plus the margin), then it is gone from memory at the next resync and the metrics say so', async () => {
    const kept = newPrincipal();
    const old = newPrincipal();
    await startSync(200);

    api.revoke(kept.tenant, kept.sub, { ttl: 360 });
    api.revoke(old.tenant, old.sub, { deleted: true, ttl: 1 });
    await eventually(
      () => sync.check(old.tenant, old.sub, 1) === 'revoked',
      'the changes are read',
    );
    expect(sync.state().entries).toBe(2);
    await sleep(1100);

    await eventually(() => sync.state().entries === 1, 'the old entry expires');
    expect(sync.check(old.tenant, old.sub, 1)).toBe('valid');
    expect(sync.check(kept.tenant, kept.sub, 1)).toBe('revoked');
    expect(
      (await registry.getSingleMetric('revocation_entries_expired_total')!.get()).values[0]!.value,
    ).toBe(1);
  });
});

describe('revocation sync: stop', () => {
  test('When stopped, then checks fail closed and the subscription is gone', async () => {
    const { tenant, sub } = newPrincipal();
    await startSync(60_000);

    await sync.stop();

    expect(sync.check(tenant, sub, 1)).toBe('unavailable');
    expect(sync.state()).toMatchObject({ subscribed: false, live: false });
    expect(
      (await registry.getSingleMetric('revocation_subscription_up')!.get()).values[0]!.value,
    ).toBe(0);
  });
});
