#!/usr/bin/env node
// `node bench/profile-summary.mjs <file.cpuprofile> [--top=25] [--match=<regex>] [--callers=<function>]`: where a `node --cpu-prof`
// profile spent its time. Self time by function and by package (the dependency or our own
// package a frame belongs to), and inclusive time by function (each function counted once
// per sample, however deep it recurses). Profiles come from `pnpm bench -- --profile --only=<scenario>`.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    match: { type: 'string' },
    callers: { type: 'string' },
  },
});
process.stdout.on('error', () => process.exit(0)); // piped into head
const match = values.match ? new RegExp(values.match) : undefined;
const top = Number(values.top);

/** Which package a script URL belongs to: a dependency, one of ours, or node itself. @param {string} url */
function packageOf(url) {
  if (url === '') return '(vm)';
  if (url.startsWith('node:')) return 'node:internal';
  const dep =
    /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1];
  const ours = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  return url;
}

/** Coarse cost centres, to compare a service with its baseline. @type {Array<[string, RegExp]>} */
const CATEGORIES = [
  [
    'logging',
    /^(pino|pino-http|pino-std-serializers|@pinojs\/redact|sonic-boom|fast-redact|on-exit-leak-free|thread-stream)$/,
  ],
  ['query builder + pool (knex, tarn)', /^(knex|tarn)$/],
  ['pg driver', /^(pg|pg-protocol|pg-pool|pg-types|pg-connection-string)$/],
  [
    'express + router',
    /^(express|router|parseurl|path-to-regexp|content-type|mime-types|mime-db|on-finished|finalhandler|send|qs|type-is|media-typer|encodeurl|depd|statuses|vary|etag|fresh|accepts|negotiator|http-errors|body-parser|raw-body|iconv-lite|bytes|unpipe|debug|ms)$/,
  ],
  ['metrics (prom-client)', /^(prom-client|tdigest|bintrees)$/],
  [
    'redis (ioredis, rate-limiter-flexible)',
    /^(ioredis|rate-limiter-flexible|@ioredis\/commands|redis-parser|denque|cluster-key-slot|standard-as-callback)$/,
  ],
  [
    'oidc-provider + koa + jose',
    /^(oidc-provider|koa|koa-compose|@koa\/router|koa-router|delegates|jose|cookies|keygrip|only|co-body|quick-lru|nanoid|oidc-token-hash|jsesc|eta|lru-cache)$/,
  ],
  [
    'jsonwebtoken',
    /^(jsonwebtoken|jws|jwa|buffer-equal-constant-time|ecdsa-sig-formatter|safe-buffer|semver|lodash\..*)$/,
  ],
  ['validation (zod, lossless-json)', /^(zod|lossless-json)$/],
  ['our code (services/, packages/, bench/)', /^(services|packages)\/|bench\/baselines/],
  ['garbage collector', /^\(garbage collector\)$/],
  ['node core, HTTP, sockets (incl. native)', /^(node:internal|\(vm\)|\(program\))$/],
];
/** @param {string} pkg */
function categoryOf(pkg) {
  for (const [name, re] of CATEGORIES) if (re.test(pkg)) return name;
  return pkg === '(idle)' ? '(idle)' : 'other dependencies';
}

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  /** @type {Map<number, any>} */
  const nodes = new Map(profile.nodes.map((/** @type {any} */ n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // Sample counts per node, and the sampling interval, from samples/timeDeltas.
  /** @type {Map<number, number>} */
  const hits = new Map();
  let totalUs = 0;
  profile.samples.forEach((/** @type {number} */ id, /** @type {number} */ i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    totalUs += dt;
    hits.set(id, (hits.get(id) ?? 0) + dt);
  });

  const label = (/** @type {any} */ n) => {
    const { functionName, url, lineNumber } = n.callFrame;
    const short = url
      .replace(/^file:\/\//, '')
      .replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
      .replace(/.*\/work\/main\//, '');
    return `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
  };

  const self = new Map();
  const byPackage = new Map();
  const inclusive = new Map();
  for (const [id, us] of hits) {
    const node = nodes.get(id);
    const name = label(node);
    self.set(name, (self.get(name) ?? 0) + us);
    const pkg = ['(idle)', '(program)', '(garbage collector)'].includes(node.callFrame.functionName)
      ? node.callFrame.functionName
      : packageOf(node.callFrame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const seen = new Set();
    for (let /** @type {number | undefined} */ cur = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(nodes.get(cur));
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }
  const idle = byPackage.get('(idle)') ?? 0;
  const busy = totalUs - idle;
  const pct = (/** @type {number} */ us) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  const print = (/** @type {string} */ title, /** @type {Map<string, number>} */ map, n = top) => {
    process.stdout.write(`\n${title}\n`);
    [...map.entries()]
      .filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .forEach(([k, us]) => {
        process.stdout.write(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
      });
  };
  process.stdout.write(
    `\n== ${file}: ${(busy / 1e6).toFixed(2)} s busy of ${(totalUs / 1e6).toFixed(2)} s (percentages of busy time)\n`,
  );
  print('self time by package', byPackage, 20);
  /** @type {Map<string, number>} */
  const byCategory = new Map();
  for (const [pkg, us] of byPackage)
    byCategory.set(categoryOf(pkg), (byCategory.get(categoryOf(pkg)) ?? 0) + us);
  // Log lines reach stdout (a file or pipe) through pino's synchronous fs.writeSync, the native
  // `writeString`: count it with logging (sockets write through writev/writeUtf8String instead).
  const logWrites = [...self.entries()]
    .filter(([k]) => /^writeString :0$/.test(k))
    .reduce((n, [, us]) => n + us, 0);
  byCategory.set('logging', (byCategory.get('logging') ?? 0) + logWrites);
  byCategory.set(
    'node core, HTTP, sockets (incl. native)',
    (byCategory.get('node core, HTTP, sockets (incl. native)') ?? 0) - logWrites,
  );
  print('self time by category', byCategory, 20);
  print('self time by function', self);
  print('inclusive time by function', inclusive);
  if (values.callers) {
    // Who spends a (typically native) function's self time: the nearest frame outside node itself.
    /** @type {Map<string, number>} */
    const callers = new Map();
    for (const [id, us] of hits) {
      if (nodes.get(id).callFrame.functionName !== values.callers) continue;
      let cur = parent.get(id);
      while (cur !== undefined && /^(node:|$)/.test(nodes.get(cur).callFrame.url))
        cur = parent.get(cur);
      const key = cur === undefined ? '(node only)' : label(nodes.get(cur));
      callers.set(key, (callers.get(key) ?? 0) + us);
    }
    print(`self time of ${values.callers} by nearest caller outside node`, callers, 15);
  }
  if (match)
    print(
      `inclusive time of functions matching ${match}`,
      new Map([...inclusive].filter(([k]) => match.test(k))),
      60,
    );
}
