// chain: the list scenario's request with an exchanged token (RFC 8693 `act`: the subject and
// its actor each through the revocation check), against the same list with the plain token it
// was exchanged for, on the same Plant Store. Target: ≥ 0.95× the plain list's req/s.
import { tokenPath } from '../lib/platform.mjs';
import { exchangeBody, prepare as allowExchange } from './exchange.mjs';

export const name = 'chain';
export const what = 'GET /plants?limit=20 with an exchanged token (subject + one actor checked)';
export const baselineWhat = 'the same list with the plain bearer token it was exchanged for';

const PATH = '/plants?limit=20';

/**
 * The writer allowed to act for others, and a token it exchanged for the reader's.
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: import('./index.mjs').ScenarioContext['accounts']}} ctx
 */
export async function prepare(ctx) {
  await allowExchange(ctx);
  return undefined;
}

/** @type {Map<string, string>} the exchanged token of each reader token (one exchange per scenario run). */
const exchanged = new Map();

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {Promise<string>}
 */
async function exchangedToken(ctx) {
  const known = exchanged.get(ctx.tokens.reader);
  if (known !== undefined) return known;
  const res = await fetch(`${ctx.platform.tokenService.url}${tokenPath(ctx.tenant)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: exchangeBody(ctx),
  });
  const body = /** @type {{access_token?: string}} */ (await res.json());
  if (res.status !== 200 || body.access_token === undefined)
    throw new Error(`chain: exchange ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  exchanged.set(ctx.tokens.reader, body.access_token);
  return body.access_token;
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets(ctx) {
  const store = ctx.platform.plantStores[0];
  const token = exchanged.get(ctx.tokens.reader);
  if (token === undefined) throw new Error('chain: check() makes the exchanged token first');
  return {
    ours: {
      spec: {
        url: store.url,
        method: 'GET',
        path: PATH,
        headers: { authorization: `Bearer ${token}` },
      },
      pids: [store.pid],
      dbApp: 'plant-store',
    },
    baseline: {
      spec: {
        url: store.url,
        method: 'GET',
        path: PATH,
        headers: { authorization: `Bearer ${ctx.tokens.reader}` },
      },
      pids: [store.pid],
      dbApp: 'plant-store',
    },
  };
}

/**
 * Both tokens answer 200 before loading, the exchanged one naming its actor.
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
export async function check(ctx) {
  const token = await exchangedToken(ctx);
  const act = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).act;
  if (act?.sub !== ctx.accounts.writer.client_id)
    throw new Error('chain: the token names no actor');
  const store = ctx.platform.plantStores[0];
  for (const bearer of [token, ctx.tokens.reader]) {
    const res = await fetch(`${store.url}${PATH}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    if (res.status !== 200)
      throw new Error(
        `chain: the Plant Store answered ${res.status} ${(await res.text()).slice(0, 200)}`,
      );
  }
}
