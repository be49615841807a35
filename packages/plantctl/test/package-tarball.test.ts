/**
 * plantctl as a person installs it: `pnpm pack`'s tarball installed with `npm i -g` (into a
 * prefix of its own, outside the workspace) gives a `plantctl` that runs, ships the JSON Schema
 * editors point at, and brings public npm packages only, none of the workspace's.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { NPM_INSTALL_FLAGS, npm, outsideWorkspace, REPO_ROOT } from '@plant/test-kit';

const run = promisify(execFile);
const scratch = outsideWorkspace('plantctl-pack');
let tarball: string;
let prefix: string;

beforeAll(async () => {
  await run('corepack', ['pnpm', 'pack', '--pack-destination', scratch.dir], {
    cwd: join(REPO_ROOT, 'packages/plantctl'),
  });
  const found = readdirSync(scratch.dir).filter((f) => /^plant-plantctl-.*\.tgz$/.test(f));
  expect(found).toHaveLength(1);
  tarball = join(scratch.dir, found[0]!);
  prefix = join(scratch.dir, 'global');
  await npm(['install', '-g', '--prefix', prefix, ...NPM_INSTALL_FLAGS, tarball], scratch.dir);
}, 300_000);

afterAll(() => scratch.remove());

describe('plantctl packed', () => {
  test('When the tarball is listed, then it holds the build, the schema, the docs, README, LICENSE and CHANGELOG only', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(files.filter((f) => !/^package\/dist\/.+\.(js|d\.ts)$/.test(f)).sort()).toEqual([
      'package/CHANGELOG.md',
      'package/LICENSE',
      'package/README.md',
      'package/docs/cli-reference.md',
      'package/package.json',
      'package/schema/tenant.schema.json',
    ]);
  });

  test('When installed with npm i -g, then plantctl runs from the prefix and its closure holds no workspace package', async () => {
    const bin = join(prefix, 'bin', 'plantctl');
    const { stdout } = await run(bin, ['--version'], { env: { PATH: process.env.PATH ?? '' } });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const modules = join(prefix, 'lib', 'node_modules', '@plant', 'plantctl', 'node_modules');
    const names = existsSync(modules) ? readdirSync(modules) : [];
    const nested = readdirSync(join(prefix, 'lib', 'node_modules'));
    expect([...names, ...nested].filter((n) => n.startsWith('@plant') && n !== '@plant')).toEqual(
      [],
    );
    expect(readdirSync(join(prefix, 'lib', 'node_modules', '@plant'))).toEqual(['plantctl']);
    expect(
      existsSync(
        join(prefix, 'lib', 'node_modules', '@plant', 'plantctl', 'schema', 'tenant.schema.json'),
      ),
    ).toBe(true);
  });
});
