import { beforeAll, describe, expect, test } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { entryOf, horizonOf, useFeedHarness, type FeedContext } from './helpers/revocation-feed.js';

/**
 * The change feed as a resource server reads it. A database of this file's own: the head of the
 * feed and a quiet stretch are global, and other files' changes would move them.
 */
const context = useFeedHarness();
let { h, api, changes } = {} as FeedContext;
beforeAll(() => {
  ({ h, api, changes } = context.get());
});

describe('the revocation change feed', () => {
  test('When a secret is reset twice and another account deleted, then the changes after the snapshot position are exactly those, in commit order, each needed for a horizon', async () => {
    const { tenant } = await h.createTenant();
    const kept = await api.createServiceAccount(tenant);
    const gone = await api.createServiceAccount(tenant);
    const { position } = await changes.snapshot();

    await api.reset(tenant, kept.client_id).expect(200);
    await api.reset(tenant, kept.client_id).expect(200);
    await api.remove(tenant, gone.client_id).expect(204);
    const page = await changes.changes(position);

    expect(page).toEqual({
      reset: false,
      position: String(BigInt(position) + 3n),
      more: false,
      entries: [
        entryOf(tenant, kept.client_id, 2),
        entryOf(tenant, kept.client_id, 3),
        entryOf(tenant, gone.client_id, 2, true),
      ],
    });
    if (page.reset) return;
    for (const entry of page.entries) expect(entry.ttl).toBeGreaterThan(horizonOf(h) - 5);
    for (const entry of page.entries) expect(entry.ttl).toBeLessThanOrEqual(horizonOf(h));
  });

  test('When nothing changed since a position, then its changes are empty, the position stays, and the answer is a few bytes', async () => {
    const { position } = await changes.snapshot();

    const res = await changes.changesRaw(`?after=${position}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ reset: false, position, more: false, entries: [] });
    expect(Buffer.byteLength(res.text)).toBeLessThan(80);
  });

  test('When the changes are read with a small page, then the pages follow each other without a gap or a repeat, each as large as asked', async () => {
    const { tenant } = await h.createTenant();
    const account = await api.createServiceAccount(tenant);
    const { position } = await changes.snapshot();
    for (let i = 0; i < 5; i++) await api.reset(tenant, account.client_id).expect(200);

    const first = await changes.changes(position, 2);
    const all = await changes.readAll(position, 2);

    expect(first).toMatchObject({
      reset: false,
      more: true,
      position: String(BigInt(position) + 2n),
    });
    expect(all.pages).toBe(3);
    expect(all.entries.map((e) => e.version)).toEqual([2, 3, 4, 5, 6]);
    expect(all.position).toBe(String(BigInt(position) + 5n));
  });

  test('When a principal is changed by SQL outside the token service, then the change is in the feed all the same (the trigger writes it)', async () => {
    const { tenant } = await h.createTenant();
    const account = await api.createServiceAccount(tenant);
    const { position } = await changes.snapshot();

    await h.service
      .db('principals')
      .where({ realm: tenant, sub: account.client_id })
      .update({ token_version: 7 });
    await h.service
      .db('principals')
      .where({ realm: tenant, sub: account.client_id })
      .update({ created_by: 'not a revocation change' });

    expect((await changes.readAll(position)).entries).toEqual([
      entryOf(tenant, account.client_id, 7),
    ]);
  });

  test('When a change commits while another with a later position waits behind it, then a reader never moves past the earlier one', async () => {
    const { tenant } = await h.createTenant();
    const [first, second] = [
      await api.createServiceAccount(tenant),
      await api.createServiceAccount(tenant),
    ];
    const { position } = await changes.snapshot();
    const { db } = h.service;

    const open = await db.transaction();
    await open('principals')
      .where({ realm: tenant, sub: first.client_id })
      .update({ token_version: 5 });
    const later = db('principals')
      .where({ realm: tenant, sub: second.client_id })
      .update({ token_version: 9 })
      .then(() => 'committed');
    const meanwhile = await Promise.race([later, sleep(300).then(() => 'waiting')]);
    const read = await changes.readAll(position);
    await open.commit();
    await later;
    const after = await changes.readAll(read.position);

    expect(meanwhile).toBe('waiting');
    expect(read).toMatchObject({ entries: [], position });
    expect(after.entries).toEqual([
      entryOf(tenant, first.client_id, 5),
      entryOf(tenant, second.client_id, 9),
    ]);
  });
});

describe('the snapshot and the feed agree', () => {
  test('When the snapshot is read, then it lists each principal changed within the horizon once, at its latest state, and the feed continues from its position', async () => {
    const { tenant } = await h.createTenant();
    const account = await api.createServiceAccount(tenant);
    await api.reset(tenant, account.client_id).expect(200);
    await api.reset(tenant, account.client_id).expect(200);

    const snapshot = await changes.snapshot();
    await api.remove(tenant, account.client_id).expect(204);
    const next = await changes.readAll(snapshot.position);

    expect(snapshot.entries.filter((e) => e.tenant === tenant)).toEqual([
      entryOf(tenant, account.client_id, 3),
    ]);
    expect(next.entries).toEqual([entryOf(tenant, account.client_id, 4, true)]);
  });
});
