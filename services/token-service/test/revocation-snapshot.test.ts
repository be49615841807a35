import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startHarness, type Harness } from './helpers/harness.js';
import { AUTH, internal } from './helpers/internal-client.js';

let h: Harness;
let api: ReturnType<typeof internal>;

beforeAll(async () => {
  h = await startHarness();
  api = internal(h);
});

afterAll(async () => {
  await h.close();
});

/** Seconds after a deletion during which a token minted before it may still be live: the token lifetime plus a minute of skew. */
const horizon = () => h.config.ACCESS_TOKEN_TTL + 60;

/** The snapshot's entries of one tenant (other test files share the database). */
async function snapshotOf(tenant: string): Promise<Array<{ tenant: string; sub: string; version: number; deleted: boolean }>> {
  const res = await request(h.internalUrl).get('/internal/v1/revocations').set('authorization', AUTH);
  expect(res.status).toBe(200);
  return (res.body.entries as Array<{ tenant: string; sub: string; version: number; deleted: boolean }>).filter((e) => e.tenant === tenant);
}

async function deletedAgo(tenant: string, seconds: number): Promise<string> {
  const account = await api.createServiceAccount(tenant);
  await api.remove(tenant, account.client_id).expect(204);
  await h.service.db('principals').where({ realm: tenant, sub: account.client_id }).update({ deleted_at: h.service.db.raw('now() - make_interval(secs => ?)', [seconds]) });
  return account.client_id;
}

describe('the revocation snapshot keeps deleted principals only while their tokens can live', () => {
  test('When 30 service accounts were created and deleted longer ago than a token lives, then the snapshot is as large as before them, a recent deletion and a changed live principal are still in it, and the principal lookup still answers deleted', async () => {
    const { tenant } = await h.createTenant();
    const changed = await api.createServiceAccount(tenant);
    await api.reset(tenant, changed.client_id).expect(200);
    const before = await snapshotOf(tenant);

    const old: string[] = [];
    for (let i = 0; i < 30; i++) old.push(await deletedAgo(tenant, horizon() + 1));
    const recent = await deletedAgo(tenant, 0);
    const after = await snapshotOf(tenant);
    const lookups = await Promise.all(old.map(async (sub) => (await request(h.internalUrl).get(`/internal/v1/realms/${tenant}/principals/${sub}`).set('authorization', AUTH)).body));

    expect(before).toEqual([{ tenant, sub: changed.client_id, version: 2, deleted: false }]);
    expect(after).toEqual(expect.arrayContaining([...before, { tenant, sub: recent, version: 2, deleted: true }]));
    expect(after).toHaveLength(before.length + 1);
    expect(lookups).toEqual(old.map((sub) => ({ tenant, sub, version: 2, deleted: true })));
  });

  test('When deletions lie just inside and just outside the horizon, then only the one inside is listed', async () => {
    const { tenant } = await h.createTenant();

    const inside = await deletedAgo(tenant, horizon() - 10);
    const outside = await deletedAgo(tenant, horizon() + 10);
    const entries = await snapshotOf(tenant);

    expect(entries).toEqual([{ tenant, sub: inside, version: 2, deleted: true }]);
    expect(entries.map((e) => e.sub)).not.toContain(outside);
  });
});
