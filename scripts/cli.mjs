#!/usr/bin/env node
// `pnpm cli ...`: the token service's operator CLI against the local development setup
// (the same database and key-encryption key as `pnpm start`). In production run the image's
// `node dist/cli.js` with the real environment instead.
import { spawn } from 'node:child_process';
import { devEnv } from './dev-env.mjs';

const cli = new URL('../services/token-service/dist/cli.js', import.meta.url).pathname;
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], {
  env: devEnv(),
  stdio: 'inherit',
});
child.once('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
