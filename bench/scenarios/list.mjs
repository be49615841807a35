// list: GET /plants?limit=20 with a valid token on a tenant of 10,000 plants; against a naive
// express 5 + pg Pool + jsonwebtoken.verify server running the same query on the same data.
import { measureLoad } from '../lib/load.mjs';

export const name = 'list';
export const what = 'GET /plants?limit=20, valid bearer token, tenant with 10,000 plants';
export const baselineWhat = 'naive express 5 + pg Pool + jsonwebtoken.verify (pre-parsed key), same query, no logging';

/** @param {import('../run.mjs').ScenarioContext} ctx */
export async function run({ platform, tokens, baselines, load }) {
  const request = { method: 'GET', path: '/plants?limit=20', headers: { authorization: `Bearer ${tokens.reader}` } };
  const ours = await measureLoad({ ...load, ...request, url: platform.plantStores[0].url }, [platform.plantStores[0].pid]);
  const baseline = await measureLoad({ ...load, ...request, url: baselines.naive.url }, [baselines.naive.pid]);
  return { ours, baseline };
}
