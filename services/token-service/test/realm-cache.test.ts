import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { PROVIDER_ENTRY_BYTES, SIGNING_KEY_ENTRY_BYTES } from '../src/oidc/realm-providers.js';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';

/**
 * The realm caches are bounded by memory, not by the number of realms: with budgets for 32
 * providers and every key, 36 realms each get their grants from the grant engine (no provider
 * built), their own endpoints from providers dropped and built again beyond the budget, and
 * /metrics says so.
 */
const PROVIDER_MB = 4;
const KEY_MB = 1;
const REALMS = 36;
let h: Harness;
const realms: Array<{ tenant: string; account: CreatedAccount }> = [];

beforeAll(async () => {
  h = await startHarness({
    REALM_PROVIDER_CACHE_MB: String(PROVIDER_MB),
    REALM_KEY_CACHE_MB: String(KEY_MB),
  });
  for (let i = 0; i < REALMS; i++) {
    const { tenant } = await h.createTenant();
    realms.push({ tenant, account: await internal(h).createServiceAccount(tenant) });
  }
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const grant = ({ tenant, account }: (typeof realms)[number], secret = account.secret) =>
  request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(account.client_id, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });

/** `cache_entries` etc. of one cache from the token service's /metrics. */
async function cacheMetrics(cache: string): Promise<Record<string, number>> {
  const text = (await request(h.managementUrl).get('/metrics').expect(200)).text;
  const read = (name: string) =>
    Number(new RegExp(`^${name}\\{[^}]*cache="${cache}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return {
    entries: read('cache_entries'),
    bytes: read('cache_bytes'),
    budget: read('cache_budget_bytes'),
    evictions: read('cache_evictions_total'),
  };
}

const discovery = (tenant: string) =>
  request(h.publicUrl).get(`/realms/${tenant}/.well-known/openid-configuration`);

describe('the realm cache, bounded by memory', () => {
  test('When grants go round-robin over more realms than the provider budget holds, then every grant succeeds and none builds a provider (the grant engine serves them all), and every key stays cached', async () => {
    const buildsBefore = h.service.providers.stats().builds;
    const providersBefore = h.service.providers.stats().providers.entries;

    const statuses: number[] = [];
    for (let round = 0; round < 2; round++)
      for (const realm of realms) statuses.push((await grant(realm)).status);
    const stats = h.service.providers.stats();

    expect(statuses).toEqual(statuses.map(() => 200));
    expect(stats.builds - buildsBefore).toBe(0);
    expect(stats.providers.entries).toBe(providersBefore);
    expect(stats.keys).toMatchObject({
      entries: REALMS,
      bytes: REALMS * SIGNING_KEY_ENTRY_BYTES,
      evictions: 0,
    });
    expect(await cacheMetrics('realm_keys')).toEqual({
      entries: REALMS,
      bytes: REALMS * SIGNING_KEY_ENTRY_BYTES,
      budget: KEY_MB * 1024 * 1024,
      evictions: 0,
    });
  });

  test("When realms' own endpoints are used round-robin over more realms than the provider budget holds, then the providers stay within it, dropped ones are built again, and /metrics shows it", async () => {
    const capacity = (PROVIDER_MB * 1024 * 1024) / PROVIDER_ENTRY_BYTES;
    const buildsBefore = h.service.providers.stats().builds;

    const statuses: number[] = [];
    for (let round = 0; round < 2; round++)
      for (const { tenant } of realms) statuses.push((await discovery(tenant)).status);
    const stats = h.service.providers.stats();

    expect(statuses).toEqual(statuses.map(() => 200));
    expect(stats.providers).toEqual({
      entries: capacity,
      bytes: capacity * PROVIDER_ENTRY_BYTES,
      budgetBytes: PROVIDER_MB * 1024 * 1024,
      evictions: expect.any(Number),
    });
    expect(stats.providers.evictions).toBeGreaterThanOrEqual(2 * REALMS - capacity);
    // Round-robin over more realms than fit is least-recently-used's worst case: every request builds.
    expect(stats.builds - buildsBefore).toBe(2 * REALMS);
    expect(await cacheMetrics('realm_providers')).toEqual({
      entries: capacity,
      bytes: capacity * PROVIDER_ENTRY_BYTES,
      budget: PROVIDER_MB * 1024 * 1024,
      evictions: stats.providers.evictions,
    });
  });

  test('When one realm is used again and again between others, then its provider stays built (least recently USED goes)', async () => {
    const [hot, ...others] = realms as [(typeof realms)[number], ...typeof realms];
    await discovery(hot.tenant).expect(200);
    const builtHot = await h.service.providers.providerFor(hot.tenant);

    for (const other of others) {
      await discovery(other.tenant).expect(200);
      await discovery(hot.tenant).expect(200);
    }

    expect(await h.service.providers.providerFor(hot.tenant)).toBe(builtHot);
  });

  test('When 200 unauthenticated grants arrive at once spread over every realm, then each is refused with 401 invalid_client, none fails, and none builds a provider', async () => {
    const buildsBefore = h.service.providers.stats().builds;

    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => grant(realms[i % REALMS]!, 'pss_wrong-secret')),
    );

    expect(new Set(answers.map((res) => `${res.status} ${res.body.error}`))).toEqual(
      new Set(['401 invalid_client']),
    );
    expect(h.service.providers.stats().builds).toBe(buildsBefore);
  });
});
