// signin: client_credentials grants of the bench tenant (the token scenario's request) while 200
// clients hammer another tenant's sign-in form (bench/load/sign-in-client.mjs, its own
// process), against the same grants on a quiet service, windows alternating A B B A. A sign-in
// storm must not starve grants: a password checker is held from a sign-in's first step and
// the source's budget read before its interaction, so refusals cost little
// (sign-in/authenticate-user.ts), and checks (scrypt) are bounded (SIGN_IN_CONCURRENT_HASHES)
// and run on low-priority threads of their own, never on the thread pool that signs tokens.
// Targets: the grant p99 under the storm at most TARGETS.signinP99 × the quiet p99, its req/s
// at least TARGETS.signinRps × quiet (lib/report.mjs).
//
// The cores are split (lib/processes.mjs `coreSplit`, both windows alike): the load generators
// (autocannon and the sign-in clients) and this process on core 0, the token service on the
// others, so the sign-in clients' own CPU is not taken from the server; the sign-in clients run
// at nice 19, so neither is it taken from autocannon, whose latencies are the figure. Postgres
// and Redis are the host's daemons and run where the scheduler puts them. The result says where the storm's
// CPU went: the password checkers (the token service's threads at nice 19), its main thread,
// Postgres, and the sign-in clients.
import { fileURLToPath } from 'node:url';
import { measureUnderBackground } from '../lib/load.mjs';
import { grantBody, tokenPath } from '../lib/platform.mjs';
import {
  coreSplit,
  cpuSeconds,
  pinProcess,
  startLoadGenerator,
  threadCpuSecondsAtNice,
} from '../lib/processes.mjs';
import { median } from '../lib/report.mjs';

export const name = 'signin';
export const what =
  "client_credentials grants (the token scenario) while 200 clients post wrong passwords at another tenant's sign-in form (CPU figures include the sign-ins)";
export const baselineWhat = 'the same grants on the same service, no sign-ins';
/** The two sides' names in the table. */
export const labels = ['200 sign-ins', 'quiet'];

const CLIENTS = 200;
const HAMMER = fileURLToPath(new URL('../load/sign-in-client.mjs', import.meta.url));
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The password checkers' nice value (services/token-service/src/passwords/password-checkers.ts). */
const CHECKER_NICENESS = 19;

/**
 * Starts the sign-in clients and resolves once every one of them has had an answer.
 * @param {import('../lib/platform.mjs').Platform} platform
 * @param {string} tenant
 * @param {string | undefined} cpus
 */
async function startHammer(platform, tenant, cpus) {
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
    // At nice 19: the crowd stands for machines elsewhere, so here it takes only what the
    // grants' generator leaves on their shared core (its answers say how hard it still hit).
    { ...(cpus === undefined ? {} : { cpus }), niceness: 19 },
  );
  const exited = generator.done.then(({ code, stderr }) => {
    throw new Error(
      `the sign-in clients exited (${code}) before they were stopped:\n${stderr.slice(-2000)}`,
    );
  });
  await Promise.race([ready, exited]);
  exited.catch(() => {});
  return {
    pid: generator.pid,
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
 * Where each measured window's CPU went besides what `measureWindow` counts: the token
 * service's password checkers and the sign-in clients, summed by side.
 * @param {number} server  the token service's pid
 * @param {() => number | undefined} hammerPid  the sign-in clients' pid while they run
 */
function stormProbe(server, hammerPid) {
  const totals = {
    quiet: { checkerSec: 0, hammerSec: 0 },
    loaded: { checkerSec: 0, hammerSec: 0 },
  };
  const checkerSec = () => threadCpuSecondsAtNice(server, CHECKER_NICENESS);
  const hammerSec = () => {
    const pid = hammerPid();
    return pid === undefined ? 0 : cpuSeconds(pid);
  };
  /** @type {import('../lib/load.mjs').WindowProbe} */
  const probe = {
    start(_pids, label) {
      const side = totals[/** @type {'quiet' | 'loaded'} */ (label)];
      const checkers = checkerSec();
      const hammer = hammerSec();
      return {
        async stop() {
          for (const [tid, sec] of checkerSec()) side.checkerSec += sec - (checkers.get(tid) ?? 0);
          side.hammerSec += hammerSec() - hammer;
        },
      };
    },
  };
  return { probe, totals };
}

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: import('./index.mjs').ScenarioContext['accounts'], db: import('pg').Client,
 *   load: {connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}}} ctx
 */
export async function measure({ platform, tenant, accounts, db, load }) {
  const { tokenService } = platform;
  // The storm hits a tenant of its own: one tenant's sign-in form, another's grants.
  const stormed = await platform.createTenant('storm');
  const split = coreSplit();
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
    ...(split ? { generatorCpus: split.generators } : {}),
  };
  /** @type {number | undefined} */
  let hammerPid;
  const storm = stormProbe(tokenService.pid, () => hammerPid);
  if (split) {
    pinProcess(tokenService.pid, split.servers);
    pinProcess(process.pid, split.generators);
  }
  let measured;
  try {
    measured = await measureUnderBackground(
      grants,
      load,
      db,
      async () => {
        const hammer = await startHammer(platform, stormed, split?.generators);
        hammerPid = hammer.pid;
        return {
          async stop() {
            hammerPid = undefined;
            return hammer.stop();
          },
        };
      },
      storm.probe,
    );
  } finally {
    if (split) {
      pinProcess(tokenService.pid, split.all);
      pinProcess(process.pid, split.all);
    }
  }
  const signIns = measured.statuses;
  const signInSec = measured.seconds;
  const unexpected = Object.keys(signIns).filter((status) => status !== '401' && status !== '429');
  if (!signIns['401'] || unexpected.length > 0)
    throw new Error(
      `signin: the form answered ${JSON.stringify(signIns)} (expected 401s and 429s)`,
    );
  const { ours, baseline, rounds, ratio } = measured;
  const perGrant = (/** @type {number} */ sec, /** @type {number} */ requests) =>
    requests > 0 ? (sec / requests) * 1e6 : null;
  return {
    scenario: name,
    what,
    baselineWhat,
    labels,
    ours,
    baseline,
    rounds,
    ratio,
    // Each round's pair of adjacent windows: what the host did to one it likely did to the other.
    roundRatios: {
      p99: median(rounds.map((r) => (r.oursP99Ms ?? 0) / (r.baselineP99Ms ?? 1))),
      rps: median(rounds.map((r) => r.oursRps / r.baselineRps)),
      cpuPerGrant: median(
        rounds.map((r) => (r.oursCpuUsPerReq ?? 0) / (r.baselineCpuUsPerReq ?? 1)),
      ),
    },
    cores: split
      ? { generators: split.generators, servers: split.servers }
      : 'not pinned (one core, or no taskset)',
    // µs per grant, on top of the token service's own (ours/baseline.cpuUsPerReq includes the checkers).
    stormCpuUsPerGrant: {
      passwordCheckers: perGrant(storm.totals.loaded.checkerSec, ours.requests),
      signInClients: perGrant(storm.totals.loaded.hammerSec, ours.requests),
      quietPasswordCheckers: perGrant(storm.totals.quiet.checkerSec, baseline.requests),
    },
    signIns: {
      clients: CLIENTS,
      statuses: signIns,
      seconds: signInSec,
      checkedPerSec: (signIns['401'] ?? 0) / signInSec,
      refusedPerSec: (signIns['429'] ?? 0) / signInSec,
    },
  };
}
