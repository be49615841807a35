// create: POST /plants with a fresh id per request; against a naive express 5 + pg insert
// into a table of the same shape.

export const name = 'create';
export const what = 'POST /plants {id, name, tag}, unique ids, Edit token';
export const baselineWhat =
  'naive express 5 + express.json + pg insert, same table shape (no auth)';

/** Above the seeded ids (1..10,000); each side has its own table. */
const FIRST_ID = 1_000_000;

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tokens, baselines }) {
  const request = {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${tokens.writer}`, 'content-type': 'application/json' },
  };
  const store = platform.plantStores[0];
  // measurePair moves idStart up for every further window, so ids stay unique.
  const plant = { idStart: FIRST_ID, name: 'Monstera deliciosa', tag: 'bench' };
  return {
    ours: { spec: { ...request, url: store.url, plant }, pids: [store.pid], dbApp: 'plant-store' },
    baseline: {
      spec: { ...request, url: baselines.naive.url, plant },
      pids: [baselines.naive.pid],
      dbApp: 'bench-baseline',
    },
  };
}
