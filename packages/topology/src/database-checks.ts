/**
 * What the database topologies (primary failover, restore drill, rolling upgrade) check after
 * the fault: every change the platform acknowledged is in the database that serves now (plants,
 * service accounts created and deleted, audit events of every acknowledged reset), and every
 * secret a reset replaced is refused. Beside the mixed load, a churn of service accounts
 * (created, then deleted) gives the creates and deletes to check.
 */
import { eventually, sleep, uniqueName } from '@plant/test-kit';
import type { LoadAccounts, MixedLoad } from './mixed-load.js';
import type { PooledDatabase } from './pooled-database.js';
import type { PortalUser, Topology, TopologyOptions } from './topology-platform.js';

/**
 * The token service's failure throttles out of the way of `checkAcknowledged`, which presents
 * every replaced secret (hundreds in a long run) of one client from one address: each must be
 * answered 401, not 429.
 */
export const UNTHROTTLED_SECRET_CHECKS = {
  CLIENT_AUTH_FAILURES_PER_CLIENT_IP: '100000',
  CLIENT_AUTH_FAILURES_PER_IP: '100000',
  CLIENT_AUTH_FAILURES_PER_CLIENT: '1000000',
};

/**
 * The platform of a database topology: each service through the pooler as its own role (the
 * token service's role for the operator CLI too), plant-store without named statements
 * (transaction pooling), the secret-check throttles out of the way.
 */
export function pooledPlatform(
  db: PooledDatabase,
  options: { serviceRoot?: string } = {},
): NonNullable<TopologyOptions['platform']> {
  return {
    ...options,
    databaseUrl: db.pooledUrlOf('token-service'),
    serviceEnv: {
      'token-service': UNTHROTTLED_SECRET_CHECKS,
      'plant-store': {
        DATABASE_URL: db.pooledUrlOf('plant-store'),
        DATABASE_NAMED_STATEMENTS: 'false',
      },
      'account-admin': { DATABASE_URL: db.pooledUrlOf('account-admin') },
    },
  };
}

/** Service accounts created and deleted by one worker, each state as the portal acknowledged it. */
export interface AccountChurn {
  /** Client ids whose create was answered 201 and that were not deleted since. */
  alive: Set<string>;
  /** Client ids whose delete was answered 204. */
  deleted: Set<string>;
  /** Creates and deletes not answered as expected (their outcome unknown: neither set holds them). */
  failed: number;
  /** Answers so far. */
  answered: number;
  stop(): Promise<void>;
}

/** How many accounts the churn keeps before it deletes the oldest: far below the tenant's cap of 25. */
const CHURN_KEPT = 6;

export function startAccountChurn(t: Topology, admin: PortalUser, paceMs = 20): AccountChurn {
  let running = true;
  const churn: AccountChurn = {
    alive: new Set(),
    deleted: new Set(),
    failed: 0,
    answered: 0,
    stop: async () => undefined,
  };
  const step = async () => {
    const oldest = churn.alive.size >= CHURN_KEPT ? [...churn.alive][0] : undefined;
    if (oldest === undefined) {
      const created = await t
        .portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('churn') })
        .catch(() => undefined);
      churn.answered += 1;
      if (created?.status === 201)
        churn.alive.add((created.body as { client_id: string }).client_id);
      else churn.failed += 1;
      return;
    }
    const gone = await t
      .portalApi(admin, 'DELETE', `/api/v1/service-accounts/${oldest}`)
      .catch(() => undefined);
    churn.answered += 1;
    // Either way the account is no longer known to be alive; only a 204 says it is gone.
    churn.alive.delete(oldest);
    if (gone?.status === 204) churn.deleted.add(oldest);
    else churn.failed += 1;
  };
  const loop = (async () => {
    while (running) {
      await step();
      await sleep(paceMs);
    }
  })();
  churn.stop = async () => {
    running = false;
    await loop;
  };
  return churn;
}

/** Runs one query on the platform's database as its superuser and answers its rows (psql -At). */
export type SqlRunner = (sql: string) => Promise<string>;

export interface AcknowledgedCheck {
  plantsAcknowledged: number;
  plantsMissing: string[];
  accountsAlive: number;
  accountsAliveMissing: string[];
  accountsDeleted: number;
  accountsDeletedBack: string[];
  resetsAcknowledged: number;
  resetAuditMissing: string[];
  retiredSecrets: number;
  /** Statuses of a grant with each replaced secret: each must be 401. */
  retiredSecretAnswers: number[];
}

const quoted = (values: Iterable<string>) =>
  [...values].map((v) => `'${v.replace(/'/g, "''")}'`).join(',') || 'null';

/**
 * Reads, from the database that serves now, whether each acknowledged change is in it, and
 * presents every replaced secret to the token endpoint (through the ingress, from an address
 * of its own so the load's throttles are not its).
 */
export async function checkAcknowledged(
  t: Topology,
  sql: SqlRunner,
  { tenant, rotated }: LoadAccounts,
  load: MixedLoad,
  churn: AccountChurn,
): Promise<AcknowledgedCheck> {
  const ids = (text: string) => new Set(text.split('\n').filter((line) => line !== ''));
  const plants = ids(
    await sql(`select id from plants.plants where id in (${quoted(load.acknowledgedIds)})`),
  );
  const accounts = ids(
    await sql(
      `select sub from auth.service_accounts where sub in (${quoted([...churn.alive, ...churn.deleted])})`,
    ),
  );
  const resets = load.retired.map((r) => r.requestId);
  const audited = ids(
    await sql(
      `select request_id from admin.audit_events where action = 'service_account.reset_secret' and request_id in (${quoted(resets)})`,
    ),
  );
  const agent = t.ingress.agent('127.0.0.9');
  // Right after a repoint the pools still hold connections to the lost server, and the token
  // service answers 503 until they are replaced: a refusal is only read once the current secret
  // is served again, so a 401 means "replaced", not "no database yet".
  await eventually(
    async () => (await t.grant(tenant, rotated.clientId, rotated.secret, { agent })).status === 200,
    'the current secret served on the database that serves now',
    60_000,
  );
  const retiredSecretAnswers: number[] = [];
  for (const { secret } of load.retired)
    retiredSecretAnswers.push((await t.grant(tenant, rotated.clientId, secret, { agent })).status);
  return {
    plantsAcknowledged: load.acknowledgedIds.length,
    plantsMissing: load.acknowledgedIds.filter((id) => !plants.has(id)),
    accountsAlive: churn.alive.size,
    accountsAliveMissing: [...churn.alive].filter((id) => !accounts.has(id)),
    accountsDeleted: churn.deleted.size,
    accountsDeletedBack: [...churn.deleted].filter((id) => accounts.has(id)),
    resetsAcknowledged: resets.length,
    resetAuditMissing: resets.filter((id) => !audited.has(id)),
    retiredSecrets: load.retired.length,
    retiredSecretAnswers,
  };
}

/** The check as lines of the printed block. */
export function formatAcknowledged(c: AcknowledgedCheck): string {
  const refused = c.retiredSecretAnswers.filter((s) => s === 401).length;
  return [
    `  acknowledged and present: plants ${c.plantsAcknowledged - c.plantsMissing.length}/${c.plantsAcknowledged}, service accounts created ${c.accountsAlive - c.accountsAliveMissing.length}/${c.accountsAlive}, reset audit events ${c.resetsAcknowledged - c.resetAuditMissing.length}/${c.resetsAcknowledged}`,
    `  acknowledged deletes still gone: ${c.accountsDeleted - c.accountsDeletedBack.length}/${c.accountsDeleted}`,
    `  secrets replaced by an acknowledged reset, refused now: ${refused}/${c.retiredSecrets}`,
    '',
  ].join('\n');
}
