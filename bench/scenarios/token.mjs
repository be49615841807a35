// token: client_credentials grants per second with a real service account (Postgres-backed,
// digested secret), JWT access tokens; against stock oidc-provider with one static client.
import { grantBody, tokenPath } from '../lib/platform.mjs';
import { measureLoad } from '../lib/load.mjs';

export const name = 'token';
export const what = 'client_credentials grant (client_secret_post), JWT access token';
export const baselineWhat = 'stock oidc-provider, one static client, in-memory adapter, JWT access tokens';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** @param {import('../run.mjs').ScenarioContext} ctx */
export async function run({ platform, tenant, accounts, baselines, load }) {
  const ours = await measureLoad(
    { ...load, url: platform.tokenService.url, method: 'POST', path: tokenPath(tenant), headers: FORM, body: grantBody(accounts.writer.client_id, accounts.writer.secret) },
    [platform.tokenService.pid],
  );
  const baseline = await measureLoad(
    { ...load, url: baselines.oidc.url, method: 'POST', path: '/protocol/openid-connect/token', headers: FORM, body: grantBody(baselines.oidcClient.id, baselines.oidcClient.secret) },
    [baselines.oidc.pid],
  );
  return { ours, baseline };
}
