/**
 * Topology 6: the restore drill of docs/deploy.md ("Backup and restore"). The primary's WAL
 * goes to an archive as it is written (pg_receivewal, a synchronous standby of its own: an
 * acknowledged commit is in the archive), a base backup is taken under mixed load, the load
 * goes on changing (resets, creates, deletes), then the primary is lost. Restored from the
 * backup and the archive to the latest point, every acknowledged change is there and every
 * secret a reset replaced is still refused. Restored to an earlier point instead, a replaced
 * secret comes back to life, which is what `cli service-accounts reset-secrets` is for.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually, startPostgresCluster, type PostgresCluster } from '@plant/test-kit';
import {
  checkAcknowledged,
  formatAcknowledged,
  loadAccounts,
  pooledPlatform,
  startAccountChurn,
  startMixedLoad,
  startPooledDatabase,
  startTopology,
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
  cluster = await startPostgresCluster({ withArchive: true });
  db = await startPooledDatabase({ serverUrl: cluster.primary.urlOf(), serverLoginRetry: 1 });
  await db.migrate();
  t = await startTopology({ platform: pooledPlatform(db) });
  accounts = await loadAccounts(t, 'restore');
}, 240_000);

afterAll(async () => {
  await load?.stop();
  await churn?.stop();
  await t?.close();
  await db?.pgbouncer.stop();
  await cluster?.destroy();
});

let backup: string;
let backupDoneAt: number;

describe('Postgres: backup under load, the primary lost, restored', () => {
  test('When the base backup is taken under load, changes go on and the primary is lost, then the restore to the latest point has every acknowledged change and every replaced secret stays refused', async () => {
    load = startMixedLoad(t, accounts);
    churn = startAccountChurn(t, accounts.admin);
    await eventually(() => load.retired.length >= 2, 'resets before the backup', 60_000);
    const backupAt = Date.now();
    backup = await cluster.baseBackup();
    backupDoneAt = Date.now();
    const [resetsAtBackup, deletesAtBackup] = [load.retired.length, churn.deleted.size];
    await eventually(
      () => load.retired.length >= resetsAtBackup + 3 && churn.deleted.size >= deletesAtBackup + 3,
      'resets and deletes after the backup',
      60_000,
    );
    await load.stop();
    await churn.stop();

    await cluster.primary.kill();
    const restoreAt = Date.now();
    const restored = await cluster.restore(backup);
    const restoredAt = Date.now();
    await db.pgbouncer.repoint(restored.urlOf());
    const acknowledged = await checkAcknowledged(
      t,
      (sql) => restored.sql(sql, db.database),
      accounts,
      load,
      churn,
    );
    process.stdout.write(
      [
        '== Restore drill: base backup under mixed load, primary lost, restored to the latest point',
        `  base backup (pg_basebackup -X stream) under load: ${backupDoneAt - backupAt} ms; after it ${load.retired.length - resetsAtBackup} resets and ${churn.deleted.size - deletesAtBackup} deletes acknowledged`,
        `  requests during the load: ${load.requests.length}, failed ${load.requests.filter((r) => !r.ok).length}; revoked tokens accepted: ${load.probes.accepted.length}`,
        `  restore (copy, archive recovery to the end of the WAL, promotion): ${restoredAt - restoreAt} ms`,
        formatAcknowledged(acknowledged),
      ].join('\n'),
    );

    expect(load.requests.filter((r) => !r.ok)).toEqual([]);
    expect(load.probes.accepted).toEqual([]);
    expect(acknowledged.plantsMissing).toEqual([]);
    expect(acknowledged.accountsAliveMissing).toEqual([]);
    expect(acknowledged.accountsDeletedBack).toEqual([]);
    expect(acknowledged.resetAuditMissing).toEqual([]);
    expect(acknowledged.retiredSecretAnswers).toEqual(Array(acknowledged.retiredSecrets).fill(401));
  }, 300_000);

  test('When the same backup is restored to a point before later resets, then the secret current at that point works again until `cli service-accounts reset-secrets` gives the tenant new ones', async () => {
    const { tenant, rotated } = accounts;
    // Resets run one after another: between one's answer and the next one's start, the secret
    // in use is the one the next reset replaced. The target is such a moment after the backup.
    const timing = new Map(load.requests.map((r) => [r.requestId, r]));
    const pairs = load.retired.slice(1).map((next, i) => ({
      previous: timing.get(load.retired[i]!.requestId)!,
      next,
      nextStart: timing.get(next.requestId)!.startedAt,
    }));
    const pair = pairs.find(
      (p) => p.previous.endedAt > backupDoneAt && p.nextStart > p.previous.endedAt + 2,
    )!;
    const target = Math.floor((pair.previous.endedAt + pair.nextStart) / 2);
    const resurrected = pair.next;
    const earlier = await cluster.restore(backup, {
      targetTime: new Date(target).toISOString(),
    });
    await db.pgbouncer.repoint(earlier.urlOf());
    const agent = t.ingress.agent('127.0.0.10');
    // The replicas' credential caches forget every account once the change feed cannot go on (a restored database).
    await eventually(
      async () =>
        (await t.grant(tenant, rotated.clientId, resurrected.secret, { agent })).status === 200,
      'the replaced secret works again on the earlier restore',
      30_000,
    );

    const answer = await t.platform.cli('service-accounts', 'reset-secrets', tenant);
    const reset = answer.reset as Array<{ client_id: string; secret: string }>;
    const fresh = reset.find((r) => r.client_id === rotated.clientId)!.secret;
    // Each replica takes the CLI's change when it hears it, or at its next read of the change
    // feed, every few seconds (credentials/follow-credential-changes.ts).
    let [after, freshGrant] = [0, 0];
    await eventually(
      async () => {
        after = (await t.grant(tenant, rotated.clientId, resurrected.secret, { agent })).status;
        freshGrant = (await t.grant(tenant, rotated.clientId, fresh, { agent })).status;
        return after === 401 && freshGrant === 200;
      },
      'the old secret refused and the new one working on every replica',
      30_000,
    );
    process.stdout.write(
      `== Restore to an earlier point (${new Date(target).toISOString()}): a secret replaced after it worked again; cli service-accounts reset-secrets reset ${reset.length} accounts, the old secret then answered ${after}, the new one ${freshGrant}\n\n`,
    );

    expect(after).toBe(401);
    expect(freshGrant).toBe(200);
    expect(reset.map((r) => r.client_id)).toContain(accounts.editor.clientId);
  }, 300_000);
});
