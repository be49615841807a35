#!/usr/bin/env node
// The one table of figures in docs/performance.md, rendered from the newest committed full run
// (`bench/results/<date>.json`: not --quick, not --only, not profiled, not a runtime comparison),
// so the doc can only say what a result file says. `pnpm bench` (a full run) rewrites it;
// packages/deploy-checks/test/docs.test.ts fails when the doc and the committed result disagree.
//
//   node bench/lib/performance-table.mjs           rewrite the table in docs/performance.md
//   node bench/lib/performance-table.mjs --print   print the table (what the doc must hold)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, TARGETS } from './report.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const RESULTS_DIR = join(ROOT, 'bench/results');
export const PERFORMANCE_DOC = join(ROOT, 'docs/performance.md');
export const START =
  '<!-- performance-table:start (bench/lib/performance-table.mjs writes this) -->';
export const END = '<!-- performance-table:end -->';

/**
 * A Markdown table as Biome formats Markdown (`biome check` runs over the docs): every column
 * left-aligned, padded to its widest cell, the rule `| :--- |`.
 * @param {string[]} header
 * @param {string[][]} rows
 */
function markdownTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => `:${'-'.repeat(w - 1)}`).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A full run's file name: the date alone; every other kind or variant has a prefix or suffix. */
const FULL_RUN = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.json$/;

/** @param {string} [dir] @returns {string | undefined} the newest full run's file name */
export function newestFullRun(dir = RESULTS_DIR) {
  return readdirSync(dir)
    .filter((f) => FULL_RUN.test(f))
    .sort()
    .at(-1);
}

/** What each scenario's baseline is, in a few words (the result's `baselineWhat` at length). */
const AGAINST = /** @type {Record<string, string>} */ ({
  token: 'stock oidc-provider',
  keys: 'our secret grant',
  quota: 'our grant, quota off',
  list: 'naive express + pg',
  create: 'naive express + pg (no auth)',
  signin: 'the same grants, quiet',
  'signin-code': 'password sign-ins',
  'signin-passkey': 'password sign-ins',
  flood: 'the same grants, quiet',
  dpop: 'the bearer list',
  introspect: 'the bearer list',
  exchange: 'our client-credentials grant',
  chain: 'the same list, plain token',
  'token-es256': 'stock oidc-provider signing ES256',
  'token-alg': 'our RS256 grant',
  'list-es256': 'the list with an RS256 token',
  signals: 'grants in a realm without streams',
  'push-fair': 'the same resets, attacker idle',
});

/** A ratio target as the doc writes it: 1.0×, 0.95×. @param {number} n */
const x = (n) => `${Number.isInteger(n) ? n.toFixed(1) : n}×`;

/** @param {number} value @param {number} target */
const atLeast = (value, target) =>
  value >= target ? 'met' : `**missed** by ${fmt((1 - value / target) * 100)} %`;
/** @param {number} value @param {number} target */
const atMost = (value, target) =>
  value <= target ? 'met' : `**missed** by ${fmt((value / target - 1) * 100)} %`;

/** `0.95× req/s (CPU per request 1.00×)`; without the CPU ratio where a scenario has none. @param {any} ratio */
const ratioFigure = (ratio) =>
  typeof ratio.cpuPerRequest === 'number'
    ? `${fmt(ratio.rps, 2)}× req/s (CPU per request ${fmt(ratio.cpuPerRequest, 2)}×)`
    : `${fmt(ratio.rps, 2)}× req/s`;

/**
 * Rows of one scenario: [scenario, against, figure, target, verdict].
 * @param {any} s
 * @returns {string[][]}
 */
function scenarioRows(s) {
  const against = AGAINST[s.scenario] ?? s.baselineWhat ?? '';
  const targets = /** @type {Record<string, number>} */ (TARGETS);
  if (s.scenario === 'signin' && s.ratio.p99 != null)
    return [
      [
        s.scenario,
        against,
        `grant p99 ${fmt(s.ratio.p99, 2)}× (${fmt(s.ours.p99Ms, 1)} / ${fmt(s.baseline.p99Ms, 1)} ms) under ${s.signIns?.clients ?? '?'} sign-in clients`,
        `≤ ${x(TARGETS.signinP99)}`,
        atMost(s.ratio.p99, TARGETS.signinP99),
      ],
      [
        '',
        '',
        `grant req/s ${fmt(s.ratio.rps, 2)}×`,
        `≥ ${x(TARGETS.signinRps)}`,
        atLeast(s.ratio.rps ?? 0, TARGETS.signinRps),
      ],
    ];
  if ((s.scenario === 'flood' || s.scenario === 'push-fair') && s.ratio.p99 != null) {
    const target = s.scenario === 'flood' ? TARGETS.floodP99 : TARGETS.pushFairP99;
    return [
      [
        s.scenario,
        against,
        `p99 ${fmt(s.ratio.p99, 2)}× (${fmt(s.ours.p99Ms, 1)} / ${fmt(s.baseline.p99Ms, 1)} ms)`,
        `≤ ${x(target)}`,
        atMost(s.ratio.p99, target),
      ],
    ];
  }
  /** @type {string[][]} */
  const rows = [];
  if (s.scenario === 'signals' && s.delivery)
    rows.push([
      s.scenario,
      'reset answer → SET at a push receiver',
      `p99 ${fmt(s.delivery.p99Ms, 2)} ms (p50 ${fmt(s.delivery.p50Ms, 2)}) over ${s.delivery.resets} resets`,
      `≤ ${TARGETS.signalsDeliveryP99Ms} ms`,
      atMost(s.delivery.p99Ms, TARGETS.signalsDeliveryP99Ms),
    ]);
  const target = targets[s.scenario];
  if (s.ratio?.rps != null)
    rows.push([
      rows.length === 0 ? s.scenario : '',
      against,
      ratioFigure(s.ratio),
      target === undefined ? '—' : `≥ ${x(target)}`,
      target === undefined ? '—' : atLeast(s.ratio.rps, target),
    ]);
  return rows;
}

/**
 * The table and the line above it that names the run.
 * @param {any} run a full run's result
 * @param {string} file its name under bench/results/
 */
export function renderTable(run, file) {
  /** @type {string[][]} */
  const rows = run.scenarios.flatMap(scenarioRows);
  const r = run.revocation;
  if (r && !r.skipped) {
    const p99 = r.everyReplica.p99Ms;
    rows.push([
      'revocation',
      `the token lifetime, ${fmt((r.referenceMs?.peersTokenLifetime ?? 300_000) / 1000)} s`,
      `reset → refusal at every replica: p99 ${fmt(p99, 1)} ms (max ${fmt(r.everyReplica.maxMs, 1)}) over ${r.everyReplica.n} changes`,
      `≤ ${TARGETS.revocationP99Ms} ms (ceiling ${TARGETS.revocationCeilingMs})`,
      atMost(p99, TARGETS.revocationP99Ms),
    ]);
  }
  for (const m of run.memory ?? [])
    rows.push([
      'memory',
      m.service,
      `idle RSS ${fmt(m.idleMb)} MB (${fmt(m.afterMb)} MB after the run)`,
      `≤ ${TARGETS.idleRssMb} MB`,
      atMost(m.idleMb, TARGETS.idleRssMb),
    ]);
  const m = run.machine;
  const start = m.loadAverage1mAtStart === undefined ? '' : `${m.loadAverage1mAtStart} → `;
  const about = `Last full run: \`bench/results/${file}\` (${run.date.slice(0, 16).replace('T', ' ')} UTC, ${run.elapsedSec} s; ${m.cores} cores ${m.cpuModel}, ${m.memoryGb} GB, Node ${m.node.replace(/^v/, '')}, load average ${start}${m.loadAverage1m}). Ratios are the medians of the rounds' ratios, higher is better unless the target says ≤.`;
  return `${about}\n\n${markdownTable(['scenario', 'against', 'figure', 'target', 'verdict'], rows)}`;
}

/** The table as the committed result renders it. */
export function renderCommitted(dir = RESULTS_DIR) {
  const file = newestFullRun(dir);
  if (file === undefined) throw new Error(`no full run in ${dir}`);
  return renderTable(JSON.parse(readFileSync(join(dir, file), 'utf8')), file);
}

/** @param {string} doc @returns {string | undefined} what stands between the markers */
export function tableInDoc(doc) {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  return from < 0 || to < from ? undefined : doc.slice(from + START.length, to).trim();
}

/** Rewrites the table between the markers of docs/performance.md. */
export function writeTable(rendered = renderCommitted(), docPath = PERFORMANCE_DOC) {
  const doc = readFileSync(docPath, 'utf8');
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${docPath}: the table's markers are missing`);
  writeFileSync(docPath, `${doc.slice(0, from + START.length)}\n\n${rendered}\n\n${doc.slice(to)}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--print')) process.stdout.write(`${renderCommitted()}\n`);
  else {
    writeTable();
    process.stdout.write(`docs/performance.md: table from ${newestFullRun()}\n`);
  }
}
