/**
 * `@plant/resource-auth` as another team gets it: the tarball `pnpm pack` makes, installed with
 * npm into a directory outside the workspace (nothing of the workspace's node_modules is then
 * reachable). npm prefers its local cache (`--prefer-offline`): the registry is asked only for
 * what the cache lacks, so a warm machine installs offline.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './env.js';

const run = promisify(execFile);

/** The flags of every npm install here: cache first, no audit or funding round trips, no scripts of ours. */
export const NPM_INSTALL_FLAGS = [
  '--prefer-offline',
  '--no-audit',
  '--no-fund',
  '--loglevel=error',
];

async function exec(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, {
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    return stdout;
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd}:\n${stderr ?? ''}${stdout ?? ''}`,
    );
  }
}

/** A fresh directory under the system's temp directory (outside the workspace); `remove()` deletes it. */
export function outsideWorkspace(prefix: string): { dir: string; remove(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `${prefix}-`)));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `pnpm pack` in packages/resource-auth into `destination`; resolves with the tarball's path. */
export async function packResourceAuth(destination: string): Promise<string> {
  await exec(
    'corepack',
    ['pnpm', 'pack', '--pack-destination', destination],
    join(REPO_ROOT, 'packages/resource-auth'),
  );
  const tarballs = readdirSync(destination).filter((f) => /^plant-resource-auth-.*\.tgz$/.test(f));
  if (tarballs.length !== 1) throw new Error(`expected one tarball, found ${tarballs.join(', ')}`);
  return join(destination, tarballs[0]!);
}

/** `npm <args>` in `cwd`: its stdout. */
export function npm(args: string[], cwd: string): Promise<string> {
  return exec('npm', args, cwd);
}

/**
 * examples/inventory-api copied to `dir` (its sources, package.json and tsconfig: what another
 * team's repository holds), the tarball installed as its README says, and built; resolves with
 * the path of its server script.
 */
export async function buildExampleFromTarball(dir: string, tarball: string): Promise<string> {
  const example = join(REPO_ROOT, 'examples/inventory-api');
  mkdirSync(dir, { recursive: true });
  for (const entry of ['package.json', 'tsconfig.json', 'src'])
    cpSync(join(example, entry), join(dir, entry), { recursive: true });
  await npm(['install', ...NPM_INSTALL_FLAGS, tarball], dir);
  await npm(['run', 'build'], dir);
  return join(dir, 'dist/server.js');
}
