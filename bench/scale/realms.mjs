// bench:scale, realms: 100 / 1,000 / 10,000 realms in use, seeded with SQL (one RSA key shared by
// every seeded realm, each with its own kid and ciphertext: said in the output), each with one
// service account. Per size: client credentials grants round-robin over every realm (req/s, p99,
// the token service's RSS), then a token of every realm and lists at the first Plant Store with
// them round-robin (p99, its RSS). Every realm is used once before the grants are measured: the
// figures are of realms in use, not of each realm's very first grant.
import * as lib from '../lib/platform.mjs';
import { rssMb } from '../lib/processes.mjs';
import { inParallel, loadWindow, metricOf, ratio, target, windowOf } from './measure.mjs';
import { realmSeeder } from './seed.mjs';

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, db: import('pg').Client, log: (msg: string) => void, quick: boolean, secrets: {keyEncryptionKey: string, pepper: string}, prefix: string}} ctx
 * @param {number[]} sizes
 */
export async function realmsAtScale({ platform, db, log, quick, secrets, prefix }, sizes) {
  const seeder = realmSeeder(secrets);
  const realm = (/** @type {number} */ i) => `${prefix}-${i}`;
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const tokenService = () => platform.tokenService;
  const store = () =>
    /** @type {import('../lib/processes.mjs').ServerProcess} */ (platform.plantStores[0]);

  /** @type {any[]} */
  const rows = [];
  let seeded = 0;
  for (const [i, size] of sizes.entries()) {
    const load = { ...windowOf(quick, i), durationSec: quick ? 3 : 8 };
    log(`realms: seeding to ${size}`);
    await seeder.seed(db, prefix, seeded, size);
    seeded = size;
    // A token of every realm first: every realm has been used once (its key and its account's
    // credential are cached, as for realms in use), and the list part gets its tokens.
    log(`realms: a token of each of ${size} realms`);
    const tokens = await inParallel(size, 16, (i) =>
      platform.grantToken(realm(i), { clientId: `sa-${realm(i)}`, secret: seeder.secret }),
    );
    const grants = Array.from({ length: size }, (_, i) => ({
      path: lib.tokenPath(realm(i)),
      body: lib.grantBody(`sa-${realm(i)}`, seeder.secret),
    }));
    log(`realms: grants round-robin over ${size} realms`);
    const grant = await loadWindow(
      {
        url: tokenService().url,
        method: 'POST',
        path: grants[0]?.path,
        headers: form,
        rotate: grants,
      },
      [tokenService().pid],
      db,
      load,
    );
    const tokenServiceRssMb = rssMb(tokenService().pid);
    const builds = await metricOf(tokenService(), 'realm_provider_builds_total');
    const providers = await metricOf(tokenService(), 'cache_entries', { cache: 'realm_providers' });
    const keys = await metricOf(tokenService(), 'cache_entries', { cache: 'realm_keys' });

    const lists = tokens.map((token) => ({ headers: { authorization: `Bearer ${token}` } }));
    // Each token used once first: the Plant Store has fetched every realm's keys, as for realms in use.
    await inParallel(size, 16, async (i) => {
      const res = await fetch(`${store().url}/plants?limit=20`, {
        headers: /** @type {{headers: Record<string, string>}} */ (lists[i]).headers,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`list with the token of ${realm(i)}: ${res.status}`);
    });
    const list = await loadWindow(
      { url: store().url, method: 'GET', path: '/plants?limit=20', headers: {}, rotate: lists },
      [store().pid],
      db,
      load,
    );
    const jwksRealms = await metricOf(store(), 'cache_entries', { cache: 'jwks' });
    const verifiedTokens = await metricOf(store(), 'cache_entries', { cache: 'verified_tokens' });
    // Where the Plant Store's RSS sits: V8's heap (used, and what it has reserved) and memory outside it (keys, buffers).
    const mb = async (/** @type {string} */ name) => (await metricOf(store(), name)) / 1024 / 1024;
    const plantStoreMemory = {
      heapUsedMb: await mb('nodejs_heap_size_used_bytes'),
      heapTotalMb: await mb('nodejs_heap_size_total_bytes'),
      externalMb: await mb('nodejs_external_memory_bytes'),
    };
    rows.push({
      size,
      grantRps: grant.rps,
      grantP99Ms: grant.p99Ms,
      grantCpuUsPerReq: grant.cpuUsPerReq,
      tokenServiceRssMb,
      providerBuildsSoFar: builds,
      providersCached: providers,
      keysCached: keys,
      listRps: list.rps,
      listP99Ms: list.p99Ms,
      listCpuUsPerReq: list.cpuUsPerReq,
      verifiedTokensCached: verifiedTokens,
      plantStoreRssMb: rssMb(store().pid),
      plantStoreMemory,
      jwksRealmsCached: jwksRealms,
    });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    note: 'seeded realms share one RSA key (each its own kid and ciphertext), to save seeding time',
    rows,
    targets: [
      target(
        `grant req/s over ${last.size} realms / over ${first.size}`,
        ratio(last.grantRps, first.grantRps),
        0.7,
        '>=',
      ),
      target(
        `grant p99 over ${last.size} realms / over ${first.size}`,
        ratio(last.grantP99Ms, first.grantP99Ms),
        2,
        '<=',
      ),
      target(`token-service RSS MB at ${last.size} realms`, last.tokenServiceRssMb, 400, '<='),
      target(`Plant Store RSS MB at ${last.size} realms`, last.plantStoreRssMb, 300, '<='),
    ],
  };
}
