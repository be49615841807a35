// One plain-text table for the terminal (and docs/performance.md), and the machine facts
// every result file carries: absolute figures only make sense with them.
import { cpus, loadavg, totalmem } from 'node:os';

/** @param {number | null | undefined} value */
const fmt = (value, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);

export function machine() {
  const list = cpus();
  return {
    cores: list.length,
    cpuModel: list[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadAverage1m: Number(loadavg()[0]?.toFixed(2)),
  };
}

/**
 * A Markdown table; text columns (the first, and those named in `left`) align left, figures right.
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {number[]} [left] indexes of further left-aligned columns
 */
export function table(header, rows, left = []) {
  const isLeft = (/** @type {number} */ i) => i === 0 || left.includes(i);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) =>
    `| ${cells.map((c, i) => (isLeft(i) ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (isLeft(i) ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/**
 * Ratios, both "higher is better": throughput ours/baseline; CPU efficiency baseline/ours.
 * With rounds, the median of the per-round ratios (each round's two windows ran back to
 * back, so a burst of other work on the machine moves both): pooled totals let one
 * disturbed window swing a run by ±10 % here. `pooled` keeps the ratio of the totals.
 * @param {{ours: any, baseline: any, rounds?: {oursRps: number, baselineRps: number, oursCpuUsPerReq: number | null, baselineCpuUsPerReq: number | null}[]}} pair
 */
export function ratios({ ours, baseline, rounds }) {
  const pooled = {
    rps: baseline && baseline.rps > 0 ? ours.rps / baseline.rps : null,
    cpuPerRequest: baseline && ours.cpuUsPerReq ? baseline.cpuUsPerReq / ours.cpuUsPerReq : null,
  };
  if (!rounds || rounds.length < 2) return { ...pooled, pooled };
  const rps = rounds.filter((r) => r.baselineRps > 0).map((r) => r.oursRps / r.baselineRps);
  const cpu = rounds
    .filter((r) => r.oursCpuUsPerReq && r.baselineCpuUsPerReq)
    .map(
      (r) =>
        /** @type {number} */ (r.baselineCpuUsPerReq) / /** @type {number} */ (r.oursCpuUsPerReq),
    );
  return {
    rps: median(rps) ?? pooled.rps,
    cpuPerRequest: median(cpu) ?? pooled.cpuPerRequest,
    pooled,
    perRound: { rps, cpuPerRequest: cpu },
  };
}

/** @param {number[]} values */
export function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? /** @type {number} */ (sorted[mid])
    : /** @type {number} */ (sorted[mid - 1] + /** @type {number} */ (sorted[mid])) / 2;
}

export { fmt };

/**
 * The targets (2-core machine, loopback; docs/performance.md). Ratios: higher is better, except
 * `signinP99`: the grant p99 under a sign-in storm over the quiet p99, at most; `signinRps`: the
 * grant req/s under it over the quiet req/s, at least. `keys`: a
 * private_key_jwt grant against the secret grant of the same service. `dpop`: a DPoP list
 * against a bearer list; `introspect`: introspection against a list. `token-es256`: an ES256 realm's grant
 * against stock oidc-provider signing ES256 and against our RS256 grant, a list with an ES256
 * token against one with an RS256 token. `floodP99`: the grant p99 under a one-address flood of
 * another tenant's sign-in starts over the quiet p99, at most. `signals`: a grant in a realm with
 * a Shared Signals stream against one without; `signalsDeliveryP99Ms`: a reset's answer to its
 * SET's arrival at a push receiver. `pushFairP99`: that p99 for one tenant while another's slow
 * push receivers hold their requests, over the quiet p99, at most.
 */
export const TARGETS = {
  token: 0.9,
  keys: 0.8,
  list: 1.0,
  create: 0.9,
  dpop: 0.8,
  introspect: 1.0,
  exchange: 0.8,
  chain: 0.95,
  'token-es256': 1.0,
  'token-alg': 1.6,
  'list-es256': 0.95,
  revocationP99Ms: 10,
  revocationCeilingMs: 50,
  idleRssMb: 150,
  growthPct: 10,
  signinP99: 1.5,
  signinRps: 0.8,
  floodP99: 1.5,
  signals: 0.95,
  signalsDeliveryP99Ms: 50,
  pushFairP99: 1.5,
};

/**
 * One line per target: the figure, the target, met or by how much missed.
 * @param {{scenarios: any[], revocation: any, memory: {service: string, idleMb: number}[]}} run
 */
export function targetLines({ scenarios, revocation, memory }) {
  return [
    ...scenarios.flatMap(throughputLine),
    ...scenarios.filter((s) => s.scenario === 'signin').flatMap(latencyLine),
    ...scenarios.filter((s) => s.scenario === 'flood').flatMap(latencyLine),
    ...scenarios
      .filter((s) => s.scenario === 'signals')
      .map(
        (s) =>
          `signals: reset answer -> SET at a push receiver p50 ${fmt(s.delivery.p50Ms, 2)} ms, p99 ${fmt(s.delivery.p99Ms, 2)} ms over ${s.delivery.resets} resets, target p99 ≤ ${TARGETS.signalsDeliveryP99Ms} ms -> ${s.delivery.p99Ms <= TARGETS.signalsDeliveryP99Ms ? 'met' : 'missed'}`,
      ),
    ...scenarios
      .filter((s) => s.scenario === 'push-fair' && s.ratio.p99 !== null)
      .map(
        (s) =>
          `push-fair: another tenant's reset -> SET p99 ${fmt(s.ours.p99Ms, 2)} ms under ${s.pushFair.attackerStreams} slow push receivers, ${fmt(s.baseline.p99Ms, 2)} ms quiet (pooled ${fmt(s.pushFair.pooledP99Ratio, 2)}×); median of the rounds' ${fmt(s.ratio.p99, 2)}×, target ≤ ${TARGETS.pushFairP99}× -> ${latencyVerdict(s.ratio.p99, TARGETS.pushFairP99)}`,
      ),
    ...revocationLine(revocation),
    ...memory.map(
      (m) =>
        `memory ${m.service}: idle RSS ${fmt(m.idleMb, 1)} MB, target ≤ ${TARGETS.idleRssMb} MB -> ${m.idleMb <= TARGETS.idleRssMb ? 'met' : 'missed'}`,
    ),
  ].join('\n');
}

/**
 * A scenario with a throughput target: its req/s against the baseline's.
 * @param {any} s
 * @returns {string[]}
 */
function throughputLine(s) {
  const target = /** @type {Record<string, number>} */ (TARGETS)[s.scenario];
  if (target === undefined || s.ratio.rps === null) return [];
  const verdict =
    s.ratio.rps >= target ? 'met' : `missed by ${fmt((1 - s.ratio.rps / target) * 100)} %`;
  return [
    `${s.scenario}: ${fmt(s.ratio.rps, 2)}× baseline req/s (CPU/req ${fmt(s.ratio.cpuPerRequest, 2)}×), target ≥ ${target}× -> ${verdict}`,
  ];
}

/** @param {number} ratio @param {number} target */
const latencyVerdict = (ratio, target) =>
  ratio <= target ? 'met' : `missed by ${fmt((ratio / target - 1) * 100)} %`;

/**
 * The sign-in and flood scenarios: the grant's p99 under their load against a quiet one.
 * @param {any} s
 * @returns {string[]}
 */
function latencyLine(s) {
  if (s.ratio.p99 === null) return [];
  if (s.scenario === 'signin') {
    const rps = s.ratio.rps ?? 0;
    const rounds = s.roundRatios
      ? ` (rounds' medians: p99 ${fmt(s.roundRatios.p99, 2)}×, req/s ${fmt(s.roundRatios.rps, 2)}×, CPU per grant ${fmt(s.roundRatios.cpuPerGrant, 2)}×)`
      : '';
    return [
      `signin: grant p99 ${fmt(s.ours.p99Ms, 2)} ms under ${s.signIns.clients} sign-in clients, ${fmt(s.baseline.p99Ms, 2)} ms quiet: ${fmt(s.ratio.p99, 2)}×, target ≤ ${TARGETS.signinP99}× -> ${latencyVerdict(s.ratio.p99, TARGETS.signinP99)}`,
      `signin: grant req/s ${fmt(s.ours.rps)} under the sign-ins, ${fmt(s.baseline.rps)} quiet: ${fmt(rps, 2)}×, target ≥ ${TARGETS.signinRps}× -> ${rps >= TARGETS.signinRps ? 'met' : `missed by ${fmt((1 - rps / TARGETS.signinRps) * 100)} %`}${rounds}`,
      ...(s.stormCpuUsPerGrant
        ? [
            `signin: CPU µs per grant ${fmt(s.ours.cpuUsPerReq)} under the sign-ins (password checkers ${fmt(s.stormCpuUsPerGrant.passwordCheckers)}, main thread ${fmt(s.ours.mainCpuUsPerReq)}, Postgres ${fmt(s.ours.dbCpuUsPerReq)}; sign-in clients ${fmt(s.stormCpuUsPerGrant.signInClients)} more), ${fmt(s.baseline.cpuUsPerReq)} quiet; cores ${typeof s.cores === 'string' ? s.cores : `generators ${s.cores.generators}, servers ${s.cores.servers}`}`,
          ]
        : []),
    ];
  }
  if (s.scenario === 'flood')
    return [
      `flood: grant p99 ${fmt(s.ours.p99Ms, 2)} ms under a ${s.flood.clients}-connection flood from one address, ${fmt(s.baseline.p99Ms, 2)} ms quiet: ${fmt(s.ratio.p99, 2)}×, target ≤ ${TARGETS.floodP99}× -> ${latencyVerdict(s.ratio.p99, TARGETS.floodP99)}`,
    ];
  return [];
}

/**
 * @param {any} revocation
 * @returns {string[]}
 */
function revocationLine(revocation) {
  if (!revocation || revocation.skipped) return [];
  const p99 = revocation.everyReplica.p99Ms;
  const verdict =
    p99 <= TARGETS.revocationP99Ms
      ? 'met'
      : p99 <= TARGETS.revocationCeilingMs
        ? `above the 10 ms target, under the 50 ms ceiling`
        : 'missed (above the 50 ms ceiling)';
  return [
    `revocation: p99 ${fmt(p99, 2)} ms at every replica, target ≤ ${TARGETS.revocationP99Ms} ms (ceiling ${TARGETS.revocationCeilingMs}) -> ${verdict}`,
  ];
}

/**
 * The rest of the host per request: what the load generator spent, and how long cores sat idle
 * (requests waiting rather than computing), which the servers' CPU figures do not show.
 * @param {{loadCpuUsPerReq?: number | null, hostIdleUsPerReq?: number | null}} side
 */
function hostNote(side) {
  return side.loadCpuUsPerReq == null
    ? ''
    : `host per req: load generator ${fmt(side.loadCpuUsPerReq)} µs, idle cores ${fmt(side.hostIdleUsPerReq)} µs`;
}

/**
 * Everything in one table: the load scenarios (ours, then the baseline), the revocation row
 * (latencies in the p50/p99 columns, the token lifetime as its baseline) and one memory row
 * per service (RSS in the notes).
 * @param {{scenarios: any[], revocation: any, memory: {service: string, idleMb: number, afterMb: number}[]}} run
 */
export function summaryTable({ scenarios, revocation, memory }) {
  const header = [
    'scenario',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'CPU µs/req',
    'main µs/req',
    'PG CPU µs/req',
    '× base req/s',
    '× base CPU/req',
    'notes',
  ];
  /** @type {string[][]} */
  const rows = [];
  for (const s of scenarios) {
    const { ours, baseline } = s;
    const [oursLabel, baselineLabel] = s.labels ?? ['ours', 'baseline'];
    // signin: the p99 ratio is its figure; the sign-in load's answers say how hard the form was hit.
    const notes = s.signIns
      ? `p99 ${fmt(s.ratio.p99, 2)}× quiet; form: ${fmt(s.signIns.checkedPerSec)} checked (401)/s, ${fmt(s.signIns.refusedPerSec)} refused (429)/s`
      : s.flood
        ? `p99 ${fmt(s.ratio.p99, 2)}× quiet; flood: ${fmt(s.flood.startedPerSec)} started (303)/s, ${fmt(s.flood.refusedPerSec)} refused (429)/s`
        : s.pushFair
          ? `reset -> SET p99 ${fmt(s.ratio.p99, 2)}× quiet; ${s.pushFair.resetsPerWindow} resets a window; ${s.pushFair.attackerStreams} receivers answer after ${s.pushFair.slowMs} ms`
          : hostNote(ours);
    rows.push([
      s.scenario,
      oursLabel,
      fmt(ours.rps),
      fmt(ours.p50Ms, 2),
      fmt(ours.p99Ms, 2),
      String(ours.errors),
      fmt(ours.cpuUsPerReq),
      fmt(ours.mainCpuUsPerReq),
      fmt(ours.dbCpuUsPerReq),
      fmt(s.ratio.rps, 2),
      fmt(s.ratio.cpuPerRequest, 2),
      notes,
    ]);
    rows.push([
      '',
      baselineLabel,
      fmt(baseline.rps),
      fmt(baseline.p50Ms, 2),
      fmt(baseline.p99Ms, 2),
      String(baseline.errors),
      fmt(baseline.cpuUsPerReq),
      fmt(baseline.mainCpuUsPerReq),
      fmt(baseline.dbCpuUsPerReq),
      '1.00',
      '1.00',
      s.signIns || s.flood || s.pushFair ? '' : hostNote(baseline),
    ]);
  }
  if (revocation?.skipped) {
    rows.push([
      'revocation',
      '—',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      `not run: ${revocation.skipped}`,
    ]);
  } else if (revocation) {
    const e = revocation.everyReplica;
    const lifetime = revocation.referenceMs?.peersTokenLifetime ?? 300_000;
    const stale = Object.entries(revocation.byStore ?? {})
      .filter(([k]) => k.endsWith('/all'))
      .reduce((n, [, v]) => n + /** @type {any} */ (v).stale, 0);
    rows.push([
      'revocation',
      'ours',
      '',
      fmt(e.p50Ms, 2),
      fmt(e.p99Ms, 2),
      '',
      '',
      '',
      '',
      '',
      '',
      `every replica of 2, ${e.n} changes, max ${fmt(e.maxMs, 1)} ms, ${stale} stale 200s`,
    ]);
    rows.push([
      '',
      'baseline',
      '',
      '',
      String(lifetime),
      '',
      '',
      '',
      '',
      '',
      '',
      `token lifetime (peers); × base (p99) ${fmt(lifetime / e.p99Ms, 0)}`,
    ]);
  }
  for (const m of memory) {
    rows.push([
      'memory',
      m.service,
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      `RSS idle ${fmt(m.idleMb, 1)} MB, after ${fmt(m.afterMb, 1)} MB (${fmt(((m.afterMb - m.idleMb) / m.idleMb) * 100, 0)} %)`,
    ]);
  }
  return table(header, rows, [1, header.length - 1]);
}
