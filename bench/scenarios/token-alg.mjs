// token-alg: what a realm gains by signing ES256 instead of RS256: the same service, the same
// account setup and load, one realm of each algorithm, alternating windows.
import { grantSpec, tokenPath } from '../lib/platform.mjs';

export const name = 'token-alg';
export const what = 'our grant on a realm signing ES256';
export const baselineWhat = 'our grant on a realm signing RS256 (the token scenario)';
export const labels = ['ES256 realm', 'RS256 realm'];
export const fullRounds = 12;
export const checkTargets = true;

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tenant, accounts, es256 }) {
  const { tokenService } = platform;
  return {
    ours: {
      spec: grantSpec(tokenService.url, tokenPath(es256.tenant), es256.accounts.writer),
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: grantSpec(tokenService.url, tokenPath(tenant), accounts.writer),
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
  };
}
