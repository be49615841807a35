// signin: client_credentials grants (the token scenario's request) while 200 clients hammer the
// sign-in form (bench/load/sign-in-client.mjs, its own process), against the same grants on a
// quiet service, windows alternating A B B A. A sign-in burst must not delay grants: password
// checks (scrypt) are bounded (SIGN_IN_CONCURRENT_HASHES) and run on low-priority threads of
// their own, never on the thread pool that signs tokens, so the grant p99 under the burst is
// held to a multiple of the quiet p99 (TARGETS.signinP99 in lib/report.mjs).
import { fileURLToPath } from 'node:url';
import { measureUnderBackground } from '../lib/load.mjs';
import { grantBody, tokenPath } from '../lib/platform.mjs';
import { startLoadGenerator } from '../lib/processes.mjs';

export const name = 'signin';
export const what =
  'client_credentials grants (the token scenario) while 200 clients post wrong passwords at the sign-in form (CPU figures include the sign-ins)';
export const baselineWhat = 'the same grants on the same service, no sign-ins';
/** The two sides' names in the table. */
export const labels = ['200 sign-ins', 'quiet'];

const CLIENTS = 200;
const HAMMER = fileURLToPath(new URL('../load/sign-in-client.mjs', import.meta.url));
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * Starts the sign-in clients and resolves once every one of them has had an answer.
 * @param {import('../lib/platform.mjs').Platform} platform
 * @param {string} tenant
 */
async function startHammer(platform, tenant) {
  /** @type {{statuses: Record<string, number>, elapsedSec: number} | undefined} */
  let result;
  /** @type {() => void} */
  let hammering = () => {};
  const ready = new Promise((resolve) => (hammering = () => resolve(undefined)));
  const generator = startLoadGenerator(
    HAMMER,
    {
      authUrl: platform.tokenService.url,
      tenant,
      redirectUri: `${platform.portalUrl}/auth/callback`,
      clients: CLIENTS,
    },
    (message) => {
      if (message.event === 'hammering') hammering();
      if (message.event === 'result') result = message;
    },
  );
  const exited = generator.done.then(({ code, stderr }) => {
    throw new Error(
      `the sign-in clients exited (${code}) before they were stopped:\n${stderr.slice(-2000)}`,
    );
  });
  await Promise.race([ready, exited]);
  exited.catch(() => {});
  return {
    async stop() {
      generator.stop();
      const { stderr } = await generator.done;
      if (result === undefined)
        throw new Error(`the sign-in clients gave no result:\n${stderr.slice(-2000)}`);
      return result;
    },
  };
}

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: import('./index.mjs').ScenarioContext['accounts'], db: import('pg').Client,
 *   load: {connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}}} ctx
 */
export async function measure({ platform, tenant, accounts, db, load }) {
  const { tokenService } = platform;
  /** @type {import('../lib/load.mjs').Target} */
  const grants = {
    spec: {
      url: tokenService.url,
      method: 'POST',
      path: tokenPath(tenant),
      headers: FORM,
      body: grantBody(accounts.writer.client_id, accounts.writer.secret),
    },
    pids: [tokenService.pid],
    dbApp: 'token-service',
  };
  const measured = await measureUnderBackground(grants, load, db, () =>
    startHammer(platform, tenant),
  );
  const signIns = measured.statuses;
  const signInSec = measured.seconds;
  const unexpected = Object.keys(signIns).filter((status) => status !== '401' && status !== '429');
  if (!signIns['401'] || unexpected.length > 0)
    throw new Error(
      `signin: the form answered ${JSON.stringify(signIns)} (expected 401s and 429s)`,
    );
  const { ours, baseline, rounds, ratio } = measured;
  return {
    scenario: name,
    what,
    baselineWhat,
    labels,
    ours,
    baseline,
    rounds,
    ratio,
    signIns: {
      clients: CLIENTS,
      statuses: signIns,
      seconds: signInSec,
      checkedPerSec: (signIns['401'] ?? 0) / signInSec,
      refusedPerSec: (signIns['429'] ?? 0) / signInSec,
    },
  };
}
