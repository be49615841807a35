// token: client_credentials grants per second with a real service account (Postgres-backed,
// digested secret), JWT access tokens; against stock oidc-provider with one static client.
import { grantBody, tokenPath } from '../lib/platform.mjs';

export const name = 'token';
export const what = 'client_credentials grant (client_secret_post), JWT access token';
export const baselineWhat =
  'stock oidc-provider, one static client, in-memory adapter, JWT access tokens';
// Its ratio sits closest to its target and a round's ratio spreads ±8 % here: 12 rounds in a full run.
export const fullRounds = 12;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tenant, accounts, baselines }) {
  const { tokenService } = platform;
  return {
    ours: {
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
    baseline: {
      spec: {
        url: baselines.oidc.url,
        method: 'POST',
        path: '/protocol/openid-connect/token',
        headers: FORM,
        body: grantBody(baselines.oidcClient.id, baselines.oidcClient.secret),
      },
      pids: [baselines.oidc.pid],
    },
  };
}
