import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { PROVIDER_ENTRY_BYTES, SIGNING_KEY_ENTRY_BYTES } from '../src/provider/realm-providers.js';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';

/**
 * The realm cache is bounded by memory, not by the number of realms: with budgets for 32
 * providers and every key, 36 realms each get their grants, the providers beyond the budget
 * are dropped and built again from the cached key, and /metrics says so.
 */
const PROVIDER_MB = 4;
const KEY_MB = 1;
const REALMS = 36;
let h: Harness;
const realms: Array<{ tenant: string; account: CreatedAccount }> = [];

beforeAll(async () => {
  h = await startHarness({ REALM_PROVIDER_CACHE_MB: String(PROVIDER_MB), REALM_KEY_CACHE_MB: String(KEY_MB) });
  for (let i = 0; i < REALMS; i++) {
    const { tenant } = await h.createTenant();
    realms.push({ tenant, account: await internal(h).createServiceAccount(tenant) });
  }
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const grant = ({ tenant, account }: (typeof realms)[number], secret = account.secret) =>
  request(h.publicUrl).post(h.tokenUrl(tenant)).set('x-forwarded-for', uniqueIp()).set('authorization', basic(account.client_id, secret)).type('form').send({ grant_type: 'client_credentials' });

/** `cache_entries` etc. of one cache from the token service's /metrics. */
async function cacheMetrics(cache: string): Promise<Record<string, number>> {
  const text = (await request(h.publicUrl).get('/metrics').expect(200)).text;
  const read = (name: string) => Number(new RegExp(`^${name}\\{[^}]*cache="${cache}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { entries: read('cache_entries'), bytes: read('cache_bytes'), budget: read('cache_budget_bytes'), evictions: read('cache_evictions_total') };
}

describe('the realm cache, bounded by memory', () => {
  test('When grants go round-robin over more realms than the provider budget holds, then every grant succeeds, the providers stay within the budget, every key stays cached, and /metrics shows both', async () => {
    const capacity = (PROVIDER_MB * 1024 * 1024) / PROVIDER_ENTRY_BYTES;
    const buildsBefore = h.service.providers.stats().builds;

    const statuses: number[] = [];
    for (let round = 0; round < 2; round++) for (const realm of realms) statuses.push((await grant(realm)).status);
    const stats = h.service.providers.stats();

    expect(statuses).toEqual(statuses.map(() => 200));
    expect(stats.providers).toEqual({ entries: capacity, bytes: capacity * PROVIDER_ENTRY_BYTES, budgetBytes: PROVIDER_MB * 1024 * 1024, evictions: expect.any(Number) });
    expect(stats.providers.evictions).toBeGreaterThanOrEqual(2 * REALMS - capacity);
    expect(stats.keys).toMatchObject({ entries: REALMS, bytes: REALMS * SIGNING_KEY_ENTRY_BYTES, evictions: 0 });
    // Round-robin over more realms than fit is least-recently-used's worst case: every grant builds.
    expect(stats.builds - buildsBefore).toBe(2 * REALMS);
    expect(await cacheMetrics('realm_providers')).toEqual({ entries: capacity, bytes: capacity * PROVIDER_ENTRY_BYTES, budget: PROVIDER_MB * 1024 * 1024, evictions: stats.providers.evictions });
    expect(await cacheMetrics('realm_keys')).toEqual({ entries: REALMS, bytes: REALMS * SIGNING_KEY_ENTRY_BYTES, budget: KEY_MB * 1024 * 1024, evictions: 0 });
  });

  test('When one realm is used again and again between others, then it stays built (least recently USED goes)', async () => {
    const [hot, ...others] = realms as [(typeof realms)[number], ...typeof realms];
    await grant(hot);
    const builtHot = h.service.providers.builtHandler(hot.tenant);

    for (const other of others) {
      await grant(other);
      await grant(hot);
    }

    expect(h.service.providers.builtHandler(hot.tenant)).toBe(builtHot);
  });

  test('When 200 unauthenticated grants arrive at once spread over every realm, then each is refused with 401 invalid_client, none fails, and memory stays within the budget', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => grant(realms[i % REALMS]!, 'pss_wrong-secret')));

    expect(new Set(answers.map((res) => `${res.status} ${res.body.error}`))).toEqual(new Set(['401 invalid_client']));
    expect(h.service.providers.stats().providers.bytes).toBeLessThanOrEqual(PROVIDER_MB * 1024 * 1024);
  });
});
