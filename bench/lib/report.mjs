// One plain-text table for the terminal (and docs/performance.md), and the machine facts
// every result file carries: absolute figures only make sense with them.
import { cpus, loadavg, totalmem } from 'node:os';

/** @param {number | null | undefined} value */
const fmt = (value, digits = 0) => (value === null || value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits));

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
 * @param {string[]} header
 * @param {string[][]} rows
 */
export function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * Ratios, both "higher is better": throughput ours/baseline; CPU efficiency baseline/ours.
 * @param {{ours: any, baseline: any}} pair
 */
export function ratios({ ours, baseline }) {
  return {
    rps: baseline && baseline.rps > 0 ? ours.rps / baseline.rps : null,
    cpuPerRequest: baseline && ours.cpuUsPerReq ? baseline.cpuUsPerReq / ours.cpuUsPerReq : null,
  };
}

/** @param {any[]} scenarios rows {scenario, ours, baseline, ratio} */
export function loadTable(scenarios) {
  const header = ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'CPU µs/req', 'PG CPU µs/req', '× base req/s', '× base CPU/req'];
  const rows = [];
  for (const s of scenarios) {
    const { ours, baseline } = s;
    rows.push([s.scenario, 'ours', fmt(ours.rps), fmt(ours.p50Ms, 2), fmt(ours.p99Ms, 2), String(ours.errors), fmt(ours.cpuUsPerReq), fmt(ours.dbCpuUsPerReq), fmt(s.ratio.rps, 2), fmt(s.ratio.cpuPerRequest, 2)]);
    if (baseline) {
      rows.push(['', 'baseline', fmt(baseline.rps), fmt(baseline.p50Ms, 2), fmt(baseline.p99Ms, 2), String(baseline.errors), fmt(baseline.cpuUsPerReq), fmt(baseline.dbCpuUsPerReq), '1.00', '1.00']);
    }
  }
  return table(header, rows);
}

/** @param {{service: string, idleMb: number, afterMb: number}[]} memory */
export function memoryTable(memory) {
  return table(
    ['memory', 'idle RSS MB', 'after RSS MB', 'growth'],
    memory.map((m) => [m.service, fmt(m.idleMb, 1), fmt(m.afterMb, 1), `${fmt(((m.afterMb - m.idleMb) / m.idleMb) * 100, 1)} %`]),
  );
}

export { fmt };

/**
 * The revocation row: from the reset/delete API response to the first refusal at every
 * Plant Store replica, against what peers give (the token stays valid until it expires).
 * @param {any} r the summary `pnpm bench:revocation` writes, or `{skipped}`
 */
export function revocationTable(r) {
  if (r.skipped) return `revocation: not run (${r.skipped})`;
  const e = r.everyReplica;
  const lifetime = r.referenceMs?.peersTokenLifetime ?? 300_000;
  return table(
    ['revocation', 'changes', 'p50 ms', 'p99 ms', 'max ms', 'baseline (token lifetime) ms', '× base (p99)'],
    [['every replica (2 Plant Stores)', String(e.n), fmt(e.p50Ms, 2), fmt(e.p99Ms, 2), fmt(e.maxMs, 2), String(lifetime), fmt(lifetime / e.p99Ms, 0)]],
  );
}

/** Issue 7's targets (2-core machine, loopback). Ratios: higher is better. */
export const TARGETS = { token: 0.9, list: 1.0, create: 0.9, revocationP99Ms: 10, revocationCeilingMs: 50, idleRssMb: 150, growthPct: 10 };

/**
 * One line per target: the figure, the target, met or by how much missed.
 * @param {{scenarios: any[], revocation: any, memory: {service: string, idleMb: number}[]}} run
 */
export function targetLines({ scenarios, revocation, memory }) {
  const lines = [];
  for (const s of scenarios) {
    const target = /** @type {Record<string, number>} */ (TARGETS)[s.scenario];
    if (target === undefined || s.ratio.rps === null) continue;
    const verdict = s.ratio.rps >= target ? 'met' : `missed by ${fmt((1 - s.ratio.rps / target) * 100)} %`;
    lines.push(`${s.scenario}: ${fmt(s.ratio.rps, 2)}× baseline req/s (CPU/req ${fmt(s.ratio.cpuPerRequest, 2)}×), target ≥ ${target}× -> ${verdict}`);
  }
  if (revocation && !revocation.skipped) {
    const p99 = revocation.everyReplica.p99Ms;
    const verdict = p99 <= TARGETS.revocationP99Ms ? 'met' : p99 <= TARGETS.revocationCeilingMs ? `above the 10 ms target, under the 50 ms ceiling` : 'missed (above the 50 ms ceiling)';
    lines.push(`revocation: p99 ${fmt(p99, 2)} ms at every replica, target ≤ ${TARGETS.revocationP99Ms} ms (ceiling ${TARGETS.revocationCeilingMs}) -> ${verdict}`);
  }
  for (const m of memory) {
    lines.push(`memory ${m.service}: idle RSS ${fmt(m.idleMb, 1)} MB, target ≤ ${TARGETS.idleRssMb} MB -> ${m.idleMb <= TARGETS.idleRssMb ? 'met' : 'missed'}`);
  }
  return lines.join('\n');
}
