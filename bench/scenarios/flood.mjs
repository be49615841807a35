// flood: client_credentials grants of the bench tenant (the token scenario's request) while one
// address floods another tenant with what stores state before anyone signs in (the token
// service's authorization endpoint, the portal's GET /login: bench/load/anonymous-flood-client.mjs,
// its own process), against the same grants on a quiet service, windows alternating A B B A.
// The flood's starts are bounded per source (SIGN_IN_STARTS_PER_IP): past them it is refused
// from memory, before oidc-provider or Redis, so the grant p99 under it is held to a multiple
// of the quiet p99 (TARGETS.floodP99 in lib/report.mjs).
import { fileURLToPath } from 'node:url';
import { measureUnderBackground } from '../lib/load.mjs';
import { grantBody, tokenPath } from '../lib/platform.mjs';
import { startLoadGenerator } from '../lib/processes.mjs';

export const name = 'flood';
export const what =
  "client_credentials grants (the token scenario) while 50 connections from one address flood another tenant's /auth and the portal's /login (CPU figures include the flood)";
export const baselineWhat = 'the same grants on the same service, no flood';
/** The two sides' names in the table. */
export const labels = ['1-address flood', 'quiet'];

const CLIENTS = 50;
const FLOOD = fileURLToPath(new URL('../load/anonymous-flood-client.mjs', import.meta.url));
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/**
 * What a flooded endpoint may answer: a start (303) or a refusal (429); anything else fails the
 * scenario. The portal's starts within the budget end 503 here: the bench's issuers name a fixed
 * AUTH_URL nothing listens on, so its realm discovery fails after the start was counted.
 */
const EXPECTED = new Set(['auth 303', 'auth 429', 'login 303', 'login 503', 'login 429']);

/** @param {import('../lib/platform.mjs').Platform} platform */
const floodsPortal = (platform) => platform.accountAdmin !== undefined;

/**
 * Starts the flood and resolves once every connection has had an answer.
 * @param {import('../lib/platform.mjs').Platform} platform
 * @param {string} tenant the flooded tenant
 */
async function startFlood(platform, tenant) {
  /** @type {{statuses: Record<string, number>, elapsedSec: number} | undefined} */
  let result;
  /** @type {() => void} */
  let flooding = () => {};
  const ready = new Promise((resolve) => (flooding = () => resolve(undefined)));
  const spec = {
    authUrl: platform.tokenService.url,
    ...(floodsPortal(platform) ? { portalUrl: platform.portalUrl } : {}),
    tenant,
    redirectUri: `${platform.portalUrl}/auth/callback`,
    clients: CLIENTS,
  };
  const generator = startLoadGenerator(FLOOD, spec, (message) => {
    if (message.event === 'flooding') flooding();
    if (message.event === 'result') result = message;
  });
  const exited = generator.done.then(({ code, stderr }) => {
    throw new Error(`the flood exited (${code}) before it was stopped:\n${stderr.slice(-2000)}`);
  });
  await Promise.race([ready, exited]);
  exited.catch(() => {});
  return {
    async stop() {
      generator.stop();
      const { stderr } = await generator.done;
      if (result === undefined)
        throw new Error(`the flood gave no result:\n${stderr.slice(-2000)}`);
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
  const flooded = await platform.createTenant('flood');
  /** @type {import('../lib/load.mjs').Target} */
  const grants = {
    spec: {
      url: tokenService.url,
      method: 'POST',
      path: tokenPath(tenant),
      headers: FORM,
      body: grantBody(accounts.writer.client_id, accounts.writer.secret),
    },
    pids: [tokenService.pid, ...(platform.accountAdmin ? [platform.accountAdmin.pid] : [])],
    dbApp: 'token-service',
  };
  const measured = await measureUnderBackground(grants, load, db, () =>
    startFlood(platform, flooded),
  );
  const answers = measured.statuses;
  const floodSec = measured.seconds;
  const unexpected = Object.keys(answers).filter((status) => !EXPECTED.has(status));
  if (
    !answers['auth 429'] ||
    (floodsPortal(platform) && !answers['login 429']) ||
    unexpected.length > 0
  )
    throw new Error(
      `flood: the flooded endpoints answered ${JSON.stringify(answers)} (expected 303s, then 429s)`,
    );
  const count = (/** @type {string} */ prefix, /** @type {string} */ status) =>
    answers[`${prefix} ${status}`] ?? 0;
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
    flood: {
      clients: CLIENTS,
      statuses: answers,
      seconds: floodSec,
      startedPerSec: (count('auth', '303') + count('login', '303')) / floodSec,
      refusedPerSec: (count('auth', '429') + count('login', '429')) / floodSec,
    },
  };
}
