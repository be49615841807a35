/**
 * The previous release, built beside this checkout for the rolling-upgrade topology: its tree
 * (`git archive` of the commit, which leaves the repository's worktree list alone) in a
 * directory of the temporary folder named after the commit, its dependencies from pnpm's
 * store (`--offline`, else `--prefer-offline`: only what the store lacks is downloaded), and
 * its three services and its topology package (the seed flow: its black-box smoke) built
 * (`tsc -b`, not its tests). A finished build is kept and reused by
 * the next run on this machine; a fresh CI runner builds it once per run.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@plant/test-kit';
import type { runSeedFlow } from './seed-flow.js';

const run = promisify(execFile);

export interface PreviousRelease {
  commit: string;
  /** The checkout whose `services/*\/dist` run (`PlatformOptions.serviceRoot`). */
  root: string;
  /** How long the build took now (0 when a finished one was reused). */
  buildMs: number;
  reused: boolean;
}

/** `git archive <commit> | tar -x -C <dir>`. */
function extract(commit: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const archive = spawn('git', ['-C', REPO_ROOT, 'archive', commit], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(tar.stdin);
    let failed = false;
    archive.once('exit', (code) => {
      if (code !== 0) failed = true;
    });
    tar.once('exit', (code) =>
      code === 0 && !failed ? resolve() : reject(new Error(`git archive ${commit} | tar failed`)),
    );
  });
}

/** pnpm as the suite was started with (`pnpm test:topology` sets npm_execpath), else the one on PATH. */
function pnpm(cwd: string, args: string[]) {
  const options = { cwd, env: process.env, maxBuffer: 64 * 1024 * 1024 };
  const execPath = process.env.npm_execpath;
  return execPath?.includes('pnpm')
    ? run(process.execPath, [execPath, ...args], options)
    : run('pnpm', args, options);
}

/** Dependencies from pnpm's store alone when it has them all, else only what it lacks from the registry. */
async function install(cwd: string): Promise<void> {
  await pnpm(cwd, ['install', '--frozen-lockfile', '--offline']).catch(() =>
    pnpm(cwd, ['install', '--frozen-lockfile', '--prefer-offline']),
  );
}

export async function buildPreviousRelease(commit: string): Promise<PreviousRelease> {
  // A shallow clone lacks the commit: the test says so instead of failing somewhere later.
  await run('git', ['-C', REPO_ROOT, 'cat-file', '-e', `${commit}^{commit}`]).catch(() => {
    throw new Error(
      `the previous release ${commit} is not in this clone (a shallow checkout?): git fetch --unshallow`,
    );
  });
  const root = join(tmpdir(), `plant-release-${commit.slice(0, 12)}`);
  const done = join(root, '.built');
  if (existsSync(done)) return { commit, root, buildMs: 0, reused: true };
  const started = Date.now();
  // Built under a name of this process's, then renamed into place whole: a run that finds the
  // directory finds a finished build, and two runs building at once never share a tree.
  const building = `${root}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    await extract(commit, building);
    await install(building);
    await pnpm(building, [
      'exec',
      'tsc',
      '-b',
      'services/token-service',
      'services/plant-store',
      'services/account-admin',
      // Its black-box smoke (the seed flow), run against the current schema.
      'packages/topology',
    ]);
    writeFileSync(join(building, '.built'), `${new Date().toISOString()}\n`);
    rmSync(root, { recursive: true, force: true });
    renameSync(building, root);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return { commit, root, buildMs: Date.now() - started, reused: false };
}

/** The previous release's own seed flow (its `packages/topology`), to run against this checkout's topology. */
export async function previousSeedFlow(release: PreviousRelease): Promise<typeof runSeedFlow> {
  const module = (await import(join(release.root, 'packages/topology/dist/seed-flow.js'))) as {
    runSeedFlow: typeof runSeedFlow;
  };
  return module.runSeedFlow;
}

/** The migrations a checkout's build applied to the database, by service (their names, in order). */
export async function appliedMigrations(
  sql: (query: string) => Promise<string>,
): Promise<Record<string, string[]>> {
  const applied: Record<string, string[]> = {};
  for (const schema of ['auth', 'plants', 'admin']) {
    const rows = await sql(`select name from ${schema}.knex_migrations order by id`);
    applied[schema] = rows.split('\n').filter((name) => name !== '');
  }
  return applied;
}
