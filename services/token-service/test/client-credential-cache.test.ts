/**
 * The credential cache of the token endpoint (credentials/client-credential-repository.ts)
 * against the real database: a change heard while a read is in flight, rows retired by a
 * change, the bounds of every map it keeps, and the realm's list that answers guessed ids.
 * Each test builds its own repository (small limits where a bound is tested) over the
 * service's pool and counts the queries that name its own ids.
 */
import { describe, expect, test } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createClientCredentialRepository,
  type CredentialCacheLimits,
} from '../src/credentials/client-credential-repository.js';
import request from 'supertest';
import { basic, useHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

let h: Harness;
let tenant: string;

useHarness((started, first) => {
  h = started;
  tenant = first;
});

/** The queries of `realm` sent from now on: point reads of one id, and listings of the realm. */
function queriesOf(realm: string) {
  const seen: Array<{ sql: string; bindings: unknown[] }> = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => {
    if (q.bindings?.includes(realm)) seen.push({ sql: q.sql, bindings: q.bindings });
  };
  h.service.db.on('query', listener);
  return {
    points: (clientId?: string) =>
      seen.filter(
        (q) =>
          q.sql.includes('"sa"."sub"') && (clientId === undefined || q.bindings.includes(clientId)),
      ).length,
    listings: () =>
      seen.filter((q) => q.sql.startsWith('select "sub" from "service_accounts"')).length,
    stop: () => h.service.db.off('query', listener),
  };
}

function grant(clientId: string, secret: string) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

const repository = (limits: Partial<CredentialCacheLimits> = {}) =>
  createClientCredentialRepository(h.service.db, limits);
const unknownId = (i: number) => `sa-${'0'.repeat(24)}${String(i).padStart(8, '0')}`;

describe('a change heard while the credential is read', () => {
  test('When a change is heard while a read is in flight, then that read is neither cached nor returned: it is read again', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository();
    const queries = queriesOf(tenant);

    const reading = repo.find(tenant, account.client_id);
    repo.forget(tenant, account.client_id);
    const row = await reading;
    queries.stop();

    expect(queries.points(account.client_id)).toBe(2);
    expect(row).toMatchObject({ sub: account.client_id, realm: tenant });
    expect(repo.cached(tenant, account.client_id)).toEqual({ row, expires: expect.any(Number) });
    expect(repo.isCurrent(row!)).toBe(true);
  });

  test('When a secret is reset and heard while reads race it, then no read answers with the old digest unless it is retired, and the cache ends with the new one', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository();
    const old = (await repo.find(tenant, account.client_id))!;
    repo.forget(tenant, account.client_id);

    for (let round = 0; round < 10; round += 1) {
      const reads = Array.from({ length: 5 }, (_, i) =>
        sleep(i).then(() => repo.find(tenant, account.client_id)),
      );
      const entry = await h.service.identity.serviceAccounts.update(tenant, account.client_id, {
        secretDigest: `${round}`.padStart(64, 'f'),
      });
      repo.forget(entry!.tenant, entry!.sub);
      const rows = await Promise.all(reads);

      const trusted = rows.filter((row) => row !== undefined && repo.isCurrent(row));
      expect(trusted.filter((row) => row!.token_version < entry!.version)).toEqual([]);
      const now = await repo.find(tenant, account.client_id);
      expect({ digest: now?.secrets[0]?.digest, version: now?.token_version }).toEqual({
        digest: `${round}`.padStart(64, 'f'),
        version: entry!.version,
      });
    }
    expect(repo.isCurrent(old)).toBe(false);
  });

  test('When an entry expires and is read again unchanged, then the same row comes back and stays current; a changed one retires the old row', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository({ ttlMs: 50 });
    const first = (await repo.find(tenant, account.client_id))!;

    await sleep(60);
    expect(repo.cached(tenant, account.client_id)).toBeUndefined();
    const again = await repo.find(tenant, account.client_id);
    await internal(h).patch(tenant, account.client_id, { role: 'Edit' }).expect(200);
    await sleep(60);
    const changed = await repo.find(tenant, account.client_id);

    expect(again).toBe(first);
    expect(changed).not.toBe(first);
    expect(changed?.role).toBe('Edit');
    expect({ first: repo.isCurrent(first), changed: repo.isCurrent(changed!) }).toEqual({
      first: false,
      changed: true,
    });
  });
});

describe('bounds', () => {
  test('When many grants read one uncached id at once, then one query answers them all, and nothing is left in flight after', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository();
    const queries = queriesOf(tenant);

    const rows = await Promise.all(
      Array.from({ length: 20 }, () => repo.find(tenant, account.client_id)),
    );
    repo.forget(tenant, account.client_id);
    await repo.find(tenant, account.client_id);
    queries.stop();

    expect(new Set(rows).size).toBe(1);
    expect(queries.points(account.client_id)).toBe(2);
  });

  test('When more unknown ids are guessed than the cache holds, then the oldest guesses are read again, and a real account is never pushed out by them', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository({ maxUnknown: 3 });
    const row = await repo.find(tenant, account.client_id);
    for (let i = 0; i < 5; i += 1) await repo.find(tenant, unknownId(i));
    const queries = queriesOf(tenant);

    for (const i of [4, 3, 2, 0]) await repo.find(tenant, unknownId(i));
    const still = repo.cached(tenant, account.client_id);
    queries.stop();

    expect(still?.row).toBe(row);
    // The cache holds the last three guesses (2, 3, 4): 0 was pushed out and is read again.
    expect([0, 2, 3, 4].map((i) => queries.points(unknownId(i)))).toEqual([1, 0, 0, 0]);
  });

  test('When more accounts are read than the cache holds, then the oldest goes and its row is retired', async () => {
    const api = internal(h);
    const accounts = [
      await api.createServiceAccount(tenant),
      await api.createServiceAccount(tenant),
      await api.createServiceAccount(tenant),
    ];
    const repo = repository({ maxKnown: 2 });

    const rows = [];
    for (const account of accounts) rows.push(await repo.find(tenant, account.client_id));

    expect(accounts.map((a) => repo.cached(tenant, a.client_id)?.row)).toEqual([
      undefined,
      rows[1],
      rows[2],
    ]);
    expect(rows.map((row) => repo.isCurrent(row!))).toEqual([false, true, true]);
  });
});

describe("the realm's list of accounts", () => {
  test('When a hundred unknown ids are looked up through the list, then they cost one listing and no query each; a real account it names is found', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const repo = repository();
    const queries = queriesOf(tenant);

    const unknown = await Promise.all(
      Array.from({ length: 100 }, (_, i) => repo.findListed(tenant, unknownId(1000 + i))),
    );
    const found = await repo.findListed(tenant, account.client_id);
    queries.stop();

    expect(unknown.filter((row) => row !== undefined)).toEqual([]);
    expect(found?.sub).toBe(account.client_id);
    expect({ listings: queries.listings(), points: queries.points() }).toEqual({
      listings: 1,
      points: 1,
    });
  });

  test('When the list is older than a second, then it is read again (an account created since is found)', async () => {
    const repo = repository();
    expect(await repo.findListed(tenant, unknownId(2000))).toBeUndefined();
    const created = await internal(h).createServiceAccount(tenant);

    await sleep(1100);
    const found = await repo.findListed(tenant, created.client_id);

    expect(found?.sub).toBe(created.client_id);
  });
});

describe('at the token endpoint', () => {
  /**
   * Commits `change` to the account without announcing it, then runs a grant with `secret`
   * during which the change is heard, just after the secret was compared: the grant holds the
   * credential read before the change.
   */
  async function grantRacing(
    account: { client_id: string },
    secret: string,
    change: Parameters<typeof h.service.identity.serviceAccounts.update>[2] | 'reconnect',
  ) {
    const { secrets, clientCredentials, serviceAccounts } = h.service.identity;
    // The change feed's follower would forget the changed account within seconds on its own:
    // on a slow host before the grant below reads it, which then holds the new credential.
    await h.service.follower.stop();
    await grant(account.client_id, secret).expect(200);
    if (change !== 'reconnect') await serviceAccounts.update(tenant, account.client_id, change);
    const matches = secrets.matches;
    secrets.matches = (presented, digest) => {
      const verdict = matches(presented, digest);
      // A reconnect to Redis (a failover) distrusts every credential; a change event names one.
      if (change === 'reconnect') clientCredentials.forgetAll();
      else clientCredentials.forget(tenant, account.client_id);
      return verdict;
    };
    try {
      return await grant(account.client_id, secret);
    } finally {
      secrets.matches = matches;
      h.service.follower.start();
    }
  }

  test('When the secret is reset after it was compared, then the grant is refused as a wrong secret would be, and the old secret stays refused', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const refused = await grantRacing(account, account.secret, {
      secretDigest: h.service.identity.secrets.digest('pss_the-new-one'),
    });
    const next = await grant(account.client_id, account.secret);

    expect({
      status: refused.status,
      body: refused.body,
      challenge: refused.headers['www-authenticate'],
      cacheControl: refused.headers['cache-control'],
    }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
      challenge: `Basic realm="${h.issuer(tenant)}", error="invalid_client", error_description="client authentication failed"`,
      cacheControl: 'no-store',
    });
    expect(next.status).toBe(401);
  });

  test('When the role changes after the secret was compared, then the grant is told to retry (its token would carry the old claims), and the retry gets the new role', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const retried = await grantRacing(account, account.secret, { role: 'Edit' });
    const next = await grant(account.client_id, account.secret);

    expect({
      status: retried.status,
      body: retried.body,
      retryAfter: retried.headers['retry-after'],
    }).toEqual({
      status: 503,
      body: {
        error: 'temporarily_unavailable',
        error_description: 'the client changed while its token was issued; retry',
      },
      retryAfter: '1',
    });
    expect({ status: next.status, scope: next.body.scope }).toEqual({
      status: 200,
      scope: 'plants:read plants:write',
    });
  });

  test('When every credential is distrusted after the secret was compared (a reconnect to Redis) and nothing changed, then the grant gets its token', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const answered = await grantRacing(account, account.secret, 'reconnect');

    expect({
      status: answered.status,
      type: answered.body.token_type,
      scope: answered.body.scope,
    }).toEqual({ status: 200, type: 'Bearer', scope: 'plants:read' });
  });
});
