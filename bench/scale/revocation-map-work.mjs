#!/usr/bin/env node
// `node bench/scale/revocation-map-work.mjs [--map=<revocation-map.js>]`: the revocation map's
// share of each periodic resync (merge the feed's page, settle, expire) when the map holds many
// live entries, in one process, no I/O. bench:scale's revocation part cannot show it: the history
// it seeds is older than the token lifetime, so its maps hold a handful of entries. Here the map
// is in the steady state of `live` entries within one horizon (360 s): entries arrive at
// live / 360 a second and as many fall due. Prints the CPU µs per resync at each size, and the
// µs per change (what O(changes) keeps flat). `--map` points at another build of the map (e.g. an
// older commit's, transpiled) to compare. Build first (`pnpm build`).
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { join } from 'node:path';

const { values: args } = parseArgs({
  options: { map: { type: 'string' }, resyncs: { type: 'string', default: '600' } },
});
const modulePath =
  args.map ??
  join(import.meta.dirname, '../../packages/resource-auth/dist/revocation/revocation-map.js');
const { RevocationMap } = await import(pathToFileURL(modulePath).href);
const HORIZON_S = 360;
const RESYNC_MS = 1000;
const RESYNCS = Number(args.resyncs);

/**
 * @param {number} live  entries within one horizon
 * @param {number} rounds  resyncs measured (after a horizon's worth unmeasured, so every size starts in its steady state)
 */
function steadyState(live, rounds) {
  const map = new RevocationMap();
  const perSecond = live / HORIZON_S;
  let serial = 0;
  let owed = 0;
  /** @param {number} now */
  const arrivals = (now) => {
    owed += perSecond;
    const page = [];
    for (; owed >= 1; owed -= 1)
      page.push({
        tenant: `t-${serial % 1000}`,
        sub: `sa-${serial++}`,
        version: 2,
        deleted: false,
        ttl: HORIZON_S,
      });
    return { page, now };
  };
  /** @param {number} now */
  const resync = (now) => {
    const epoch = map.beginEpoch();
    const { page } = arrivals(now);
    map.merge(page, now);
    map.settle(epoch);
    map.expire(now);
    return page.length;
  };
  let now = 0;
  // One horizon to fill the map (entries spread over their ages as in a running system), one more to reach the steady state.
  for (let i = 0; i < (2 * HORIZON_S * 1000) / RESYNC_MS; i++) {
    now += RESYNC_MS;
    resync(now);
  }
  let changes = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < rounds; i++) {
    now += RESYNC_MS;
    changes += resync(now);
  }
  const used = process.cpuUsage(before);
  const us = used.user + used.system;
  return {
    live,
    mapEntries: map.size,
    changesPerResync: changes / rounds,
    usPerResync: us / rounds,
    usPerChange: us / Math.max(1, changes),
  };
}

const rows = [1_000, 10_000, 100_000].map((live) => steadyState(live, RESYNCS));
process.stdout.write(
  `revocation map, periodic work per resync (${RESYNCS} resyncs a size; ${modulePath.split('/').slice(-4).join('/')})\n`,
);
for (const r of rows) {
  process.stdout.write(
    `live ${String(r.live).padStart(7)}  entries ${String(r.mapEntries).padStart(7)}  changes/resync ${r.changesPerResync.toFixed(1).padStart(6)}  µs/resync ${r.usPerResync.toFixed(1).padStart(8)}  µs/change ${r.usPerChange.toFixed(2)}\n`,
  );
}
const [first, , last] = rows;
process.stdout.write(
  `at ${last.live} / at ${first.live}: µs per resync ${(last.usPerResync / first.usPerResync).toFixed(1)}×, changes ${(last.changesPerResync / first.changesPerResync).toFixed(1)}×, µs per change ${(last.usPerChange / first.usPerChange).toFixed(2)}×\n`,
);
