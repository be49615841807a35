import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { argDefaults, checkServiceDockerfile, exposedPorts, isPinnedNode20, lintDockerfile } from '../src/dockerfile-checks.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { requirementsOf } from './helpers/service-configs.js';

const dockerfileOf = (service: string) => readFileSync(join(repoRoot, 'services', service, 'Dockerfile'), 'utf8');
const packageJson = (path: string) => JSON.parse(readFileSync(join(repoRoot, path, 'package.json'), 'utf8')) as { name: string; packageManager?: string };

describe.each(SERVICES)('services/%s/Dockerfile', (service) => {
  const content = dockerfileOf(service);

  test('When dockerfile-utils lints it, then it reports nothing', () => {
    expect(lintDockerfile(content)).toEqual([]);
  });

  test('When our rules check it, then it is multi-stage on a pinned Node 20 base, COPY --from names stages, and the final stage is non-root with NODE_ENV=production, a HEALTHCHECK and an exec-form CMD', () => {
    expect(checkServiceDockerfile(content)).toEqual([]);
    expect(content).toContain('CMD ["node", "dist/start.js"]');
  });

  test('When the image is built, then pnpm is the workspace version and only this service is deployed with its production dependencies', () => {
    const pnpm = packageJson('.').packageManager!.split('@')[1];
    expect(argDefaults(content).get('PNPM_VERSION')).toBe(pnpm);
    const name = packageJson(`services/${service}`).name;
    expect(content).toContain(`pnpm exec tsc -b services/${service}`);
    expect(content).toMatch(new RegExp(`pnpm --config.inject-workspace-packages=true --filter ${name} deploy --prod /out`));
  });

  test('When the image runs, then it exposes the ports of its config defaults and its HEALTHCHECK asks /healthz with node', () => {
    const { defaults } = requirementsOf(service);
    const expected = ['PORT', 'INTERNAL_PORT'].filter((k) => k in defaults).map((k) => defaults[k]);
    expect(exposedPorts(content)).toEqual(expected);
    expect(content).toMatch(new RegExp(`ENV NODE_ENV=production \\\\\\n\\s+PORT=${defaults['PORT']}`));
    expect(content).toMatch(/HEALTHCHECK [^\n]*\\\n\s+CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| \d+\) \+ '\/healthz'\)/);
  });
});

describe('Dockerfile rules', () => {
  test('When a Dockerfile breaks every rule, then the check names each problem', () => {
    const bad = [
      'FROM node:20 AS build',
      'RUN npm ci',
      'FROM node:latest',
      'COPY --from=builder /app /app',
      'USER root',
      'HEALTHCHECK NONE',
      'CMD node dist/start.js',
      '',
    ].join('\n');
    expect(checkServiceDockerfile(bad)).toEqual([
      'FROM node:20: base node:20 is not a pinned Node 20 image',
      'FROM node:latest: base node:latest is not a pinned Node 20 image',
      'COPY --from=builder does not name an earlier stage',
      'final stage runs as root',
      'HEALTHCHECK NONE',
      'CMD is not in exec form (JSON array): signals would go to a shell, not node',
      'final stage does not set NODE_ENV=production',
    ]);
    expect(checkServiceDockerfile('ARG NODE_IMAGE\nFROM ${NODE_IMAGE}\nCMD ["node"]\n')).toEqual([
      'not multi-stage (expected a build stage and a runtime stage)',
      'FROM ${NODE_IMAGE}: the ARG has no default',
      'final stage has no USER (would run as root)',
      'final stage has no HEALTHCHECK',
      'final stage does not set NODE_ENV=production',
    ]);
  });

  test('When base tags are judged, then only exact Node 20 releases or digests count as pinned', () => {
    expect(['node:20.20.2-bookworm-slim', 'node:20.11.1', `node@sha256:${'a'.repeat(64)}`].map(isPinnedNode20)).toEqual([true, true, true]);
    expect(['node:20', 'node:20-slim', 'node:lts', 'node', 'node:22.1.0', 'node:20.1'].map(isPinnedNode20)).toEqual([false, false, false, false, false, false]);
  });

  test('When dockerfile-utils lints a broken file, then it reports the errors', () => {
    expect(lintDockerfile('FROM node:20.20.2\nUSER\nHEALTHCHECK CMD\n')).toEqual([
      'line 2: Instruction has no arguments',
      'line 3: Missing command after HEALTHCHECK CMD',
    ]);
  });
});

describe('.dockerignore', () => {
  const ignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

  test('When the build context is sent, then it is an allowlist of the workspace that leaves out local installs, build output, git and env files', () => {
    expect(ignore[0]).toBe('*');
    expect(ignore).toEqual(expect.arrayContaining(['!package.json', '!pnpm-lock.yaml', '!pnpm-workspace.yaml', '!tsconfig.base.json', '!packages', '!services']));
    const reIncluded = ignore.indexOf('!services');
    for (const excluded of ['**/node_modules', '**/dist', '**/*.tsbuildinfo', '**/.env']) {
      expect(ignore.indexOf(excluded)).toBeGreaterThan(reIncluded);
    }
    expect(ignore).not.toContain('!.git');
  });
});
