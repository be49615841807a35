#!/usr/bin/env node
// The Node the project runs on, whatever the machine's own is. `.nvmrc` pins it; this obtains
// that exact release from the npm registry (the `node-<platform>-<arch>` package, the official
// binary, and `corepack`, which the registry's Node package does not carry) into
// `.tools/node/<version>/` (gitignored), once, and checks it by running `node --version`.
//
//   node scripts/pinned-node.mjs                  prints the bin directory (node, corepack, pnpm)
//   node scripts/pinned-node.mjs --env            prints `export PATH=<bin>:$PATH` (eval it)
//   node scripts/pinned-node.mjs --run <script>   runs <script> (and its arguments) on it
//
// `npm start`, the benches and `npm run test:all` go through it, so the README's commands run
// everything (pnpm, the build, jest, the services the tests and start-all spawn) on the pinned
// Node even where the system's is older. It imports nothing outside Node itself and uses only
// what Node 18 has: it runs on the machine's node before anything is installed.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * corepack, which the official tarball carries and the registry's Node package does not; it
 * resolves `packageManager`'s pnpm exactly as an installed Node's corepack does.
 */
export const COREPACK_VERSION = '0.34.6';

/** The pinned version, without the `v` (`24.22.3`). */
export function pinnedVersion() {
  return readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
}

/** @param {string} binary @returns {string | undefined} what `binary --version` prints, if it runs */
function versionOf(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** @param {string} message */
const say = (message) => process.stderr.write(`== ${message}\n`);

/**
 * Makes sure `.tools/node/<version>/bin` holds the pinned node, and corepack and pnpm shims
 * that run on it; installs them from the registry when missing or not that version.
 * @returns {string} the bin directory
 */
export function ensurePinnedNode() {
  const version = pinnedVersion();
  const home = join(ROOT, '.tools/node', version);
  const bin = join(home, 'bin');
  const node = join(bin, 'node');
  const corepack = join(home, 'node_modules/corepack/dist/corepack.js');
  if (versionOf(node) === `v${version}` && existsSync(corepack)) return bin;

  const pkg = `node-${process.platform}-${process.arch}`;
  say(
    `Node ${version} (.nvmrc) from the npm registry into .tools/node/${version} (${process.version} here)`,
  );
  const staging = `${home}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  // The machine's npm: whatever its registry or mirror is configured to be.
  execFileSync(
    'npm',
    [
      'install',
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--loglevel=error',
      '--prefix',
      staging,
      `${pkg}@${version}`,
      `corepack@${COREPACK_VERSION}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const installed = join(staging, 'node_modules', pkg, 'bin/node');
  const got = versionOf(installed);
  if (got !== `v${version}`) throw new Error(`${pkg}@${version} gave ${got ?? 'no runnable node'}`);
  const stagingBin = join(staging, 'bin');
  mkdirSync(stagingBin);
  symlinkSync(join('..', 'node_modules', pkg, 'bin/node'), join(stagingBin, 'node'));
  // Shims with absolute paths: they run on the pinned node whatever PATH says.
  /** @param {string} name @param {string} args */
  const shim = (name, args) => {
    const file = join(stagingBin, name);
    writeFileSync(file, `#!/bin/sh\nexec "${node}" "${corepack}" ${args}"$@"\n`);
    chmodSync(file, 0o755);
  };
  shim('corepack', '');
  shim('pnpm', 'pnpm ');
  rmSync(home, { recursive: true, force: true });
  renameSync(staging, home);
  if (versionOf(node) !== `v${version}`) throw new Error(`${node} is not v${version}`);
  return bin;
}

/** The environment with the pinned bin directory first on PATH. @param {NodeJS.ProcessEnv} env @param {string} bin */
export function withPinnedPath(env, bin) {
  return {
    ...env,
    PATH: `${bin}:${env.PATH ?? ''}`,
    COREPACK_INTEGRITY_KEYS: env.COREPACK_INTEGRITY_KEYS ?? '0',
  };
}

/**
 * Runs `script args` on the pinned node, PATH led by its bin directory (so `corepack`, `pnpm`
 * and `node` by name are the pinned ones too); signals go on to it, its exit code is ours.
 * @param {string} script @param {string[]} args
 */
export function runOnPinnedNode(script, args) {
  const bin = ensurePinnedNode();
  const child = spawn(join(bin, 'node'), [resolve(script), ...args], {
    stdio: 'inherit',
    env: withPinnedPath(process.env, bin),
  });
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP']))
    process.on(signal, () => child.kill(signal));
  child.once('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [mode, ...rest] = process.argv.slice(2);
  try {
    if (mode === '--run' && rest[0] !== undefined) runOnPinnedNode(rest[0], rest.slice(1));
    else if (mode === '--env')
      process.stdout.write(
        // corepack's signature check fails against registries that do not sign: the same
        // default as --run, so a shell that evals this installs as `npm start` does.
        `export PATH="${ensurePinnedNode()}:$PATH"\nexport COREPACK_INTEGRITY_KEYS="\${COREPACK_INTEGRITY_KEYS:-0}"\n`,
      );
    else if (mode === undefined) process.stdout.write(`${ensurePinnedNode()}\n`);
    else {
      process.stderr.write(
        'usage: node scripts/pinned-node.mjs [--env | --run <script> [args…]]\n',
      );
      process.exit(2);
    }
  } catch (err) {
    process.stderr.write(`pinned node: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
