// quota: client_credentials grants of an account held to an enforced grant quota (counted in
// Redis on every grant) against the same token service's grants of an account whose quota is
// off, in the same run (target: ≥ 0.95×). The quota is the largest allowed (100,000 a minute),
// so no grant of a short run is refused: what is measured is the count itself.
// `BENCH_QUOTA_MODE=off` (the control: both sides uncounted) or `log` measures the other modes.
import { grantBody, INTERNAL_API_TOKEN, tokenPath } from '../lib/platform.mjs';

export const name = 'quota';
export const what =
  'client_credentials grant (client_secret_post) of an account with an enforced grant quota';
export const baselineWhat = "ours: another account's grant, its quota off (the token scenario's)";
// 12 rounds: the ratio sits close to its target, and a round on a busy host swings ±10 %.
export const fullRounds = 12;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * Gives the reader account an enforced quota (through the internal API, as the portal does).
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: Record<string, {client_id: string, secret: string}>}} ctx
 */
export async function prepare({ platform, tenant, accounts }) {
  const res = await fetch(
    `${platform.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${accounts.reader.client_id}/quota`,
    {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${INTERNAL_API_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        quota: { per_minute: 100_000, mode: process.env.BENCH_QUOTA_MODE ?? 'enforce' },
        actor: 'bench',
      }),
    },
  );
  if (res.status !== 200)
    throw new Error(`quota: setting the quota answered ${res.status} ${await res.text()}`);
  return {};
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tenant, accounts }) {
  const { tokenService } = platform;
  const spec = { url: tokenService.url, method: 'POST', path: tokenPath(tenant), headers: FORM };
  return {
    ours: {
      spec: { ...spec, body: grantBody(accounts.reader.client_id, accounts.reader.secret) },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: { ...spec, body: grantBody(accounts.writer.client_id, accounts.writer.secret) },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
  };
}
