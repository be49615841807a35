/**
 * Revocation per credential (decision 0035), the attacker's view: two replicas on one Postgres
 * and Redis, each introspecting with its own `@plant/resource-auth` map (as every resource
 * server verifies). Removing one secret of two refuses exactly the tokens it obtained, at once
 * on both replicas and under a burst, while the other secret's tokens stay active; a third live
 * secret is refused; an event forged on Redis naming another account's credential changes
 * nothing; a removed credential's token replayed after a resync, a fresh snapshot or through
 * the fallback lookup is still refused; and a credential's revocation leaves the snapshot, the
 * feed and the store once it is older than the horizon, like every other change.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createRevocationSync, type RevocationSync } from '@plant/resource-auth';
import { revocationMessage, REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import {
  captureLogs,
  eventually,
  startRedisServer,
  TEST_REDIS_URL,
  type RedisServer,
} from '@plant/test-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import {
  basic,
  decodeJwt,
  startHarness,
  TEST_ENV,
  uniqueIp,
  type Harness,
} from './helpers/harness.js';
import { AUTH, internal, type CreatedAccount } from './helpers/internal-client.js';
import { feed, horizonOf } from './helpers/revocation-feed.js';
import { tokenRequest } from './helpers/token-client.js';

let a: Harness;
let b: Harness;
let tenant: string;
let publisher: Redis;
const syncs: RevocationSync[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startHarness(), startHarness()]);
  ({ tenant } = await a.createTenant());
  publisher = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await Promise.all(syncs.map((sync) => sync.stop()));
  publisher?.disconnect();
  await Promise.all([a?.close(), b?.close()]);
});

const [RESOURCE_SERVER] = TEST_ENV.RESOURCE_SERVER_TOKENS.split(',');

async function tokenOf(h: Harness, clientId: string, secret: string): Promise<string> {
  const res = await tokenRequest(h, tenant)
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

/**
 * Whether replica `h` (its own resource-auth map) finds the token active. Each harness is its
 * own issuer (its public URL): a replica is asked about the tokens it minted.
 */
async function active(h: Harness, token: string): Promise<boolean> {
  const res = await request(h.publicUrl)
    .post(`/realms/${tenant}/protocol/openid-connect/token/introspect`)
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', `Bearer ${RESOURCE_SERVER}`)
    .type('form')
    .send({ token });
  expect(res.status).toBe(200);
  return res.body.active as boolean;
}

const credOf = (token: string) => decodeJwt(token).payload.cred as string;

/** An account with two live secrets, and a token of each from each replica. */
async function twoSecrets(): Promise<{
  account: CreatedAccount;
  firstId: string;
  second: { id: string; secret: string };
  first: string[];
  other: string[];
}> {
  const api = internal(a);
  const account = await api.createServiceAccount(tenant);
  const firstId = (await api.credentials(tenant, account.client_id).expect(200)).body.secrets[0]
    .id as string;
  const added = await api.addSecret(tenant, account.client_id).expect(201);
  const second = added.body as { id: string; secret: string };
  const first = [
    await tokenOf(a, account.client_id, account.secret),
    await tokenOf(b, account.client_id, account.secret),
  ];
  const other = [
    await tokenOf(a, account.client_id, second.secret),
    await tokenOf(b, account.client_id, second.secret),
  ];
  return { account, firstId, second, first, other };
}

/** A resource server's map of its own against replica A's internal API. */
function ownSync(redis: string, resyncMs = 60_000): RevocationSync {
  const sync = createRevocationSync({
    redis,
    tokenServiceUrl: a.internalUrl,
    internalToken: RESOURCE_SERVER!,
    resyncMs,
    logger: captureLogs('credential-revocation-test').logger,
  });
  syncs.push(sync);
  return sync;
}

describe('removing one of two secrets', () => {
  test('When a secret is removed, then its tokens are refused at once on both replicas, under a burst, and the other secret’s tokens stay active', async () => {
    const { account, firstId, second, first, other } = await twoSecrets();
    expect(first.map(credOf)).toEqual([`secret:${firstId}`, `secret:${firstId}`]);
    expect(other.map(credOf)).toEqual([`secret:${second.id}`, `secret:${second.id}`]);
    const version = decodeJwt(first[0]!).payload.ver;

    await internal(a).removeSecretById(tenant, account.client_id, firstId).expect(204);

    // Each replica's map hears the removal on the channel.
    for (const [h, token] of [
      [a, first[0]!],
      [b, first[1]!],
    ] as const)
      await eventually(async () => !(await active(h, token)), 'the replica refuses the token');
    const burst = await Promise.all(
      Array.from({ length: 48 }, (_, i) =>
        active(i % 2 === 0 ? a : b, i % 4 < 2 ? first[i % 2]! : other[i % 2]!),
      ),
    );
    expect(burst).toEqual(Array.from({ length: 48 }, (_, i) => i % 4 >= 2));
    // The version did not move: a token of the other secret minted now is like those before.
    const fresh = await tokenOf(b, account.client_id, second.secret);
    expect(decodeJwt(fresh).payload.ver).toBe(version);
    expect(await active(b, fresh)).toBe(true);
    const refused = await tokenRequest(b, tenant)
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(refused.status).toBe(401);
  });

  test('When the removed secret’s token is replayed after a resync, a new snapshot or through the fallback lookup, then it is still refused and the other’s accepted', async () => {
    const { account, firstId, first, other } = await twoSecrets();
    // This map hears no event (a Redis of its own): only the change feed can tell it.
    const quiet: RedisServer = await startRedisServer();
    try {
      const following = ownSync(quiet.url, 200);
      await following.start();
      expect(following.check(tenant, account.client_id, 1, credOf(first[0]!))).toBe('valid');

      await internal(a).removeSecretById(tenant, account.client_id, firstId).expect(204);

      await eventually(
        () => following.check(tenant, account.client_id, 1, credOf(first[0]!)) === 'revoked',
        'the change feed brings the removal',
      );
      expect(following.check(tenant, account.client_id, 1, credOf(other[0]!))).toBe('valid');
      // Started after the removal: the snapshot names it.
      const fresh = ownSync(quiet.url);
      await fresh.start();
      expect(fresh.check(tenant, account.client_id, 1, credOf(first[0]!))).toBe('revoked');
      expect(fresh.check(tenant, account.client_id, 1, credOf(other[0]!))).toBe('valid');
      // Never started: every check asks the principal lookup.
      const fallback = ownSync(quiet.url);
      expect(await fallback.check(tenant, account.client_id, 1, credOf(first[0]!))).toBe('revoked');
      expect(await fallback.check(tenant, account.client_id, 1, credOf(other[0]!))).toBe('valid');
      // Replicas keep refusing it after their own maps resync (a reconnect reloads them).
      expect(await active(a, first[0]!)).toBe(false);
      expect(await active(b, first[1]!)).toBe(false);
      expect(await active(b, other[1]!)).toBe(true);
    } finally {
      await quiet.stop();
    }
  });

  test('When a third secret is added while two are live, then 409 SecretLimitReached and nothing changes', async () => {
    const { account, other } = await twoSecrets();

    const third = await internal(a).addSecret(tenant, account.client_id);

    expect({ status: third.status, body: third.body }).toEqual({
      status: 409,
      body: {
        error: 409,
        message:
          'This service account already has two live secrets: remove one before adding another',
      },
    });
    expect(
      (await internal(a).credentials(tenant, account.client_id).expect(200)).body.secrets,
    ).toHaveLength(2);
    expect(await active(b, other[1]!)).toBe(true);
  });

  test('When a burst adds secrets at once, then exactly one more becomes live (two in all)', async () => {
    const account = await internal(a).createServiceAccount(tenant);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        internal(i % 2 === 0 ? a : b).addSecret(tenant, account.client_id),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([
      201, 409, 409, 409, 409, 409, 409, 409,
    ]);
    expect(
      (await internal(a).credentials(tenant, account.client_id).expect(200)).body.secrets,
    ).toHaveLength(2);
  });

  test('When an expiry is not ahead or too far, then 400 InvalidSecretExpiry; a secret past its own expiry is refused and no longer counts', async () => {
    const account = await internal(a).createServiceAccount(tenant);
    for (const expires_at of [
      new Date(Date.now() - 1000).toISOString(),
      new Date(Date.now() + 731 * 86_400_000).toISOString(),
    ])
      expect((await internal(a).addSecret(tenant, account.client_id, { expires_at })).body).toEqual(
        {
          error: 400,
          message: 'expires_at must be an instant in the future, at most 730 days from now',
        },
      );
    expect(
      (await internal(a).addSecret(tenant, account.client_id, { expires_at: 'soon' })).status,
    ).toBe(400);
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const added = await internal(a)
      .addSecret(tenant, account.client_id, { expires_at: soon })
      .expect(201);
    expect(added.body.expires_at).toBe(soon);
    await a.service
      .db('service_account_secrets')
      .where({ sub: account.client_id, id: added.body.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    // A policy change makes every replica read the account again.
    await internal(a).setDisabled(tenant, account.client_id, true).expect(200);
    await internal(a).setDisabled(tenant, account.client_id, false).expect(200);

    const expired = await tokenRequest(b, tenant)
      .set('authorization', basic(account.client_id, added.body.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(expired.status).toBe(401);
    expect(expired.body.error_description).toMatch(/the client secret expired at/);
    await internal(a).addSecret(tenant, account.client_id).expect(201);
  });
});

describe('forged revocations', () => {
  test('When an event forged on Redis names another account’s credential, then neither account’s tokens are refused', async () => {
    const x = await twoSecrets();
    const y = await twoSecrets();

    for (const [victim, named] of [
      [x, y],
      [y, x],
    ] as const)
      await publisher.publish(
        REVOCATION_CHANNEL,
        revocationMessage({
          tenant,
          sub: victim.account.client_id,
          version: 1,
          deleted: false,
          credentials: [credOf(named.first[0]!), credOf(named.other[0]!)],
        }),
      );
    // The forged events arrived (an event applied after them shows it), and changed nothing.
    const marker = await twoSecrets();
    await internal(a)
      .removeSecretById(tenant, marker.account.client_id, marker.firstId)
      .expect(204);
    await eventually(
      async () => !(await active(b, marker.first[1]!)),
      'replica B heard later events',
    );

    for (const [i, h] of [a, b].entries())
      for (const tokens of [x.first, x.other, y.first, y.other])
        expect(await active(h, tokens[i]!)).toBe(true);
  });
});

describe('the bound', () => {
  // Pruning deletes by the same age (revocation-pruning.test.ts, on a database of its own).
  test('When a credential was revoked longer ago than the horizon, then the snapshot, the feed and the lookup no longer name it', async () => {
    const { account, firstId } = await twoSecrets();
    const changes = feed(a);
    const start = (await changes.snapshot()).position;
    await internal(a).removeSecretById(tenant, account.client_id, firstId).expect(204);
    const named = (await changes.snapshot()).entries.filter((e) => e.sub === account.client_id);
    expect(named).toEqual([
      expect.objectContaining({ version: 1, credentials: [`secret:${firstId}`] }),
    ]);

    const { db } = a.service;
    await db('revocation_changes')
      .where({ sub: account.client_id })
      .update({
        changed_at: db.raw('changed_at - make_interval(secs => ?)', [horizonOf(a) + 1]),
      });

    expect((await changes.snapshot()).entries.filter((e) => e.sub === account.client_id)).toEqual(
      [],
    );
    const page = await changes.changes(start);
    expect(page.reset === false && page.entries.filter((e) => e.sub === account.client_id)).toEqual(
      [],
    );
    const lookup = await request(a.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH)
      .expect(200);
    expect(lookup.body).toEqual({ tenant, sub: account.client_id, version: 1, deleted: false });
  });
});
