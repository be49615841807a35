// list-es256: the list scenario with a token of a realm signing ES256, against the same
// Plant Store with a token of a realm signing RS256 (each realm 10,000 plants, the same query):
// what choosing ES256 costs a resource server.

export const name = 'list-es256';
export const what = 'GET /plants?limit=20 with an ES256 token';
export const baselineWhat = 'the same Plant Store, the same query, with an RS256 token';
export const labels = ['ES256 token', 'RS256 token'];
export const checkTargets = true;

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tokens, es256 }) {
  const store = platform.plantStores[0];
  const request = (/** @type {string} */ token) => ({
    url: store.url,
    method: 'GET',
    path: '/plants?limit=20',
    headers: { authorization: `Bearer ${token}` },
  });
  return {
    ours: { spec: request(es256.tokens.reader), pids: [store.pid], dbApp: 'plant-store' },
    baseline: { spec: request(tokens.reader), pids: [store.pid], dbApp: 'plant-store' },
  };
}
