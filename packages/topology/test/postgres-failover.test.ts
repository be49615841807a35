/**
 * Topology 5: the Postgres primary dies under mixed load. A primary and a streaming standby
 * of the test's own (synchronous replication: a commit is acknowledged once both have it),
 * every service through a PgBouncer in transaction pooling in front of the primary (as
 * CloudNativePG's Pooler fronts its read-write Service); the primary is SIGKILLed, the standby
 * promoted and the pooler pointed at it, as a failover manager does. Shown: the requests that
 * failed and how long until service was back; nothing acknowledged lost (plants, service
 * accounts created and deleted, audit events); every secret a reset replaced before the kill
 * still refused on the promoted server; no revoked token accepted at any point.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually, sleep, startPostgresCluster, type PostgresCluster } from '@plant/test-kit';
import {
  checkAcknowledged,
  formatAcknowledged,
  formatSummary,
  loadAccounts,
  pooledPlatform,
  startAccountChurn,
  startMixedLoad,
  startPooledDatabase,
  startTopology,
  summarise,
  type AccountChurn,
  type LoadAccounts,
  type MixedLoad,
  type PooledDatabase,
  type Topology,
} from '../src/index.js';

let cluster: PostgresCluster;
let db: PooledDatabase;
let t: Topology;
let accounts: LoadAccounts;
/** The test's load, stopped in afterAll too: a test that throws midway must not leave it running. */
let load: MixedLoad;
let churn: AccountChurn;

beforeAll(async () => {
  cluster = await startPostgresCluster({ withStandby: true });
  db = await startPooledDatabase({ serverUrl: cluster.primary.urlOf(), serverLoginRetry: 1 });
  await db.migrate();
  t = await startTopology({ platform: pooledPlatform(db) });
  accounts = await loadAccounts(t, 'pgfail');
}, 240_000);

afterAll(async () => {
  await load?.stop();
  await churn?.stop();
  await t?.close();
  // The old primary is gone: the database is not dropped, the whole cluster is.
  await db?.pgbouncer.stop();
  await cluster?.destroy();
});

describe('Postgres: the primary dies under load and the standby is promoted', () => {
  test('When the primary is SIGKILLed under mixed load and the standby promoted, then service comes back, nothing acknowledged is lost, every replaced secret stays refused and no revoked token is accepted', async () => {
    const { primary, standby } = cluster;
    load = startMixedLoad(t, accounts);
    churn = startAccountChurn(t, accounts.admin);
    await eventually(
      () => load.retired.length >= 3 && churn.deleted.size >= 2,
      'resets and deletes acknowledged before the kill',
      60_000,
    );
    const resetsBeforeKill = load.retired.length;

    const killedAt = Date.now();
    await primary.kill();
    await standby!.promote();
    await db.pgbouncer.repoint(standby!.urlOf());
    const promotedAt = Date.now();
    // Back: a reset (portal → token service → Postgres, the audit event) acknowledged on the new primary.
    await eventually(
      () => load.retired.some((r) => r.retiredAt > promotedAt),
      'a reset is acknowledged after the promotion',
      60_000,
    );
    await sleep(1500);
    await load.stop();
    await churn.stop();

    const sql = (query: string) => standby!.sql(query, db.database);
    const summary = summarise(load, [], t.ingress.accessLog(), new Set(load.acknowledgedIds));
    const acknowledged = await checkAcknowledged(t, sql, accounts, load, churn);
    const failed = load.requests.filter((r) => !r.ok);
    const lastFailure = Math.max(killedAt, ...failed.map((r) => r.endedAt));
    const firstOkAfter = (op: string) =>
      load.requests.find((r) => r.ok && r.op === op && r.startedAt > killedAt)?.endedAt ?? Infinity;
    // Back once every operation that reads or writes Postgres answered again (grants mostly need no query).
    const backAt = Math.max(lastFailure, ...['list', 'create', 'reset'].map(firstOkAfter));
    process.stdout.write(
      formatSummary(
        `Postgres primary SIGKILLed under mixed load, standby promoted ${promotedAt - killedAt} ms later (kill, pg_ctl promote, PgBouncer repointed)`,
        summary,
      ),
    );
    process.stdout.write(
      [
        `  requests failed: ${failed.length}, all between the kill and ${lastFailure - killedAt} ms after it (${failed.filter((r) => r.startedAt < killedAt).length} sent before the kill)`,
        `  time until service back: ${backAt - killedAt} ms after the kill (first answered after it: ${['grant', 'list', 'create', 'reset'].map((op) => `${op} ${firstOkAfter(op) - killedAt} ms`).join(', ')})`,
        `  service accounts: ${churn.answered} creates and deletes answered, ${churn.failed} not acknowledged`,
        `  revoked tokens accepted: ${summary.revokedAccepted}`,
        formatAcknowledged(acknowledged),
      ].join('\n'),
    );

    expect(summary.revokedAccepted).toBe(0);
    expect(summary.revokedTokens).toBeGreaterThan(2);
    expect(acknowledged.plantsMissing).toEqual([]);
    expect(acknowledged.accountsAliveMissing).toEqual([]);
    expect(acknowledged.accountsDeletedBack).toEqual([]);
    expect(acknowledged.resetAuditMissing).toEqual([]);
    expect(acknowledged.retiredSecrets).toBeGreaterThan(resetsBeforeKill);
    expect(acknowledged.retiredSecretAnswers).toEqual(Array(acknowledged.retiredSecrets).fill(401));
    // Nothing failed before the primary did, and every failure was answered (no hang) in the Error shape or as no answer at all.
    expect(failed.filter((r) => r.endedAt < killedAt)).toEqual([]);
    for (const r of failed) expect(r.status === 0 || r.status >= 500).toBe(true);
  }, 300_000);
});
