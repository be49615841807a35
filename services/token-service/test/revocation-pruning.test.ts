import { beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { AUTH } from './helpers/internal-client.js';
import {
  ageChanges,
  entryOf,
  horizonOf,
  useFeedHarness,
  type FeedContext,
} from './helpers/revocation-feed.js';

/**
 * Revocation state is bounded by the token lifetime: what is older than the horizon leaves the
 * snapshot, the feed and the store; what is younger never does. A database of this file's own:
 * pruning and the feed's floor are global.
 */
const context = useFeedHarness();
let { h, api, changes } = {} as FeedContext;
beforeAll(() => {
  ({ h, api, changes } = context.get());
});

const lookup = (tenant: string, sub: string) =>
  request(h.internalUrl)
    .get(`/internal/v1/realms/${tenant}/principals/${sub}`)
    .set('authorization', AUTH);
const ofTenant = <E extends { tenant: string }>(tenant: string, entries: E[]) =>
  entries.filter((e) => e.tenant === tenant);

describe('pruning the revocation store', () => {
  test('When 30 accounts were created and deleted and one reset longer ago than the horizon, then after pruning none is in the snapshot or the store, the old deletions answer 404, and a recent reset and deletion stay', async () => {
    const { tenant } = await h.createTenant();
    const reset = await api.createServiceAccount(tenant);
    await api.reset(tenant, reset.client_id).expect(200);
    const old: string[] = [];
    for (let i = 0; i < 30; i++) {
      const account = await api.createServiceAccount(tenant);
      await api.remove(tenant, account.client_id).expect(204);
      old.push(account.client_id);
    }
    await ageChanges(h, tenant, horizonOf(h) + 1);
    const { tenant: recentTenant } = await h.createTenant();
    const [recentReset, recentDeleted] = [
      await api.createServiceAccount(recentTenant),
      await api.createServiceAccount(recentTenant),
    ];
    await api.reset(recentTenant, recentReset.client_id).expect(200);
    await api.remove(recentTenant, recentDeleted.client_id).expect(204);

    const beforePruning = ofTenant(tenant, (await changes.snapshot()).entries);
    const pruned = await h.service.pruner.run();
    const stored = await h.service
      .db('revocation_changes')
      .whereIn('realm', [tenant, recentTenant])
      .orderBy('position')
      .select('realm', 'sub');
    const lookups = await Promise.all(old.slice(0, 3).map((sub) => lookup(tenant, sub)));

    expect(beforePruning).toEqual([]);
    expect(pruned).toEqual({ changes: 31, principals: 30 });
    expect(stored).toEqual([
      { realm: recentTenant, sub: recentReset.client_id },
      { realm: recentTenant, sub: recentDeleted.client_id },
    ]);
    expect(lookups.map((r) => [r.status, r.body])).toEqual(
      old.slice(0, 3).map(() => [404, { error: 404, message: 'Principal not found' }]),
    );
    expect((await lookup(tenant, reset.client_id)).body).toEqual({
      tenant,
      sub: reset.client_id,
      version: 2,
      deleted: false,
    });
    const recent = ofTenant(recentTenant, (await changes.snapshot()).entries);
    expect(recent).toEqual(
      expect.arrayContaining([
        entryOf(recentTenant, recentReset.client_id, 2),
        entryOf(recentTenant, recentDeleted.client_id, 2, true),
      ]),
    );
    expect(recent).toHaveLength(2);
  });

  test('When changes lie just inside and just outside the horizon, then only the one inside is listed and survives pruning, with what is left of its horizon as its ttl', async () => {
    const { tenant } = await h.createTenant();
    const [inside, outside] = [
      await api.createServiceAccount(tenant),
      await api.createServiceAccount(tenant),
    ];
    await api.reset(tenant, outside.client_id).expect(200);
    await api.reset(tenant, inside.client_id).expect(200);
    const { db } = h.service;
    for (const [sub, ago] of [
      [outside.client_id, horizonOf(h) + 10],
      [inside.client_id, horizonOf(h) - 10],
    ] as const) {
      await db('revocation_changes')
        .where({ realm: tenant, sub })
        .update({ changed_at: db.raw('now() - make_interval(secs => ?)', [ago]) });
    }

    await h.service.pruner.run();
    const entries = ofTenant(tenant, (await changes.snapshot()).entries);

    expect(entries).toEqual([entryOf(tenant, inside.client_id, 2)]);
    expect(entries[0]!.ttl).toBeGreaterThanOrEqual(9);
    expect(entries[0]!.ttl).toBeLessThanOrEqual(11);
  });

  test('When 20 secrets were removed longer ago than the horizon and one just now, then pruning deletes the old credential rows and the store holds only the live one', async () => {
    const { tenant } = await h.createTenant();
    const recent = await api.createServiceAccount(tenant);
    for (let i = 0; i < 10; i++) {
      const account = await api.createServiceAccount(tenant);
      for (let round = 0; round < 2; round++) {
        const added = await api.addSecret(tenant, account.client_id).expect(201);
        await api.removeSecretById(tenant, account.client_id, added.body.id).expect(204);
      }
    }
    await ageChanges(h, tenant, horizonOf(h) + 1);
    const added = await api.addSecret(tenant, recent.client_id).expect(201);
    await api.removeSecretById(tenant, recent.client_id, added.body.id).expect(204);

    const pruned = await h.service.pruner.run();
    const stored = await h.service
      .db('revocation_changes')
      .where({ realm: tenant })
      .select('sub', 'credential');

    // Other tests' changes of this database may fall due in the same run.
    expect(pruned?.changes).toBeGreaterThanOrEqual(20);
    expect(stored).toEqual([{ sub: recent.client_id, credential: `secret:${added.body.id}` }]);
    expect(ofTenant(tenant, (await changes.snapshot()).entries)).toEqual([
      { ...entryOf(tenant, recent.client_id, 1), credentials: [`secret:${added.body.id}`] },
    ]);
  });

  test('When a reset is younger than the horizon, then pruning keeps it in the snapshot and the feed, so a token minted just before it stays refused until it expires', async () => {
    const { tenant } = await h.createTenant();
    const account = await api.createServiceAccount(tenant);
    const { position } = await changes.snapshot();
    await api.reset(tenant, account.client_id).expect(200);
    await h.service
      .db('revocation_changes')
      .where({ realm: tenant })
      .update({
        changed_at: h.service.db.raw('now() - make_interval(secs => ?)', [
          h.config.ACCESS_TOKEN_TTL,
        ]),
      });

    await h.service.pruner.run();

    expect(ofTenant(tenant, (await changes.snapshot()).entries)).toEqual([
      entryOf(tenant, account.client_id, 2),
    ]);
    expect((await changes.readAll(position)).entries).toEqual([
      entryOf(tenant, account.client_id, 2),
    ]);
  });
});

describe('a position the feed cannot continue', () => {
  test('When a reader asks from before what was pruned, then it is told to reset (load the snapshot), and from the floor on it is served', async () => {
    const { tenant } = await h.createTenant();
    const account = await api.createServiceAccount(tenant);
    const { position: before } = await changes.snapshot();
    await api.reset(tenant, account.client_id).expect(200);
    await ageChanges(h, tenant, horizonOf(h) + 1);
    await h.service.pruner.run();
    const { position: head } = await changes.snapshot();

    expect(await changes.changes(before)).toEqual({ reset: true });
    expect(await changes.changes('0')).toEqual({ reset: true });
    expect(await changes.changes(head)).toEqual({
      reset: false,
      position: head,
      more: false,
      entries: [],
    });
  });

  test.each([
    ['one past the head', (head: string) => String(BigInt(head) + 1n)],
    ['the largest int64', () => '9223372036854775807'],
  ])(
    'When a reader asks from a position from the future (%s), then it is told to reset, not served an empty page it would trust',
    async (_what, ahead) => {
      const { position } = await changes.snapshot();

      expect(await changes.changes(ahead(position))).toEqual({ reset: true });
    },
  );
});
