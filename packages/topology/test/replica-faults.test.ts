/**
 * Topology 2: replicas die and roll under mixed load through nginx (grants, lists, creates,
 * secret resets). A SIGKILL may fail only what was in flight on the killed replica (nginx
 * retries what is safe to retry); a SIGTERM, as a rolling update sends it, fails nothing. No
 * acknowledged plant is lost and no revoked token is accepted after the deadline, at any
 * replica, the restarted ones included.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { sleep, TEST_DATABASE_URL, type ServiceName, type ServiceProcess } from '@plant/test-kit';
import {
  cycleReplica,
  formatSummary,
  loadAccounts,
  REVOCATION_DEADLINE_MS,
  replicasOf as replicasOfTopology,
  rollReplica,
  startMixedLoad,
  startTopology,
  summarise,
  type FaultEvent,
  type LoadAccounts,
  type MixedLoad,
  type Topology,
} from '../src/index.js';

const SERVICES: ServiceName[] = ['plant-store', 'token-service', 'account-admin'];
let t: Topology;
let accounts: LoadAccounts;

beforeAll(async () => {
  t = await startTopology();
  accounts = await loadAccounts(t, 'faults');
}, 180_000);

afterAll(() => t?.close());

const replicasOf = (service: ServiceName) => replicasOfTopology(t, service);
const cycle = (replica: ServiceProcess, signal: NodeJS.Signals) => cycleReplica(t, replica, signal);
const roll = (service: ServiceName, index: number) => rollReplica(t, service, index);

/** Every id of the tenant's plants, read from Postgres itself. */
async function storedIds(tenant: string): Promise<Set<string>> {
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string }>(
      'select id::text as id from plants.plants where tenant = $1',
      [tenant],
    );
    return new Set(rows.map((r) => r.id));
  } finally {
    await db.end();
  }
}

/** Every revoked token at every Plant Store replica, once the deadline has passed for all of them: how many were accepted. */
async function finalProbe(load: MixedLoad): Promise<number> {
  await sleep(REVOCATION_DEADLINE_MS);
  const answers = await Promise.all(
    load.revoked.flatMap(({ token }) =>
      t.platform.plantStores.map((store) =>
        t.listPlants(token, { base: store.url, query: 'limit=1' }),
      ),
    ),
  );
  return answers.filter((a) => a.status !== 401).length;
}

describe('replicas killed and rolled under mixed load through nginx', () => {
  test('When one replica of each service is SIGKILLed and started again under load, then only requests in flight on it fail, no acknowledged plant is lost, no revoked token is accepted after the deadline, and each is ready again', async () => {
    const load = startMixedLoad(t, accounts);
    await sleep(1500);
    const events: FaultEvent[] = [];
    for (const service of SERVICES) {
      events.push(await cycle(replicasOf(service)[0]!, 'SIGKILL'));
      await sleep(1500);
    }
    await load.stop();
    const notRefused = await finalProbe(load);
    const summary = summarise(
      load,
      events,
      t.ingress.accessLog(),
      await storedIds(accounts.tenant),
    );
    process.stdout.write(
      formatSummary('SIGKILL one replica of each service under mixed load', summary),
    );

    expect(
      summary.failures.filter(
        (f) => !f.cause.startsWith('in flight') && !f.cause.startsWith('its back-channel'),
      ),
    ).toEqual([]);
    expect(summary.lost).toEqual([]);
    expect([summary.revokedAccepted, notRefused]).toEqual([0, 0]);
    expect(summary.revokedTokens).toBeGreaterThan(3);
    expect(summary.acknowledged).toBeGreaterThan(50);
    expect(events.map((e) => [e.replica, typeof e.readyMs, typeof e.servingMs])).toEqual(
      events.map((e) => [e.replica, 'number', 'number']),
    );
  });

  test('When every replica of every service gets SIGTERM in turn under load, as a rolling update does, then no request fails, no acknowledged plant is lost and no revoked token is accepted', async () => {
    const load = startMixedLoad(t, accounts);
    await sleep(1000);
    const events: FaultEvent[] = [];
    for (const service of SERVICES) {
      for (let index = 0; index < replicasOf(service).length; index++)
        events.push(await roll(service, index));
    }
    await sleep(1000);
    await load.stop();
    const notRefused = await finalProbe(load);
    const summary = summarise(
      load,
      events,
      t.ingress.accessLog(),
      await storedIds(accounts.tenant),
    );
    process.stdout.write(
      formatSummary('SIGTERM every replica in turn (rolling update) under mixed load', summary),
    );

    expect(summary.failures.map((f) => `${f.request.op} ${f.cause}`)).toEqual([]);
    expect(summary.lost).toEqual([]);
    expect([summary.revokedAccepted, notRefused]).toEqual([0, 0]);
    expect(summary.revokedTokens).toBeGreaterThan(3);
  });
});
