/**
 * Revocation state bounded by the token lifetime, and resync by change feed, against the
 * processes: the token service and a Plant Store on a Postgres cluster of this file's own (the
 * feed, its floor and a quiet stretch are global), resyncing every 500 ms. Changes made with SQL
 * are commits whose publish never happened (the publisher died): only the resync can bring them.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { eventually, sleep, type ServiceProcess } from '@plant/test-kit';
import { httpRequest, startPlatform, type Platform } from '../src/index.js';

/** ACCESS_TOKEN_TTL (the default) plus the 60 s margin. */
const HORIZON_SECONDS = 300 + 60;

let p: Platform;
let db: Knex;
let tenant: string;

beforeAll(async () => {
  p = await startPlatform({ privatePostgres: true, plantStores: 1, resyncMs: 500 });
  db = createDatabase({ connectionString: p.databaseUrl, schema: 'auth', poolMax: 2 });
  tenant = await p.createTenant('feed');
}, 90_000);

afterAll(async () => {
  await db?.destroy();
  await p?.close();
});

/** Every series of a metric of a process, by its `kind` label. */
async function byKind(svc: ServiceProcess, name: string): Promise<Record<string, number>> {
  const text = (await httpRequest(`${svc.managementUrl}/metrics`)).text;
  const series = [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))];
  return Object.fromEntries(series.map((m) => [/kind="(\w+)"/.exec(m[1]!)?.[1], Number(m[2])]));
}

async function mapEntries(svc: ServiceProcess): Promise<number> {
  const match = /^revocation_map_entries(?:\{[^}]*\})? (\S+)$/m.exec(
    (await httpRequest(`${svc.managementUrl}/metrics`)).text,
  );
  return Number(match?.[1]);
}

/** The snapshot as a resource server reads it, this tenant's entries. */
async function snapshotEntries(): Promise<unknown[]> {
  const res = await httpRequest(`${p.internalUrl}/internal/v1/revocations`, {
    headers: { authorization: `Bearer ${p.envOf('plant-store').INTERNAL_API_TOKEN}` },
  });
  return (res.body as { entries: Array<{ tenant: string }> }).entries.filter(
    (e) => e.tenant === tenant,
  );
}

/** A reset committed with SQL and never published, recorded `ago` seconds in the past. */
async function resetBySql(sub: string, ago = 0): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('principals')
      .where({ realm: tenant, sub })
      .update({ token_version: trx.raw('token_version + 1') });
    await trx('revocation_changes')
      .where({ realm: tenant, sub })
      .update({ changed_at: trx.raw('now() - make_interval(secs => ?)', [ago]) });
  });
}

const status = async (token: string, store = p.plantStores[0]!) =>
  (await p.listPlants(token, 'limit=1', store)).status;

describe('resync by change feed', () => {
  test('When nothing changes, then each resync asks for the changes and transfers no entries, a few bytes each', async () => {
    const store = p.plantStores[0]!;
    await eventually(
      async () => ((await byKind(store, 'revocation_resync_requests_total')).changes ?? 0) >= 1,
      'a first resync by changes',
    );
    const before = {
      requests: await byKind(store, 'revocation_resync_requests_total'),
      entries: await byKind(store, 'revocation_resync_entries_total'),
      bytes: await byKind(store, 'revocation_resync_bytes_total'),
    };

    await sleep(2500);
    const requests = await byKind(store, 'revocation_resync_requests_total');
    const entries = await byKind(store, 'revocation_resync_entries_total');
    const bytes = await byKind(store, 'revocation_resync_bytes_total');

    const quiet = requests.changes! - before.requests.changes!;
    expect(quiet).toBeGreaterThanOrEqual(3);
    expect(requests.snapshot).toBe(1);
    expect(entries).toEqual(before.entries);
    expect((bytes.changes! - before.bytes.changes!) / quiet).toBeLessThan(80);
  });

  test('When a reset is committed but never published, then the next resync refuses the token minted before it', async () => {
    const account = await p.createServiceAccount(tenant);
    const token = await p.grantToken(tenant, account);
    expect(await status(token)).toBe(200);

    await resetBySql(account.clientId);

    await eventually(
      async () => (await status(token)) === 401,
      'the resync brings the reset',
      5000,
    );
  });

  test('When a reset is older than the token lifetime plus the margin, then it leaves the Plant Store\u2019s map and the snapshot', async () => {
    const account = await p.createServiceAccount(tenant);
    const token = await p.grantToken(tenant, account);
    const entriesBefore = await mapEntries(p.plantStores[0]!);

    // Recorded 4 s short of the horizon: it is needed for 4 more seconds.
    await resetBySql(account.clientId, HORIZON_SECONDS - 4);
    await eventually(
      async () => (await status(token)) === 401,
      'the resync brings the reset',
      5000,
    );
    expect(await mapEntries(p.plantStores[0]!)).toBe(entriesBefore + 1);

    await eventually(
      async () => (await mapEntries(p.plantStores[0]!)) === entriesBefore,
      'the entry expires from the map',
      10_000,
    );
    expect((await snapshotEntries()).map((e) => (e as { sub: string }).sub)).not.toContain(
      account.clientId,
    );
  });
});

describe('a gap the feed cannot bridge, and pruning', () => {
  test('When the Plant Store was away while the feed was pruned past its position, then its next resync loads the snapshot and catches up on a change it missed', async () => {
    const store = p.plantStores[0]!;
    const [old, missed] = [
      await p.createServiceAccount(tenant),
      await p.createServiceAccount(tenant),
    ];
    const token = await p.grantToken(tenant, missed);
    const snapshots = (await byKind(store, 'revocation_resync_requests_total')).snapshot;

    process.kill(store.pid, 'SIGSTOP');
    try {
      await resetBySql(old.clientId, HORIZON_SECONDS + 1);
      await resetBySql(missed.clientId);
      // The token service prunes at start: the old change goes, the floor passes the store's position.
      await p.restart(p.tokenService);
      await eventually(
        async () =>
          (await db('revocation_changes').where({ realm: tenant, sub: old.clientId }).first()) ===
          undefined,
        'the old change is pruned',
      );
    } finally {
      process.kill(store.pid, 'SIGCONT');
    }

    await eventually(
      async () => (await status(token)) === 401,
      'the snapshot brings the missed reset',
      10_000,
    );
    expect((await byKind(store, 'revocation_resync_requests_total')).snapshot).toBe(snapshots! + 1);
  });

  test('When a token was minted just before a reset and pruning runs, then the token stays refused, at the running store and at one started after the pruning', async () => {
    const account = await p.createServiceAccount(tenant);
    const token = await p.grantToken(tenant, account);
    const stale = await p.createServiceAccount(tenant);
    await resetBySql(stale.clientId, HORIZON_SECONDS + 1);
    await p.resetSecret(tenant, account.clientId);
    await eventually(async () => (await status(token)) === 401, 'the reset reaches the store');

    await p.restart(p.tokenService);
    await eventually(
      async () =>
        (await db('revocation_changes').where({ realm: tenant, sub: stale.clientId }).first()) ===
        undefined,
      'the old change is pruned',
    );
    const fresh = await p.startPlantStore();

    expect(await snapshotEntries()).toEqual(
      expect.arrayContaining([expect.objectContaining({ sub: account.clientId, version: 2 })]),
    );
    expect([await status(token), await status(token, fresh)]).toEqual([401, 401]);
    await sleep(1500);
    expect([await status(token), await status(token, fresh)]).toEqual([401, 401]);
  });
});
