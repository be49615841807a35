// token-es256: the token scenario on a realm that signs ES256, against stock oidc-provider
// signing ES256 the stock way (jose, WebCrypto): what choosing ES256 gives against a peer.
import { grantSpec, tokenPath } from '../lib/platform.mjs';

export const name = 'token-es256';
export const what = 'client_credentials grant (client_secret_post), ES256 (P-256) JWT access token';
export const baselineWhat =
  'stock oidc-provider signing ES256, one static client, in-memory adapter, JWT access tokens';
// Like token: its ratio sits near its target, so 12 rounds in a full run.
export const fullRounds = 12;
export const checkTargets = true;

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, es256, baselines }) {
  const { tokenService } = platform;
  return {
    ours: {
      spec: grantSpec(tokenService.url, tokenPath(es256.tenant), es256.accounts.writer),
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: grantSpec(baselines.oidcEs256.url, '/protocol/openid-connect/token', {
        client_id: baselines.oidcClient.id,
        secret: baselines.oidcClient.secret,
      }),
      pids: [baselines.oidcEs256.pid],
    },
  };
}
