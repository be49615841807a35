/**
 * Topology 7: a rolling upgrade across migrations, as a cluster rolls a release. The previous
 * release (PREVIOUS_RELEASE, built beside this checkout) runs every service's replicas behind
 * nginx, through PgBouncer, on a Postgres of the test's own, under mixed load; this checkout's
 * migrations are applied while it serves (the migration Job runs first), the previous
 * release's own black-box smoke (its seed flow) then runs against the new schema, and each
 * replica is replaced by this checkout's build, one by one. Nothing that worked before fails,
 * no revoked token is accepted, nothing acknowledged is lost. The migration rules that make
 * this hold are CONTRIBUTING.md's ("Migrations: expand, then contract").
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  eventually,
  REPO_ROOT,
  startPostgresCluster,
  type PostgresCluster,
  type ServiceName,
} from '@plant/test-kit';
import {
  appliedMigrations,
  buildPreviousRelease,
  checkAcknowledged,
  formatAcknowledged,
  formatSummary,
  loadAccounts,
  pooledPlatform,
  previousSeedFlow,
  replicasOf,
  rollReplica,
  signedInTenant,
  startAccountChurn,
  startMixedLoad,
  startPooledDatabase,
  startTopology,
  summarise,
  type AccountChurn,
  type FaultEvent,
  type LoadAccounts,
  type MixedLoad,
  type PooledDatabase,
  type PreviousRelease,
  type Topology,
} from '../src/index.js';

/**
 * The release rolled from: the commit before the newest token-service migration when this test
 * was written (0012-invitation-pages adds a column and an index). Move it forward at each
 * release; newer migrations are counted, never listed, so branches adding their own need no edit.
 */
const PREVIOUS_RELEASE = '80fdb6e65549134cd4d593d4b7ec0cc55fd06519';
const SERVICES: ServiceName[] = ['token-service', 'plant-store', 'account-admin'];

let release: PreviousRelease;
let cluster: PostgresCluster;
let db: PooledDatabase;
let t: Topology;
let accounts: LoadAccounts;
/** The test's load, stopped in afterAll too: a test that throws midway must not leave it running. */
let load: MixedLoad;
let churn: AccountChurn;

beforeAll(async () => {
  release = await buildPreviousRelease(PREVIOUS_RELEASE);
  // A Postgres of its own: the previous release, the current one and the migrations between
  // them hold many connections at once, which the shared server may not have to spare.
  cluster = await startPostgresCluster();
  db = await startPooledDatabase({ serverUrl: cluster.primary.urlOf() });
  await db.migrate(release.root);
  t = await startTopology({ platform: pooledPlatform(db, { serviceRoot: release.root }) });
  accounts = await loadAccounts(t, 'upgrade');
  // A fresh runner builds the previous release (install from the store, tsc): minutes on two busy cores.
}, 900_000);

afterAll(async () => {
  await load?.stop();
  await churn?.stop();
  await t?.close();
  await db?.pgbouncer.stop();
  await cluster?.destroy();
});

describe('a rolling upgrade across migrations under load', () => {
  test('When the current migrations are applied while the previous release serves and each replica is then replaced by the current build, then nothing fails, nothing acknowledged is lost and no revoked token is accepted; the previous release passes its own smoke on the new schema', async () => {
    const before = await appliedMigrations(db.sql);
    load = startMixedLoad(t, accounts);
    churn = startAccountChurn(t, accounts.admin);
    await eventually(() => load.retired.length >= 2, 'resets on the previous release', 60_000);
    const failingBefore = load.requests.filter((r) => !r.ok).length;

    const migrateAt = Date.now();
    await db.migrate();
    const migrateMs = Date.now() - migrateAt;
    const after = await appliedMigrations(db.sql);
    // The previous release's own smoke, on the new schema, while the load goes on.
    const { tenant, admin } = await signedInTenant(t, 'smoke');
    const smoke = await (await previousSeedFlow(release))(t, tenant, admin);

    const events: FaultEvent[] = [];
    for (const service of SERVICES)
      for (let index = 0; index < replicasOf(t, service).length; index++)
        events.push(await rollReplica(t, service, index, { root: REPO_ROOT }));
    const upgradedAt = Date.now();
    await eventually(
      () => load.retired.some((r) => r.retiredAt > upgradedAt),
      'a reset on the current release',
      60_000,
    );
    await load.stop();
    await churn.stop();

    const summary = summarise(load, events, t.ingress.accessLog(), new Set(load.acknowledgedIds));
    const acknowledged = await checkAcknowledged(t, db.sql, accounts, load, churn);
    const newer = Object.fromEntries(
      Object.entries(after).map(([schema, names]) => [
        schema,
        names.slice(before[schema]?.length ?? 0),
      ]),
    );
    process.stdout.write(
      formatSummary(
        `Rolling upgrade from ${PREVIOUS_RELEASE.slice(0, 12)} under mixed load (previous release ${release.reused ? 'reused from an earlier build' : `built in ${release.buildMs} ms`})`,
        summary,
      ),
    );
    process.stdout.write(
      [
        `  migrations applied while the previous release served: ${Object.entries(newer)
          .map(
            ([schema, names]) =>
              `${schema} +${names.length}${names.length > 0 ? ` (${names.join(', ')})` : ''}`,
          )
          .join('; ')} in ${migrateMs} ms`,
        `  failed requests: ${summary.failures.length} (${failingBefore} already failing before the upgrade)`,
        `  the previous release's seed flow on the new schema: ${smoke.grants.every((g) => g.status === 200) && smoke.oldSecret.status === 401 ? 'passed' : 'FAILED'}`,
        `  revoked tokens accepted: ${summary.revokedAccepted}`,
        formatAcknowledged(acknowledged),
      ].join('\n'),
    );

    // The upgrade crosses at least one migration the previous release did not have.
    expect(Object.values(newer).flat().length).toBeGreaterThan(0);
    for (const [schema, names] of Object.entries(before))
      expect(after[schema]!.slice(0, names.length)).toEqual(names);
    expect(failingBefore).toBe(0);
    expect(summary.failures.map((f) => `${f.request.op} ${f.cause}`)).toEqual([]);
    expect(summary.revokedAccepted).toBe(0);
    expect(summary.lost).toEqual([]);
    expect(acknowledged.accountsAliveMissing).toEqual([]);
    expect(acknowledged.accountsDeletedBack).toEqual([]);
    expect(acknowledged.resetAuditMissing).toEqual([]);
    expect(acknowledged.retiredSecretAnswers).toEqual(Array(acknowledged.retiredSecrets).fill(401));
    // The smoke, step by step, as the previous release's own ingress test asserts it.
    expect(smoke.grants.map((g) => g.status)).toEqual([200, 200, 200, 200]);
    expect(smoke.creates.map((c) => c.status)).toEqual([200, 200, 200, 200]);
    expect([smoke.oldSecret.status, smoke.newSecret.status]).toEqual([401, 200]);
    expect([...smoke.oldTokenDirect, ...smoke.oldTokenViaIngress].map((a) => a.status)).toEqual([
      401, 401, 401, 401,
    ]);
    expect(smoke.newTokenDirect.map((a) => a.status)).toEqual([200, 200]);
    expect(events.map((e) => typeof e.readyMs)).toEqual(events.map(() => 'number'));
  }, 600_000);
});
