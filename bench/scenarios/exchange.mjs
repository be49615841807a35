// exchange: token exchange grants per second (RFC 8693: the actor authenticated by its secret,
// the subject token verified with the live revocation map, the exchanged token minted), against
// the token scenario's client-credentials grant of the same account on the same token service,
// in the same run. Target: ≥ 0.8× its req/s.
import {
  grantBody,
  INTERNAL_API_TOKEN,
  PLANT_STORE_AUDIENCE,
  tokenPath,
} from '../lib/platform.mjs';

export const name = 'exchange';
export const what =
  'token exchange grant (client_secret_post): a live subject token for one for the Plant Store, act naming the actor';
export const baselineWhat =
  "the same account's client_credentials grant on the same token service (the token scenario)";

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * The writer account may act for others at the Plant Store (as an Account Admin allows it).
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: import('./index.mjs').ScenarioContext['accounts']}} ctx
 */
export async function prepare({ platform, tenant, accounts }) {
  const res = await fetch(
    `${platform.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${accounts.writer.client_id}/delegations`,
    {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${INTERNAL_API_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        delegations: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read plants:write' }],
        actor: 'bench',
      }),
    },
  );
  if (res.status !== 200)
    throw new Error(`exchange: delegations ${res.status} ${await res.text()}`);
  return undefined;
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
export function exchangeBody({ accounts, tokens }) {
  return new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    client_id: accounts.writer.client_id,
    client_secret: accounts.writer.secret,
    subject_token: tokens.reader,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    audience: PLANT_STORE_AUDIENCE,
  }).toString();
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets(ctx) {
  const { platform, tenant, accounts } = ctx;
  const { tokenService } = platform;
  return {
    ours: {
      spec: {
        url: tokenService.url,
        method: 'POST',
        path: tokenPath(tenant),
        headers: FORM,
        body: exchangeBody(ctx),
      },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: {
        url: tokenService.url,
        method: 'POST',
        path: tokenPath(tenant),
        headers: FORM,
        body: grantBody(accounts.writer.client_id, accounts.writer.secret),
      },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
  };
}

/**
 * An exchanged token before loading (a refused exchange would bench 400s).
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
export async function check(ctx) {
  const res = await fetch(`${ctx.platform.tokenService.url}${tokenPath(ctx.tenant)}`, {
    method: 'POST',
    headers: FORM,
    body: exchangeBody(ctx),
  });
  const body = /** @type {{issued_token_type?: unknown}} */ (await res.json());
  if (res.status !== 200 || typeof body.issued_token_type !== 'string')
    throw new Error(`exchange: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
}
