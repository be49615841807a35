// create: POST /plants with a fresh id per request; against a naive express 5 + pg insert
// into a table of the same shape.
import { measureLoad } from '../lib/load.mjs';

export const name = 'create';
export const what = 'POST /plants {id, name, tag}, unique ids, Edit token';
export const baselineWhat = 'naive express 5 + express.json + pg insert, same table shape (no auth)';

/** Above the seeded ids (1..10,000); each side has its own table. */
const FIRST_ID = 1_000_000;

/** @param {import('../run.mjs').ScenarioContext} ctx */
export async function run({ platform, tokens, baselines, load }) {
  const request = {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${tokens.writer}`, 'content-type': 'application/json' },
    plant: { idStart: FIRST_ID, name: 'Monstera deliciosa', tag: 'bench' },
  };
  const ours = await measureLoad({ ...load, ...request, url: platform.plantStores[0].url }, [platform.plantStores[0].pid]);
  const baseline = await measureLoad({ ...load, ...request, url: baselines.naive.url }, [baselines.naive.pid]);
  return { ours, baseline };
}
