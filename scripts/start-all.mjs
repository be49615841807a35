#!/usr/bin/env node
// `pnpm start`: migrate, then run every built service as its own process on its default
// port against Postgres and Redis on localhost. Ctrl-C (or SIGTERM) stops them all.
//
// Secrets have no defaults in the services' configuration; for local development
// scripts/dev-env.mjs supplies fixed, clearly fake values unless the environment sets them.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { devEnv } from './dev-env.mjs';

const root = new URL('..', import.meta.url).pathname;

const env = devEnv();
const SERVICES = ['token-service', 'plant-store', 'account-admin'];

/** @param {string[]} args @param {import('node:child_process').SpawnOptions} [opts] */
function run(args, opts = {}) {
  return spawn(process.execPath, args, { env, stdio: 'inherit', ...opts });
}

const present = SERVICES.filter((s) => existsSync(join(root, 'services', s, 'dist/start.js')));
for (const service of present) {
  const migrate = join(root, 'services', service, 'dist/migrate.js');
  if (!existsSync(migrate)) continue;
  const code = await new Promise((resolve) => run([migrate]).once('exit', resolve));
  if (code !== 0) {
    console.error(`migrations of ${service} failed (exit ${code})`);
    process.exit(1);
  }
}

const children = present.map((service) => {
  const child = run([join(root, 'services', service, 'dist/start.js')]);
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${service} exited (${signal ?? code}); stopping the others`);
      stop(1);
    }
  });
  return child;
});

let stopping = false;
function stop(exitCode = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(exitCode));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
