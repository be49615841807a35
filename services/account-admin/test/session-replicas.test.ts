/**
 * A change to a person reaches their portal sessions at the next request on every replica:
 * two account-admin processes (replicas behind one address, sharing Redis), a session signed in
 * through the first, and the change made or published while the second serves the session.
 * The replicas resync their revocation maps only every 10 minutes here, so what makes the
 * change arrive is the published event and the per-request check, not a periodic re-read.
 *
 * Sessions also re-read their person a minute after the last read, for changes older than the
 * revocation maps keep.
 *
 * A role change or removal is written the way the token service's people use cases write it
 * (role and token version in one transaction, the revocation feed through its trigger) and
 * published on the revocation channel as its publisher does after commit.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import {
  eventually,
  platformPorts,
  startPlatform,
  TEST_REDIS_URL,
  TEST_SECRETS,
  USER_PASSWORD,
  uniqueName,
  type Platform,
} from '@plant/test-kit';
import { Redis } from 'ioredis';
import { createSessionStore } from '../src/sessions/session-store.js';

const run = promisify(execFile);
const REPO_ROOT = join(import.meta.dirname, '../../..');
import { signIn, type PortalSession } from './helpers/browser-client.js';

let ts: Platform;
let db: Knex;
let redis: Redis;
let tenant: string;
let replicaA: string;
let replicaB: string;

beforeAll(async () => {
  const ports = await platformPorts({ accountAdmins: 2, plantStores: 0 });
  ts = await startPlatform({ ports, redisUrl: TEST_REDIS_URL, resyncMs: 600_000 });
  [replicaA, replicaB] = ts.accountAdmins.map((a) => a.url) as [string, string];
  db = createDatabase({ connectionString: ts.databaseUrl, schema: 'auth', poolMax: 2 });
  redis = new Redis(TEST_REDIS_URL);
  tenant = await ts.createTenant('repl');
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await db?.destroy();
  await ts?.close();
});

/** GET /api/v1`path` on a replica with the session's cookie. */
const on = (replica: string, session: PortalSession, path = '/me') =>
  fetch(`${replica}/api/v1${path}`, { headers: session.headers() });

async function signedInPerson(role: 'View' | 'Edit' | 'Account Admin') {
  const email = await ts.createUser(tenant, role, `${uniqueName('p')}@${tenant}.test`);
  const session = await signIn(replicaA, tenant, { email, password: USER_PASSWORD });
  const sub = ((await (await on(replicaA, session)).json()) as { sub: string }).sub;
  return { email, session, sub };
}

/** As the token service's use case does: the change and the version bump commit together, then the entry is published. */
async function changePerson(
  sub: string,
  change: { role?: string; removed?: boolean },
  { publish = true } = {},
) {
  const entry = await db.transaction(async (trx) => {
    if (change.role !== undefined) await trx('users').where({ sub }).update({ role: change.role });
    const [row] = await trx('principals')
      .where({ sub })
      .update({
        token_version: trx.raw('token_version + 1'),
        ...(change.removed ? { deleted_at: trx.fn.now() } : {}),
      })
      .returning(['realm', 'sub', 'token_version', 'deleted_at']);
    return row as { realm: string; sub: string; token_version: number; deleted_at: Date | null };
  });
  if (!publish) return;
  await redis.publish(
    REVOCATION_CHANNEL,
    JSON.stringify({
      tenant: entry.realm,
      sub: entry.sub,
      version: entry.token_version,
      deleted: entry.deleted_at !== null,
    }),
  );
}

describe('changes to a person across replicas', () => {
  test('When both replicas serve a session, then each answers it as signed in', async () => {
    const { session, email } = await signedInPerson('View');
    for (const replica of [replicaA, replicaB]) {
      const res = await on(replica, session);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ email, role: 'View' });
    }
  });

  test('When an Account Admin is demoted, then the other replica refuses their next management call and shows the new role', async () => {
    const { session, sub } = await signedInPerson('Account Admin');
    expect((await on(replicaB, session, '/service-accounts')).status).toBe(200);

    await changePerson(sub, { role: 'View' });

    await eventually(async () => {
      const me = (await (await on(replicaB, session)).json()) as { role: string };
      return me.role === 'View';
    }, 'replica B sees the new role');
    const res = await fetch(`${replicaB}/api/v1/service-accounts`, {
      method: 'POST',
      headers: session.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ name: uniqueName('demoted') }),
    });
    expect(res.status).toBe(403);
    // The session lives on, with the role as it is now, on both replicas.
    expect(await (await on(replicaA, session)).json()).toMatchObject({ role: 'View' });
  });

  test('When a change has left the revocation maps (older than their horizon) and the session has not re-read its person for a minute, then its next request re-reads them', async () => {
    const { session, sub } = await signedInPerson('Account Admin');
    // Not published, and the replicas resync every 10 minutes: no map will hold this change, as
    // none holds a change older than the token lifetime plus the margin.
    await changePerson(sub, { role: 'Edit' }, { publish: false });
    expect(await (await on(replicaB, session)).json()).toMatchObject({ role: 'Account Admin' });
    const store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
    const id = session.jar.get('aa_session')!;
    await store.update(id, { ...(await store.get(id))!, confirmedAt: Date.now() - 61_000 });

    expect(await (await on(replicaB, session)).json()).toMatchObject({ role: 'Edit' });
  });

  test('When a person is removed, then their session ends on the other replica', async () => {
    const { session, sub } = await signedInPerson('Edit');
    expect((await on(replicaB, session)).status).toBe(200);

    await changePerson(sub, { removed: true });

    await eventually(
      async () => (await on(replicaB, session)).status === 401,
      'replica B ends the session',
    );
    expect((await on(replicaA, session)).status).toBe(401);
  });

  test("When a person's factors are reset at the token service (not through the portal), then their session ends at its next request on the other replica", async () => {
    const { session, sub } = await signedInPerson('Edit');
    expect((await on(replicaB, session)).status).toBe(200);

    const reset = await fetch(
      `${ts.internalUrl}/internal/v1/realms/${tenant}/users/${sub}/factors`,
      {
        method: 'DELETE',
        headers: {
          authorization: `Bearer ${ts.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ actor: 'replica-test' }),
      },
    );

    expect(reset.status).toBe(200);
    await eventually(
      async () => (await on(replicaB, session)).status === 401,
      'replica B ends the session of the person whose factors went',
    );
    expect((await on(replicaA, session)).status).toBe(401);
  });

  test('When the operator resets a person’s factors with the CLI (nothing published), then the session ends at its re-read a minute after the last', async () => {
    const { session, email } = await signedInPerson('View');
    await ts.cli('user', 'reset-factors', tenant, '--email', email);
    const store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
    const id = session.jar.get('aa_session')!;
    await store.update(id, { ...(await store.get(id))!, confirmedAt: Date.now() - 61_000 });

    expect((await on(replicaB, session)).status).toBe(401);
  });

  test('When the operator resets a person’s factors with the CLI announcing it on Redis, then the session ends at its next request on the other replica', async () => {
    const { session, email } = await signedInPerson('Edit');
    expect((await on(replicaB, session)).status).toBe(200);

    await run(
      process.execPath,
      [
        join(REPO_ROOT, 'services/token-service/dist/cli.js'),
        'user',
        'reset-factors',
        tenant,
        '--email',
        email,
      ],
      { env: { ...process.env, ...ts.envOf('token-service'), CLI_PUBLISH_EVENTS: 'true' } },
    );

    await eventually(
      async () => (await on(replicaB, session)).status === 401,
      'replica B ends the session the CLI reset announced',
    );
  });

  test('When an Account Admin signs a person out everywhere through one replica, then the person’s next request to the other is signed out', async () => {
    const admin = await signIn(replicaA, tenant, {
      email: `admin@${tenant}.test`,
      password: USER_PASSWORD,
    });
    const person = await signedInPerson('View');
    expect((await on(replicaB, person.session)).status).toBe(200);

    const res = await fetch(`${replicaA}/api/v1/users/${person.sub}/sessions`, {
      method: 'DELETE',
      headers: admin.headers(),
    });

    expect(res.status).toBe(200);
    expect((await on(replicaB, person.session)).status).toBe(401);
  });

  test('When a person ends their other session through one replica, then that session is signed out on the other at its next request', async () => {
    const person = await signedInPerson('View');
    const second = await signIn(replicaA, tenant, { email: person.email, password: USER_PASSWORD });
    const list = (await (await on(replicaA, person.session, '/me/sessions')).json()) as Array<{
      id: string;
      current: boolean;
    }>;
    const other = list.find((s) => !s.current)!;

    const res = await fetch(`${replicaA}/api/v1/me/sessions/${other.id}`, {
      method: 'DELETE',
      headers: person.session.headers(),
    });

    expect(res.status).toBe(204);
    expect((await on(replicaB, second)).status).toBe(401);
  });
});
