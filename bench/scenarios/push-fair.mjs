// push-fair: Shared Signals push shared fairly between tenants. Another tenant's secret reset,
// from the API's answer to its SET's arrival at its push receiver (https on loopback, as in the
// signals scenario), resets one after another: quiet, against the same while an attacker tenant
// keeps twelve push streams busy whose receivers answer 202 only after 4 s (inside the 5 s push
// deadline) and sustains them with a reset of its own account every second. Windows alternate
// A B B A; the figure is the median of the rounds' p99 ratios (attack over quiet), held to
// TARGETS.pushFairP99; the p99 of all windows pooled is shown beside it.
// Between windows the attacker stops, its receivers answer at once and the platform delivers
// what the attacker queued (the bench waits until every one of its events arrived), so a quiet
// window is quiet.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createServiceAccount } from '../lib/platform.mjs';
import { receiverCertificate, startReceiver } from './signals.mjs';

export const name = 'push-fair';
export const what =
  "another tenant's reset -> SET at its push receiver while 12 of an attacker's push receivers answer after 4 s";
export const baselineWhat = 'the same resets, no attacker';
export const labels = ['under attack', 'quiet'];

const CREDENTIAL_CHANGE = 'https://schemas.openid.net/secevent/caep/event-type/credential-change';
const PUSH = 'urn:ietf:rfc:8935';
const ATTACKER_STREAMS = 12;
/** How long the attacker's receivers take to answer 202. */
const SLOW_MS = 4000;
/**
 * The attacker's own resets, one this often: each queues an event on each of its streams, 12 a
 * second against the 1 a second its lanes drain at 4 s a push, so its queues only grow.
 */
const ATTACK_RESET_MS = 1000;
/**
 * The victim's resets per window (quick: fewer); each waits for its SET before the next. A p99
 * of 300 is the fourth-slowest, not one scheduling hiccup of a shared host.
 */
const RESETS = { quick: 40, full: 300 };

/**
 * The attacker's receivers' shared state: `slow` (answers wait `SLOW_MS`), requests `open` now,
 * pushes `received` in all, the answers being held.
 * @typedef {{slow: boolean, open: number, received: number, held: Set<() => void>}} Attack
 */

/** An https receiver that answers 202, after `SLOW_MS` while the attack is on. */
async function startSlowReceiver(/** @type {Attack} */ attack) {
  const { key, cert } = receiverCertificate();
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    attack.open += 1;
    res.on('close', () => {
      attack.open -= 1;
    });
    req.resume();
    req.on('end', () => {
      attack.received += 1;
      if (!attack.slow) return void res.writeHead(202).end();
      const answer = () => {
        clearTimeout(timer);
        attack.held.delete(answer);
        res.writeHead(202).end();
      };
      const timer = setTimeout(answer, SLOW_MS);
      attack.held.add(answer);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `https://127.0.0.1:${port}/events`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/** @param {number[]} sorted @param {number} q */
const quantile = (sorted, q) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/** @param {number[]} values */
function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    resets: sorted.length,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1),
  };
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = /** @type {number} */ (sorted[mid]);
  const lower = /** @type {number} */ (sorted[mid - 1] ?? upper);
  return sorted.length % 2 === 1 ? upper : (lower + upper) / 2;
}

/** Resolves once `probe` holds, looking every 50 ms (the bench waits on the platform's state). */
async function until(/** @type {() => boolean} */ probe, /** @type {string} */ what) {
  const deadline = Date.now() + 60_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`push-fair: timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, load: {rounds: number}}} ctx
 */
export async function measure({ platform, tenant, load }) {
  const base = `${platform.tokenService.url}/realms`;
  /** A receiver account with a token for its streams. */
  const receiverOf = async (/** @type {string} */ realm) => {
    const account = await createServiceAccount(platform, realm, 'bench-receiver', 'View');
    await platform.updateServiceAccount(realm, account.client_id, { receive_signals: true });
    return platform.grantToken(
      realm,
      { clientId: account.client_id, secret: account.secret },
      { scope: 'ssf.manage' },
    );
  };
  const ssf = async (
    /** @type {string} */ realm,
    /** @type {string} */ token,
    /** @type {string} */ path,
    /** @type {unknown} */ body,
  ) => {
    const res = await fetch(`${base}/${realm}/ssf/streams${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200 && res.status !== 201)
      throw new Error(
        `push-fair: ${path || 'stream creation'} answered ${res.status}: ${await res.text()}`,
      );
    return /** @type {Record<string, any>} */ (await res.json());
  };

  const victim = `${tenant}-pf-victim`;
  const attacker = `${tenant}-pf-attacker`;
  await platform.createTenant('bench', victim);
  await platform.createTenant('bench', attacker);
  const victimToken = await receiverOf(victim);
  const victimTarget = await createServiceAccount(platform, victim, 'bench-target', 'View');
  const attackerToken = await receiverOf(attacker);
  const attackerTarget = await createServiceAccount(platform, attacker, 'bench-target', 'View');

  const receiver = await startReceiver();
  /** @type {Attack} */
  const attack = { slow: false, open: 0, received: 0, held: new Set() };
  /** @type {Awaited<ReturnType<typeof startSlowReceiver>>[]} */
  const slow = [];
  try {
    await ssf(victim, victimToken, '', {
      delivery: { method: PUSH, endpoint_url: receiver.url },
      events_requested: [CREDENTIAL_CHANGE],
    });
    for (let i = 0; i < ATTACKER_STREAMS; i += 1) {
      const r = await startSlowReceiver(attack);
      slow.push(r);
      await ssf(attacker, attackerToken, '', {
        delivery: { method: PUSH, endpoint_url: r.url },
        events_requested: [CREDENTIAL_CHANGE],
      });
    }
    /** The attacker's resets so far: each is one event on each of its streams. */
    let attackerResets = 0;

    const resets = load.rounds > 1 ? RESETS.full : RESETS.quick;
    /** One window of the victim's resets: each latency in ms. */
    const window = async () => {
      /** @type {number[]} */
      const latencies = [];
      for (let i = 0; i < resets; i += 1) {
        const arrival = receiver.next();
        await platform.resetSecret(victim, victimTarget.client_id);
        const answered = performance.now();
        // The SET may arrive before the reset's answer has been read: that counts as 0.
        latencies.push(Math.max(0, (await arrival) - answered));
      }
      return latencies;
    };
    const quiet = () => window();
    const attacked = async () => {
      attack.slow = true;
      let attacking = true;
      const sustain = (async () => {
        while (attacking) {
          await platform.resetSecret(attacker, attackerTarget.client_id);
          attackerResets += 1;
          await new Promise((resolve) => setTimeout(resolve, ATTACK_RESET_MS));
        }
      })();
      try {
        // The attack holds lanes before the window starts (its receivers hold requests open).
        await until(() => attack.open >= 4, "the attacker's pushes are waiting on its receivers");
        const latencies = await window();
        return { latencies, attackerOpen: attack.open };
      } finally {
        attacking = false;
        await sustain;
        // The attack ends: answers at once, and what it queued is delivered before the next window.
        attack.slow = false;
        for (const answer of [...attack.held]) answer();
        await until(
          () => attack.received >= attackerResets * ATTACKER_STREAMS && attack.open === 0,
          "the attacker's events are delivered",
        );
      }
    };

    // A warm-up window each side, unmeasured (the realms are new).
    await quiet();
    await attacked();
    /** @type {{quiet: ReturnType<typeof summary>, attack: ReturnType<typeof summary>, ratio: number, attackerOpen: number}[]} */
    const rounds = [];
    /** @type {number[]} */
    const allQuiet = [];
    /** @type {number[]} */
    const allAttack = [];
    for (let round = 0; round < load.rounds; round += 1) {
      /** @type {number[]} */
      let q = [];
      /** @type {{latencies: number[], attackerOpen: number}} */
      let a = { latencies: [], attackerOpen: 0 };
      if (round % 2 === 0) {
        a = await attacked();
        q = await quiet();
      } else {
        q = await quiet();
        a = await attacked();
      }
      allQuiet.push(...q);
      allAttack.push(...a.latencies);
      const sq = summary(q);
      const sa = summary(a.latencies);
      rounds.push({
        quiet: sq,
        attack: sa,
        ratio: sa.p99Ms / sq.p99Ms,
        attackerOpen: a.attackerOpen,
      });
    }
    const ours = summary(allAttack);
    const baseline = summary(allQuiet);
    const side = (/** @type {ReturnType<typeof summary>} */ s) => ({
      ...s,
      rps: null,
      errors: 0,
      cpuUsPerReq: null,
      mainCpuUsPerReq: null,
      dbCpuUsPerReq: null,
    });
    return {
      scenario: name,
      what,
      baselineWhat,
      labels,
      ours: side(ours),
      baseline: side(baseline),
      rounds,
      ratio: { rps: null, cpuPerRequest: null, p99: median(rounds.map((r) => r.ratio)) },
      pushFair: {
        attackerStreams: ATTACKER_STREAMS,
        slowMs: SLOW_MS,
        resetsPerWindow: resets,
        // Every window's resets together: the p99 over all of them, attack over quiet.
        pooledP99Ratio: ours.p99Ms / baseline.p99Ms,
      },
    };
  } finally {
    await receiver.close();
    await Promise.all(slow.map((r) => r.close()));
  }
}
