import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  argDefaults,
  checkServiceDockerfile,
  copiedFromStages,
  exposedPorts,
  imageEnv,
  imageLabels,
  OCI_LABELS,
  packageManagerProblems,
  isPinnedNode,
  lintDockerfile,
  parseDockerfile,
} from '../src/dockerfile-checks.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { requirementsOf } from './helpers/service-configs.js';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const packageJson = (path: string) =>
  JSON.parse(readFileSync(join(repoRoot, path, 'package.json'), 'utf8')) as {
    name: string;
    packageManager?: string;
  };

describe('the root Dockerfile', () => {
  test('When dockerfile-utils lints it, then it reports nothing', () => {
    expect(lintDockerfile(dockerfile)).toEqual([]);
  });

  test('When it is built without a target, then its last stage fails and says to name one', () => {
    const { stages } = parseDockerfile(dockerfile);
    expect(stages[stages.length - 1]!.name).toBe('no-target');
    expect(dockerfile).toMatch(
      /RUN echo 'build one service: docker build --target <plant-store\|token-service\|account-admin>' >&2 && exit 1\n$/,
    );
  });

  test('When the build stage runs, then pnpm is the workspace version and every service is compiled and deployed with its production dependencies', () => {
    const pnpm = packageJson('.').packageManager!.split('@')[1];
    expect(argDefaults(dockerfile).get('PNPM_VERSION')).toBe(pnpm);
    expect(dockerfile).toContain(
      `pnpm exec tsc -b ${SERVICES.map((s) => `services/${s}`).join(' ')} \\\n`,
    );
    expect(dockerfile).toContain(`for service in ${SERVICES.join(' ')}; do`);
    expect(dockerfile).toContain(
      'pnpm --config.inject-workspace-packages=true --filter "@plant/$service" deploy --prod "/out/$service" || exit 1;',
    );
  });
});

describe.each(SERVICES)('the Dockerfile target %s', (service) => {
  test('When our rules check it, then it is multi-stage on the pinned Node base (.nvmrc), COPY --from names stages, and the image is non-root with NODE_ENV=production, a HEALTHCHECK and an exec-form CMD', () => {
    expect(checkServiceDockerfile(dockerfile, service)).toEqual([]);
    expect(dockerfile).toContain('CMD ["node", "dist/start.js"]');
  });

  test('When the image is built, then it holds only this service as deployed by the build stage', () => {
    expect(packageJson(`services/${service}`).name).toBe(`@plant/${service}`);
    expect(copiedFromStages(dockerfile, service)).toEqual(['node-only:/', `build:/out/${service}`]);
  });

  test('When the image is built, then no layer of it holds npm, npx or corepack: its base is the Node image flattened without them', () => {
    expect(packageManagerProblems(dockerfile, service)).toEqual([]);
  });

  test('When the image is labelled, then it carries every OCI label, the version, revision, creation time and source from the release, Apache-2.0, and its own title', () => {
    const labels = imageLabels(dockerfile, service);
    expect(OCI_LABELS.filter((name) => !labels.get(name))).toEqual([]);
    expect(labels.get('org.opencontainers.image.licenses')).toBe('Apache-2.0');
    expect(labels.get('org.opencontainers.image.title')).toBe(service);
    // Filled by the release's build arguments (scripts/release.mjs), never written in the file.
    expect(
      ['version', 'revision', 'created', 'source'].map(
        (key) => labels.get(`org.opencontainers.image.${key}`)!,
      ),
    ).toEqual(['VERSION', 'REVISION', 'CREATED', 'SOURCE'].map((arg) => `\${${arg}}`));
    const others = SERVICES.filter((s) => s !== service).map((s) =>
      imageLabels(dockerfile, s).get('org.opencontainers.image.description'),
    );
    expect(others).not.toContain(labels.get('org.opencontainers.image.description'));
  });

  test('When the image runs, then it listens on and exposes the ports of its config defaults and its HEALTHCHECK asks /healthz on the management port with node', () => {
    const { defaults } = requirementsOf(service);
    const expected = ['PORT', 'INTERNAL_PORT', 'MANAGEMENT_PORT']
      .filter((k) => k in defaults)
      .map((k) => defaults[k]);
    expect(exposedPorts(dockerfile, service)).toEqual(expected);
    expect(imageEnv(dockerfile, service)).toEqual(
      new Map([
        // The base's PATH, which its flattened filesystem does not carry.
        ['PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        ['NODE_ENV', 'production'],
        ['PORT', String(defaults.PORT)],
        ['MANAGEMENT_PORT', String(defaults.MANAGEMENT_PORT)],
        // Each service's heap sized for its pod (heap-sizing.test.ts).
        ['NODE_OPTIONS', imageEnv(dockerfile, service).get('NODE_OPTIONS')!],
      ]),
    );
    // The public port answers /healthz 404: the probe asks the management port, on loopback (its default address).
    expect(defaults.MANAGEMENT_HOST).toBe('127.0.0.1');
    expect(dockerfile).toMatch(
      /HEALTHCHECK [^\n]*\\\n\s+CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:' \+ process\.env\.MANAGEMENT_PORT \+ '\/healthz'\)/,
    );
  });
});

describe('Dockerfile rules', () => {
  test('When a runtime keeps the Node base, or deletes the package managers only on top of it, then the package-manager check names it', () => {
    const onBase =
      'FROM node:20.20.2-bookworm-slim AS runtime\nRUN rm -rf /usr/local/lib/node_modules\nCMD ["node"]\n';
    expect(packageManagerProblems(onBase)).toEqual([
      'the image is built on node:20.20.2-bookworm-slim, whose layers keep npm and corepack',
    ]);
    const halfDone = [
      'FROM node:20.20.2-bookworm-slim AS node-only',
      'RUN rm -rf /usr/local/bin/npm /usr/local/bin/npx',
      'FROM scratch AS runtime',
      'COPY --from=node-only / /',
      '',
    ].join('\n');
    expect(packageManagerProblems(halfDone)).toEqual([
      'stage node-only does not remove /usr/local/lib/node_modules',
      'stage node-only does not remove /usr/local/bin/corepack',
    ]);
  });

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
      'FROM node:20: base node:20 is not the pinned Node 24.22.3 (.nvmrc)',
      'FROM node:latest: base node:latest is not the pinned Node 24.22.3 (.nvmrc)',
      'COPY --from=builder does not name an earlier stage',
      'final stage runs as root',
      'HEALTHCHECK NONE',
      'CMD is not in exec form (JSON array): signals would go to a shell, not node',
      'final stage does not set NODE_ENV=production',
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile ARG syntax, literal on purpose
    expect(checkServiceDockerfile('ARG NODE_IMAGE\nFROM ${NODE_IMAGE}\nCMD ["node"]\n')).toEqual([
      'not multi-stage (expected a build stage and a runtime stage)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile ARG syntax, literal on purpose
      'FROM ${NODE_IMAGE}: the ARG has no default',
      'final stage has no USER (would run as root)',
      'final stage has no HEALTHCHECK',
      'final stage does not set NODE_ENV=production',
    ]);
  });

  test('When a target inherits from a runtime stage, then the image is judged with what it inherits, and a missing target is named', () => {
    const base = [
      'ARG NODE_IMAGE=node:24.22.3-bookworm-slim',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile ARG syntax, literal on purpose
      'FROM ${NODE_IMAGE} AS build',
      'RUN true',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile ARG syntax, literal on purpose
      'FROM ${NODE_IMAGE} AS runtime',
    ];
    const good = [
      ...base,
      'ENV NODE_ENV=production',
      'USER 1000:1000',
      'HEALTHCHECK CMD ["node", "-e", "0"]',
      'CMD ["node", "dist/start.js"]',
      'FROM runtime AS svc',
      'COPY --from=build /out/svc ./',
      'ENV PORT=1',
      'FROM runtime AS other',
      '',
    ].join('\n');
    const rooted = [
      ...base,
      'ENV NODE_ENV=production',
      'USER 1000:1000',
      'HEALTHCHECK CMD ["node", "-e", "0"]',
      'CMD ["node", "dist/start.js"]',
      'FROM runtime AS svc',
      'USER root',
      '',
    ].join('\n');
    expect(checkServiceDockerfile(good, 'svc')).toEqual([]);
    expect(imageEnv(good, 'svc')).toEqual(
      new Map([
        ['NODE_ENV', 'production'],
        ['PORT', '1'],
      ]),
    );
    expect(copiedFromStages(good, 'svc')).toEqual(['build:/out/svc']);
    expect(checkServiceDockerfile(rooted, 'svc')).toEqual(['final stage runs as root']);
    expect(checkServiceDockerfile(good, 'nowhere')).toEqual(['no stage named nowhere']);
  });

  test('When base tags are judged, then only the pinned release (.nvmrc) or a digest counts as pinned', () => {
    expect(readFileSync(join(repoRoot, '.nvmrc'), 'utf8').trim()).toBe('24.22.3');
    expect(
      ['node:24.22.3-bookworm-slim', 'node:24.22.3', `node@sha256:${'a'.repeat(64)}`].map((image) =>
        isPinnedNode(image),
      ),
    ).toEqual([true, true, true]);
    expect(
      [
        'node:24',
        'node:24-slim',
        'node:lts',
        'node',
        'node:20.20.2-bookworm-slim',
        'node:24.22.30',
        'node:24.22',
      ].map((image) => isPinnedNode(image)),
    ).toEqual([false, false, false, false, false, false, false]);
    expect(isPinnedNode('node:26.12.1-trixie-slim', '26.12.1')).toBe(true);
  });

  test('When dockerfile-utils lints a broken file, then it reports the errors', () => {
    expect(lintDockerfile('FROM node:20.20.2\nUSER\nHEALTHCHECK CMD\n')).toEqual([
      'line 2: Instruction has no arguments',
      'line 3: Missing command after HEALTHCHECK CMD',
    ]);
  });
});

describe('.dockerignore', () => {
  const ignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  test('When the build context is sent, then it is an allowlist of the workspace that leaves out local installs, build output, git and env files', () => {
    expect(ignore[0]).toBe('*');
    expect(ignore).toEqual(
      expect.arrayContaining([
        '!package.json',
        '!pnpm-lock.yaml',
        '!pnpm-workspace.yaml',
        '!tsconfig.base.json',
        '!packages',
        '!services',
      ]),
    );
    const reIncluded = ignore.indexOf('!services');
    for (const excluded of ['**/node_modules', '**/dist', '**/*.tsbuildinfo', '**/.env']) {
      expect(ignore.indexOf(excluded)).toBeGreaterThan(reIncluded);
    }
    expect(ignore).not.toContain('!.git');
  });
});
