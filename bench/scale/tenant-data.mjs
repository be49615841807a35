// bench:scale, one tenant's data: plants (10,000 / 100,000 / 1,000,000) and audit events
// (10,000 / 1,000,000), seeded with SQL. Plants: the first page, a page reached through 1,000
// `Link: rel="next"` cursors (the walk's page size chosen so it ends near the table's far end at
// every size), and creates. Audit: the portal's Activity page with a signed-in session.
import { signInClient } from '@plant/e2e';
import { loadWindow, ratio, target, windowOf } from './measure.mjs';
import { seedAuditEvents, seedPlantRange } from './seed.mjs';

const CURSOR_HOPS = 1000;

/**
 * @typedef {{platform: import('../lib/platform.mjs').Platform, db: import('pg').Client, log: (msg: string) => void, quick: boolean}} Context
 */

/**
 * @param {Context} ctx
 * @param {number[]} sizes
 */
export async function plantsAtScale({ platform, db, log, quick }, sizes) {
  const tenant = await platform.createTenant('plants');
  const account = await platform.createServiceAccount(tenant, { role: 'Edit' });
  const token = await platform.grantToken(tenant, account);
  const store = /** @type {import('../lib/processes.mjs').ServerProcess} */ (
    platform.plantStores[0]
  );
  const headers = { authorization: `Bearer ${token}` };
  /** @type {any[]} */
  const rows = [];
  let seeded = 0;
  for (const [i, size] of sizes.entries()) {
    log(`plants: seeding to ${size}`);
    await seedPlantRange(db, tenant, seeded, size - seeded);
    seeded = size;
    const deepCursor = await walkCursors(
      store.url,
      headers,
      Math.max(1, Math.floor(size / CURSOR_HOPS) - 1),
    );
    const load = windowOf(quick, i);
    const page = (/** @type {string} */ path) =>
      loadWindow({ url: store.url, method: 'GET', path, headers }, [store.pid], db, load);
    const first = await page('/plants?limit=100');
    const deep = await page(`/plants?limit=100&cursor=${deepCursor}`);
    const create = await loadWindow(
      {
        url: store.url,
        method: 'POST',
        path: '/plants',
        headers: { ...headers, 'content-type': 'application/json' },
        plant: { idStart: 10_000_000_000 + i * 100_000_000, name: 'scale', tag: 'bench' },
      },
      [store.pid],
      db,
      load,
    );
    rows.push({
      size,
      firstPageP99Ms: first.p99Ms,
      firstPageRps: first.rps,
      deepPageP99Ms: deep.p99Ms,
      deepPageRps: deep.rps,
      createP99Ms: create.p99Ms,
      createRps: create.rps,
    });
  }
  const [a, z] = [rows[0], rows[rows.length - 1]];
  return {
    rows,
    targets: [
      target(
        `list p99, first page, at ${z.size} plants / at ${a.size}`,
        ratio(z.firstPageP99Ms, a.firstPageP99Ms),
        1.2,
        '<=',
      ),
      target(
        `list p99, page after ${CURSOR_HOPS} cursors, at ${z.size} plants / at ${a.size}`,
        ratio(z.deepPageP99Ms, a.deepPageP99Ms),
        1.2,
        '<=',
      ),
    ],
  };
}

/**
 * Follows `Link: rel="next"` from the first page `CURSOR_HOPS` times at `limit` per page; the cursor reached.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {number} limit
 */
async function walkCursors(url, headers, limit) {
  let next = `${url}/plants?limit=${limit}`;
  for (let hop = 0; hop < CURSOR_HOPS; hop++) {
    const res = await fetch(next, { headers });
    await res.arrayBuffer();
    const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    if (res.status !== 200 || link === undefined)
      throw new Error(`cursor walk stopped at hop ${hop}: ${res.status}`);
    next = `${url}${new URL(link).pathname}${new URL(link).search}`;
  }
  const cursor = new URL(next).searchParams.get('cursor');
  if (cursor === null) throw new Error('no cursor after the walk');
  return cursor;
}

/**
 * @param {Context} ctx
 * @param {number[]} sizes
 */
export async function auditAtScale({ platform, db, log, quick }, sizes) {
  const tenant = await platform.createTenant('audit');
  const portal = /** @type {import('../lib/processes.mjs').ServerProcess} */ (
    platform.accountAdmin
  );
  const client = signInClient({
    authUrl: platform.authUrl,
    portalUrl: platform.portalUrl,
    hasPortal: () => true,
  });
  const { cookie } = await client.portalSession(tenant, `admin@${tenant}.test`);
  /** @type {any[]} */
  const rows = [];
  let seeded = 0;
  for (const [i, size] of sizes.entries()) {
    const load = windowOf(quick, i);
    log(`audit: seeding to ${size} events`);
    await seedAuditEvents(db, tenant, size - seeded);
    seeded = size;
    const activity = await loadWindow(
      { url: portal.url, method: 'GET', path: '/activity', headers: { cookie } },
      [portal.pid],
      db,
      load,
    );
    rows.push({ size, activityP99Ms: activity.p99Ms, activityRps: activity.rps });
  }
  const [a, z] = [rows[0], rows[rows.length - 1]];
  return {
    rows,
    targets: [
      target(
        `Activity page p99 at ${z.size} events / at ${a.size}`,
        ratio(z.activityP99Ms, a.activityP99Ms),
        1.2,
        '<=',
      ),
    ],
  };
}
