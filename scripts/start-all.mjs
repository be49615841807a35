#!/usr/bin/env node
// `npm start` (or `pnpm start`) on a fresh clone: install the dependencies when they are missing
// or stale, build, migrate, seed the `demo` tenant the first time, then run every service as its
// own process on its default port against Postgres and Redis on localhost, and print where to
// sign in. Ctrl-C (or SIGTERM) stops them all.
//
// Development only: secrets come from scripts/dev-env.mjs (fixed, public values) unless the
// environment sets them, and production (NODE_ENV=production) refuses those values at start.
// This file imports nothing outside Node itself, so it runs before anything is installed.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { devEnv } from './dev-env.mjs';

const root = new URL('..', import.meta.url).pathname;
/** @type {Record<string, string | undefined>} */
const env = devEnv();
const SERVICES = ['token-service', 'plant-store', 'account-admin'];
const DEMO = { tenant: 'demo', email: 'admin@demo.example', password: 'dev-only-demo-password' };
const PORTAL_URL = env.PORTAL_URL ?? 'http://localhost:8083';

/** Runs a command to its end; resolves with its exit code. @param {string} command @param {string[]} args @param {{ input?: string, quiet?: boolean }} [options] */
function runToEnd(command, args, { input, quiet = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env,
      stdio: [
        input === undefined ? 'ignore' : 'pipe',
        quiet ? 'pipe' : 'inherit',
        quiet ? 'pipe' : 'inherit',
      ],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.stdin?.end(input);
    child.once('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** @param {string} what @param {{ code: number, output: string }} result */
function mustSucceed(what, result) {
  if (result.code === 0) return;
  console.error(
    `${what} failed (exit ${result.code})${result.output ? `:\n${result.output}` : ''}`,
  );
  process.exit(1);
}

const mtime = (/** @type {string} */ file) => (existsSync(file) ? statSync(file).mtimeMs : 0);
// pnpm writes node_modules/.modules.yaml on every install: older than the lockfile means stale.
if (mtime(join(root, 'node_modules/.modules.yaml')) < mtime(join(root, 'pnpm-lock.yaml'))) {
  console.log('== installing dependencies (corepack pnpm install)');
  // corepack checks pnpm's signature against keys it ships; a registry mirror can fail that check.
  env.COREPACK_INTEGRITY_KEYS ??= '0';
  mustSucceed('install', await runToEnd('corepack', ['pnpm', 'install', '--frozen-lockfile']));
}
console.log('== building');
mustSucceed(
  'build',
  await runToEnd(process.execPath, [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-b',
    'tsconfig.json',
  ]),
);

for (const service of SERVICES) {
  mustSucceed(
    `migrations of ${service}`,
    await runToEnd(process.execPath, [join(root, 'services', service, 'dist/migrate.js')], {
      quiet: true,
    }),
  );
}

// The demo tenant, once: the password goes in on standard input, never on a command line.
const seeded = await runToEnd(
  process.execPath,
  [
    join(root, 'services/token-service/dist/cli.js'),
    'tenant',
    'create',
    DEMO.tenant,
    '--admin-email',
    DEMO.email,
    '--admin-password-file',
    '-',
    '--admin-factor',
    'optional',
  ],
  {
    input: DEMO.password,
    quiet: true,
  },
);
if (seeded.code !== 0 && !seeded.output.includes('already exists'))
  mustSucceed('seeding the demo tenant', seeded);
// The demo signs in with a password alone, also when it was created before the policy existed
// (that migration turned the policy on for every realm): development only, docs/running.md says so.
mustSucceed(
  "turning the demo tenant's admin-factor policy off",
  await runToEnd(
    process.execPath,
    [
      join(root, 'services/token-service/dist/cli.js'),
      'tenant',
      'policy',
      DEMO.tenant,
      '--admin-factor',
      'optional',
    ],
    { quiet: true },
  ),
);

let stopping = false;
let listening = 0;
const children = SERVICES.map((service) => {
  // Each service its own internal API credential (scripts/dev-env.mjs).
  const child = spawn(process.execPath, [join(root, 'services', service, 'dist/start.js')], {
    cwd: root,
    env: devEnv(env, service),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let pending = '';
  child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
    process.stdout.write(chunk);
    if (listening === SERVICES.length) return;
    pending += chunk.toString();
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.includes('"msg":"listening"') && ++listening === SERVICES.length) announce();
    }
  });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${service} exited (${signal ?? code}); stopping the others`);
      stop(1);
    }
  });
  return child;
});

function announce() {
  console.log(`
  ------------------------------------------------------------------
  Plant Store is up (development).
    Portal (sign in):  ${PORTAL_URL}/login?tenant=${DEMO.tenant}
      email:           ${DEMO.email}
      password:        ${DEMO.password}   (development only)
    Plant Store API:   http://localhost:8081
    Token service:     http://localhost:8082/realms/${DEMO.tenant}
    Probes, metrics:   http://127.0.0.1:9181/metrics (Plant Store), :9182 (token service), :9183 (portal)
  Ctrl-C stops everything.
  ------------------------------------------------------------------
`);
}

function stop(exitCode = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
  ).then(() => process.exit(exitCode));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
