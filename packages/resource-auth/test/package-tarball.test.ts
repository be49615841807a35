/**
 * The package as another team installs it: `pnpm pack`'s tarball holds only the build, the
 * README, the LICENSE and the CHANGELOG; installed with npm into an empty project outside the
 * workspace it brings only public packages, none of the services' heavy ones, and loads.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NPM_INSTALL_FLAGS, npm, outsideWorkspace, packResourceAuth } from '@plant/test-kit';

/** What a resource server must not be made to install: the services' database, logging and tracing SDK. */
const FORBIDDEN = [
  /^@plant\/(?!resource-auth$)/,
  /^@opentelemetry\/(?!api$)/,
  /^knex$/,
  /^pg(-.*)?$/,
  /^pino(-.*)?$/,
  /^zod$/,
  /^@asteasolutions\//,
  /^lossless-json$/,
  /^express$/,
];

const scratch = outsideWorkspace('resource-auth-pack');
let tarball: string;
let project: string;

beforeAll(async () => {
  tarball = await packResourceAuth(scratch.dir);
  project = join(scratch.dir, 'empty-project');
  execFileSync('mkdir', [project]);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true, type: 'module' }),
  );
  await npm(['install', ...NPM_INSTALL_FLAGS, tarball], project);
}, 300_000);

afterAll(() => scratch.remove());

const packed = (path: string) =>
  execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8' });

describe('@plant/resource-auth packed', () => {
  test('When the tarball is listed, then it holds only dist (JavaScript and declarations), README, LICENSE and CHANGELOG', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(files.filter((f) => !/^package\/dist\/.+\.(js|d\.ts)$/.test(f)).sort()).toEqual([
      'package/CHANGELOG.md',
      'package/LICENSE',
      'package/README.md',
      'package/package.json',
    ]);
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(packed('LICENSE')).toBe(
      readFileSync(join(import.meta.dirname, '../../../LICENSE'), 'utf8'),
    );
  });

  test('When its package.json is read, then it is public, semver, Apache-2.0, ESM with types, and depends on public packages only', () => {
    const pkg = JSON.parse(packed('package.json')) as Record<string, unknown> & {
      dependencies: Record<string, string>;
      exports: Record<string, unknown>;
    };
    expect(pkg.private).toBeUndefined();
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.license).toBe('Apache-2.0');
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(Object.keys(pkg.dependencies).sort()).toEqual([
      'ioredis',
      'jsonwebtoken',
      'prom-client',
    ]);
    expect(Object.values(pkg.dependencies).filter((v) => !/^\^\d/.test(v))).toEqual([]);
    // The changelog names the version being packed.
    expect(packed('CHANGELOG.md')).toContain(`## [${pkg.version as string}]`);
  });

  test('When it is installed with npm into an empty project, then its dependency closure holds none of the services’ packages', async () => {
    const closure = (await npm(['ls', '--all', '--parseable'], project))
      .split('\n')
      .filter((line) => line.includes('/node_modules/'))
      .map((line) => line.slice(line.lastIndexOf('/node_modules/') + '/node_modules/'.length));
    expect(closure).toContain('@plant/resource-auth');
    expect(closure).toContain('ioredis');
    expect(closure.filter((name) => FORBIDDEN.some((rule) => rule.test(name)))).toEqual([]);
  });

  test('When the installed package is imported, then its drop-in and its helpers are there', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('@plant/resource-auth'); console.log(JSON.stringify([typeof m.createResourceAuth, typeof m.principalOf, typeof m.hasRole, typeof m.createBearerAuth]));",
      ],
      { cwd: project, encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual(['function', 'function', 'function', 'function']);
  });
});
