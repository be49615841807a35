/**
 * `pnpm release --dry-run` (scripts/release.mjs), run as an operator runs it: it computes the
 * version, the tags and the OCI labels of the three images, writes the bumped files (the
 * CHANGELOG section among them) to a temporary copy and leaves the repository as it was;
 * it builds nothing. With --with-sbom it writes a CycloneDX SBOM of a service's production tree.
 */
import { describe, expect, test } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kustomizeImages } from '../src/k8s-images.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';

const SCRIPT = join(repoRoot, 'scripts/release.mjs');
const SOURCE = 'https://example.invalid/plant-store-platform.git';
const CREATED = '2030-01-02T03:04:05Z';

interface Plan {
  dryRun: boolean;
  out: string;
  from: string;
  version: string;
  revision: string;
  images: Array<{ service: string; tags: string[]; labels: Record<string, string>; sbom: string }>;
  files: string[];
  sboms: Array<{ service: string; file: string; components: number }>;
}

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
/** The script's run, in a temporary directory of its own; no npm_execpath, so it finds pnpm through corepack as a fresh shell would. */
function dryRun(args: string[], root = repoRoot) {
  const out = mkdtempSync(join(tmpdir(), 'release-test-'));
  const env = { ...process.env };
  delete env.npm_execpath;
  const run = spawnSync(
    process.execPath,
    [
      SCRIPT,
      ...args,
      '--dry-run',
      '--root',
      root,
      '--source',
      SOURCE,
      '--created',
      CREATED,
      '--out',
      out,
    ],
    { encoding: 'utf8', env },
  );
  return {
    out,
    status: run.status,
    stderr: run.stderr,
    plan: run.status === 0 ? (JSON.parse(run.stdout) as Plan) : undefined,
  };
}
const changelogUnreleased = (text: string) => {
  const start = text.indexOf('## [Unreleased]');
  const rest = text.slice(start + '## [Unreleased]'.length);
  const next = rest.search(/^## \[/m);
  return (next < 0 ? rest : rest.slice(0, next)).trim();
};

describe('pnpm release --dry-run', () => {
  test('When a minor release is planned, then the three images get the version and commit tags and every OCI label, the bumped files go to the temporary copy, and the repository is left as it was', () => {
    const before = Object.fromEntries(
      [
        'package.json',
        'CHANGELOG.md',
        'k8s/overlays/prod/kustomization.yaml',
        ...SERVICES.map((s) => `services/${s}/package.json`),
      ].map((p) => [p, read(p)]),
    );
    const current = (JSON.parse(before['package.json']!) as { version: string }).version;
    const [major, minor] = current.split('.').map(Number);
    const version = `${major}.${minor! + 1}.0`;
    const { out, plan, stderr } = dryRun(['minor', '--date', '2030-01-02']);
    try {
      expect(stderr).toBe('');
      const revision = execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: repoRoot,
        encoding: 'utf8',
      }).trim();
      expect(plan).toMatchObject({ dryRun: true, from: current, version, revision });
      expect(plan!.images.map((i) => i.service)).toEqual([...SERVICES]);
      for (const image of plan!.images) {
        const repository = `registry.example.com/plant/${image.service}`;
        expect(image.tags).toEqual([
          `${repository}:${version}`,
          `${repository}:sha-${revision.slice(0, 12)}`,
        ]);
        // The prod overlay's images: name the same repository (the tag is the release's, below).
        expect(
          kustomizeImages(join(repoRoot, 'k8s/overlays/prod')).map((e) => e.newName),
        ).toContain(repository);
        expect(image.labels).toEqual({
          'org.opencontainers.image.version': version,
          'org.opencontainers.image.revision': revision,
          'org.opencontainers.image.created': CREATED,
          'org.opencontainers.image.source': SOURCE,
          'org.opencontainers.image.licenses': 'Apache-2.0',
          'org.opencontainers.image.title': image.service,
        });
        expect(image.sbom).toBe(`${image.service}-${version}.cdx.json`);
      }
      // The copy: versions bumped, the Unreleased section moved under the version, the overlay's tag.
      for (const path of ['package.json', ...SERVICES.map((s) => `services/${s}/package.json`)])
        expect(
          (JSON.parse(readFileSync(join(out, path), 'utf8')) as { version: string }).version,
        ).toBe(version);
      const changelog = readFileSync(join(out, 'CHANGELOG.md'), 'utf8');
      const released = changelog.indexOf(`## [${version}] - 2030-01-02`);
      expect(released).toBeGreaterThan(changelog.indexOf('## [Unreleased]'));
      expect(changelogUnreleased(changelog)).toBe('');
      expect(changelog.slice(released)).toContain(changelogUnreleased(before['CHANGELOG.md']!));
      const kustomization = parse(
        readFileSync(join(out, 'k8s/overlays/prod/kustomization.yaml'), 'utf8'),
      ) as {
        images: Array<{ newTag: string }>;
      };
      expect(kustomization.images.map((i) => i.newTag)).toEqual(SERVICES.map(() => version));
      // Nothing of the repository changed.
      for (const [path, content] of Object.entries(before))
        expect({ path, same: read(path) === content }).toEqual({ path, same: true });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('When the version is not above the current one, or the Unreleased section is empty, then the release is refused and says why', () => {
    const current = (JSON.parse(read('package.json')) as { version: string }).version;
    const same = dryRun([current]);
    expect(same.status).toBe(1);
    expect(same.stderr).toContain(`is not above the current version ${current}`);
    rmSync(same.out, { recursive: true, force: true });

    const copy = mkdtempSync(join(tmpdir(), 'release-root-'));
    try {
      execFileSync('git', ['init', '-q', copy]);
      for (const path of [
        'package.json',
        'k8s/overlays/prod/kustomization.yaml',
        ...SERVICES.map((s) => `services/${s}/package.json`),
      ]) {
        mkdirSync(join(copy, path, '..'), { recursive: true });
        writeFileSync(join(copy, path), read(path));
      }
      writeFileSync(
        join(copy, 'CHANGELOG.md'),
        '# Changelog\n\n## [Unreleased]\n\n## [1.0.0] - 2026-01-01\n\n- first\n',
      );
      execFileSync('git', [
        '-C',
        copy,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@example.invalid',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'x',
      ]);
      const empty = dryRun(['patch'], copy);
      expect(empty.status).toBe(1);
      expect(empty.stderr).toContain('the [Unreleased] section is empty: nothing to release');
      rmSync(empty.out, { recursive: true, force: true });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test('When the dry run writes the SBOM of a service, then it is CycloneDX JSON about that service, its production dependencies as npm components, no development tool among them', () => {
    const { out, plan, stderr } = dryRun(['patch', '--with-sbom', '--services', 'plant-store']);
    try {
      expect(stderr).toBe('');
      const [sbom] = plan!.sboms;
      const bom = JSON.parse(readFileSync(sbom!.file, 'utf8')) as {
        bomFormat: string;
        specVersion: string;
        metadata: { component: { name: string; version: string } };
        components: Array<{ name: string; group?: string; version: string; purl: string }>;
      };
      expect(bom.bomFormat).toBe('CycloneDX');
      expect(bom.specVersion).toMatch(/^1\.\d+$/);
      expect(bom.metadata.component.name).toBe('plant-store');
      expect(bom.components.length).toBe(sbom!.components);
      const names = bom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name));
      expect(names).toEqual(expect.arrayContaining(['express', '@plant/shared', 'pg']));
      // Production only, and only the OTLP/HTTP exporter: no test tool, no gRPC or protobuf exporter.
      for (const absent of [
        'jest',
        'typescript',
        '@biomejs/biome',
        '@grpc/grpc-js',
        '@opentelemetry/sdk-node',
        '@opentelemetry/exporter-trace-otlp-grpc',
        '@opentelemetry/exporter-trace-otlp-proto',
      ])
        expect(names).not.toContain(absent);
      for (const c of bom.components) expect(c.purl).toMatch(/^pkg:npm\//);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});
