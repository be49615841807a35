// list: GET /plants?limit=20 with a valid token on a tenant of 10,000 plants; against a naive
// express 5 + pg Pool + jsonwebtoken.verify server running the same query on the same data.

export const name = 'list';
export const what = 'GET /plants?limit=20, valid bearer token, tenant with 10,000 plants';
export const baselineWhat =
  'naive express 5 + pg Pool + jsonwebtoken.verify (pre-parsed key), same query, no logging';

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tokens, baselines }) {
  const request = {
    method: 'GET',
    path: '/plants?limit=20',
    headers: { authorization: `Bearer ${tokens.reader}` },
  };
  const store = platform.plantStores[0];
  return {
    ours: { spec: { ...request, url: store.url }, pids: [store.pid], dbApp: 'plant-store' },
    baseline: {
      spec: { ...request, url: baselines.naive.url },
      pids: [baselines.naive.pid],
      dbApp: 'bench-baseline',
    },
  };
}
