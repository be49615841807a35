// `pnpm release <patch|minor|major|x.y.z> [options]`: cuts a release of the three services.
//
//   1. the version: root and every services/*/package.json, the CHANGELOG's [Unreleased]
//      section moved under `## [x.y.z] - <date>`, and the prod overlay's `images:` newTag
//      (the one place the overlays name images); committed as `chore(release): x.y.z` and
//      tagged `vx.y.z`;
//   2. the images, one `docker build --target <service>` each, tagged `<registry>/<service>:x.y.z`
//      and `:sha-<commit>`, with the OCI labels from build arguments (version, revision,
//      created, source; licenses, title and description are in the Dockerfile);
//   3. a CycloneDX SBOM per image (the Dockerfile's sbom stage: @cyclonedx/cyclonedx-npm over the
//      tree each image copies), validated, written to <out>/<service>-x.y.z.cdx.json beside
//      <out>/release-x.y.z.json (tags, labels, sizes, SBOM files);
//   4. each image checked: its labels, no npm or corepack in it; `--push` pushes the tags.
//
// `--dry-run` builds nothing and changes nothing in the repository: it prints the plan (JSON)
// and writes the bumped files to a temporary copy (`--out`, default a new temp directory), so
// the CHANGELOG section can be read before the real run. `--with-sbom` makes the dry run also
// write each service's SBOM from a `pnpm deploy --prod` of it on this machine (no Docker).
//
// Options: --registry <prefix> (default registry.example.com/plant, as the prod overlay),
// --source <url> (default: `git remote get-url origin`, else package.json "repository"),
// --date YYYY-MM-DD, --created <ISO time>, --node-image <image> (build argument NODE_IMAGE,
// e.g. a mirror), --services a,b, --out <dir>, --allow-dirty, --push.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCommandLine } from 'node:util';
import { parseDocument } from 'yaml';

export const SERVICES = ['plant-store', 'token-service', 'account-admin'];
export const PROD_KUSTOMIZATION = 'k8s/overlays/prod/kustomization.yaml';
const DEFAULT_REGISTRY = 'registry.example.com/plant';
/** The arguments the Dockerfile's sbom stage gives cyclonedx-npm: production dependencies only. */
export const CYCLONEDX_ARGS = [
  '--omit',
  'dev',
  '--ignore-npm-errors',
  '--output-reproducible',
  '--output-format',
  'JSON',
];

/**
 * @typedef {{ bump: string, dryRun: boolean, withSbom: boolean, push: boolean, allowDirty: boolean,
 *   registry: string, source?: string, date?: string, created?: string, nodeImage?: string,
 *   services: string[], out?: string, root: string }} Options
 */

/** @param {string[]} argv */
export function parseArgs(argv) {
  const { values, positionals } = parseCommandLine({
    args: argv,
    allowPositionals: true,
    options: {
      'dry-run': { type: 'boolean', default: false },
      'with-sbom': { type: 'boolean', default: false },
      push: { type: 'boolean', default: false },
      'allow-dirty': { type: 'boolean', default: false },
      registry: { type: 'string', default: DEFAULT_REGISTRY },
      source: { type: 'string' },
      date: { type: 'string' },
      created: { type: 'string' },
      'node-image': { type: 'string' },
      out: { type: 'string' },
      root: { type: 'string', default: resolve(dirname(fileURLToPath(import.meta.url)), '..') },
      services: { type: 'string', default: SERVICES.join(',') },
    },
  });
  const [bump, ...extra] = positionals;
  if (bump === undefined) throw new Error('name the release: patch, minor, major or x.y.z');
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(' ')}`);
  const services = values.services.split(',');
  for (const s of services) if (!SERVICES.includes(s)) throw new Error(`unknown service ${s}`);
  /** @type {Options} */
  const options = {
    bump,
    dryRun: values['dry-run'],
    withSbom: values['with-sbom'],
    push: values.push,
    allowDirty: values['allow-dirty'],
    registry: values.registry.replace(/\/$/, ''),
    source: values.source,
    date: values.date,
    created: values.created,
    nodeImage: values['node-image'],
    out: values.out,
    root: resolve(values.root),
    services,
  };
  return options;
}

/** The next version: `patch`, `minor`, `major` of `current`, or an explicit x.y.z above it. */
export function nextVersion(/** @type {string} */ current, /** @type {string} */ bump) {
  const parse = (/** @type {string} */ v) => {
    const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
    if (!m) throw new Error(`not a version x.y.z: ${v}`);
    return [Number(m[1]), Number(m[2]), Number(m[3])];
  };
  const [major, minor, patch] = parse(current);
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  if (bump === 'patch') return `${major}.${minor}.${patch + 1}`;
  const wanted = parse(bump);
  const order = wanted[0] - major || wanted[1] - minor || wanted[2] - patch;
  if (order <= 0) throw new Error(`${bump} is not above the current version ${current}`);
  return bump;
}

/**
 * The CHANGELOG with its [Unreleased] section moved under `## [version] - date`, and an empty
 * [Unreleased] left above it. Refuses an empty section (a release says what changed).
 */
export function changelogWithRelease(
  /** @type {string} */ text,
  /** @type {string} */ version,
  /** @type {string} */ date,
) {
  const heading = /^## \[Unreleased\][^\n]*\n/m;
  const at = heading.exec(text);
  if (!at) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  const start = at.index + at[0].length;
  const nextHeading = text.slice(start).search(/^## \[/m);
  const end = nextHeading < 0 ? text.length : start + nextHeading;
  const body = text.slice(start, end).trim();
  if (body === '') throw new Error('the [Unreleased] section is empty: nothing to release');
  if (new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\]`, 'm').test(text))
    throw new Error(`CHANGELOG.md already has a [${version}] section`);
  return `${text.slice(0, start)}\n## [${version}] - ${date}\n\n${body}\n\n${text.slice(end)}`.replace(
    /\n{3,}/g,
    '\n\n',
  );
}

/** The prod overlay's kustomization with every images: entry at `version` (comments kept). */
export function kustomizationWithTag(/** @type {string} */ text, /** @type {string} */ version) {
  const doc = parseDocument(text);
  const images = /** @type {import('yaml').YAMLSeq<import('yaml').YAMLMap>} */ (doc.get('images'));
  if (!images || images.items.length === 0) throw new Error(`${PROD_KUSTOMIZATION} has no images:`);
  for (const entry of images.items) entry.set('newTag', version);
  return doc.toString();
}

/** @param {string} cwd @param {string[]} args */
const git = (cwd, args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** The repository URL for org.opencontainers.image.source. */
function sourceUrl(/** @type {Options} */ options) {
  if (options.source) return options.source;
  try {
    return git(options.root, ['remote', 'get-url', 'origin']);
  } catch {
    const { repository } = JSON.parse(readFileSync(join(options.root, 'package.json'), 'utf8'));
    const url = typeof repository === 'string' ? repository : repository?.url;
    if (url) return url;
    throw new Error('no source URL: pass --source <url> (no git remote "origin", no "repository")');
  }
}

/** The OCI labels of one service's image (the Dockerfile sets licenses, title, description from these rules too). */
export function ociLabels(
  /** @type {string} */ service,
  /** @type {{ version: string, revision: string, created: string, source: string }} */ build,
) {
  return {
    'org.opencontainers.image.version': build.version,
    'org.opencontainers.image.revision': build.revision,
    'org.opencontainers.image.created': build.created,
    'org.opencontainers.image.source': build.source,
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.title': service,
  };
}

/** What a release of `options` makes: version, files, tags and labels per image. */
export function releasePlan(/** @type {Options} */ options) {
  const root = options.root;
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const version = nextVersion(rootPackage.version, options.bump);
  const date = options.date ?? new Date().toISOString().slice(0, 10);
  const revision = git(root, ['rev-parse', 'HEAD']);
  const created = options.created ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const source = sourceUrl(options);
  const images = options.services.map((service) => ({
    service,
    target: service,
    tags: [
      `${options.registry}/${service}:${version}`,
      `${options.registry}/${service}:sha-${revision.slice(0, 12)}`,
    ],
    labels: ociLabels(service, { version, revision, created, source }),
    sbom: `${service}-${version}.cdx.json`,
  }));
  return { from: rootPackage.version, version, date, revision, created, source, images };
}

/** The files a release rewrites, as path → new content. */
export function releaseFiles(
  /** @type {Options} */ options,
  /** @type {{ version: string, date: string }} */ plan,
) {
  const root = options.root;
  /** @type {Record<string, string>} */
  const files = {};
  for (const path of ['package.json', ...SERVICES.map((s) => `services/${s}/package.json`)]) {
    const manifest = JSON.parse(readFileSync(join(root, path), 'utf8'));
    manifest.version = plan.version;
    files[path] = `${JSON.stringify(manifest, null, 2)}\n`;
  }
  files['CHANGELOG.md'] = changelogWithRelease(
    readFileSync(join(root, 'CHANGELOG.md'), 'utf8'),
    plan.version,
    plan.date,
  );
  files[PROD_KUSTOMIZATION] = kustomizationWithTag(
    readFileSync(join(root, PROD_KUSTOMIZATION), 'utf8'),
    plan.version,
  );
  return files;
}

/**
 * Problems of a CycloneDX SBOM of `service`: the format and a spec version, the service as its
 * subject, and components each with a name, a version and a package URL.
 */
export function sbomProblems(/** @type {any} */ bom, /** @type {string} */ service) {
  const problems = [];
  if (bom?.bomFormat !== 'CycloneDX')
    problems.push(`bomFormat is ${bom?.bomFormat}, not CycloneDX`);
  if (!/^1\.\d+$/.test(String(bom?.specVersion))) problems.push(`specVersion ${bom?.specVersion}`);
  if (bom?.metadata?.component?.name !== service)
    problems.push(`its subject is ${bom?.metadata?.component?.name}, not ${service}`);
  const components = Array.isArray(bom?.components) ? bom.components : [];
  if (components.length === 0) problems.push('no components');
  for (const c of components)
    if (!c?.name || !c?.version || !String(c?.purl ?? '').startsWith('pkg:npm/'))
      problems.push(
        `component without name, version or npm purl: ${JSON.stringify(c).slice(0, 120)}`,
      );
  return problems;
}

/** The number of components of a valid SBOM file of `service`; throws on an invalid one. @param {string} service @param {string} file */
function validSbomComponents(service, file) {
  const bom = JSON.parse(readFileSync(file, 'utf8'));
  const problems = sbomProblems(bom, service);
  if (problems.length > 0) throw new Error(`SBOM of ${service}: ${problems.join('; ')}`);
  return bom.components.length;
}

/** The dry run's SBOMs: each service deployed with its production dependencies to a temporary directory, as the Dockerfile's build stage does, and cyclonedx-npm over it. */
function hostSboms(
  /** @type {Options} */ options,
  /** @type {ReturnType<typeof releasePlan>} */ plan,
  /** @type {string} */ out,
) {
  const work = mkdtempSync(join(tmpdir(), 'release-deploy-'));
  // pnpm itself when `pnpm release` runs this, else through corepack (the pinned version).
  const execPath = process.env.npm_execpath ?? '';
  const pnpm = /pnpm/.test(execPath) ? [process.execPath, execPath] : ['corepack', 'pnpm'];
  try {
    return plan.images.map(({ service, sbom }) => {
      const tree = join(work, service);
      execFileSync(
        pnpm[0] ?? 'corepack',
        [
          ...pnpm.slice(1),
          '--config.inject-workspace-packages=true',
          '--filter',
          `@plant/${service}`,
          'deploy',
          '--prod',
          tree,
        ],
        { cwd: options.root, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      const file = join(out, sbom);
      execFileSync(
        join(options.root, 'node_modules/.bin/cyclonedx-npm'),
        [...CYCLONEDX_ARGS, '--output-file', file],
        {
          cwd: tree,
          stdio: ['ignore', 'ignore', 'ignore'],
        },
      );
      return { service, file, components: validSbomComponents(service, file) };
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** @param {string[]} args */
const docker = (args, /** @type {'inherit' | 'pipe'} */ output = 'inherit') =>
  // With its output shown (`inherit`) execFileSync returns null.
  (
    execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', output, 'inherit'] }) ?? ''
  ).trim();

/** Bumps the files, commits them as the release commit and tags it; returns that commit. */
function commitRelease(
  /** @type {Options} */ options,
  /** @type {ReturnType<typeof releasePlan>} */ plan,
) {
  const root = options.root;
  if (!options.allowDirty && git(root, ['status', '--porcelain']) !== '')
    throw new Error('the work tree has changes: commit them first (or --allow-dirty)');
  const files = releaseFiles(options, plan);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content);
  git(root, ['add', ...Object.keys(files)]);
  git(root, ['commit', '-q', '-m', `chore(release): ${plan.version}`]);
  git(root, ['tag', '-a', `v${plan.version}`, '-m', `Release ${plan.version}`]);
  return git(root, ['rev-parse', 'HEAD']);
}

const PACKAGE_MANAGER_PROBE =
  "const fs=require('fs');console.log(['/usr/local/lib/node_modules','/usr/local/bin/npm','/usr/local/bin/npx','/usr/local/bin/corepack'].filter((p)=>fs.existsSync(p)).join(' '))";

/** Builds one image, checks its labels and that it holds no package manager; returns its size in bytes. */
function buildImage(
  /** @type {string} */ root,
  /** @type {string[]} */ buildArgs,
  /** @type {{ target: string, tags: string[], labels: Record<string, string> }} */ image,
) {
  docker([
    'build',
    '--network',
    'host',
    ...buildArgs,
    '--target',
    image.target,
    ...image.tags.flatMap((t) => ['-t', t]),
    root,
  ]);
  const tag = image.tags[0] ?? '';
  const labels = JSON.parse(
    docker(['image', 'inspect', '-f', '{{json .Config.Labels}}', tag], 'pipe'),
  );
  for (const [key, value] of Object.entries(image.labels))
    if (labels[key] !== value)
      throw new Error(`${tag}: label ${key} is ${labels[key]}, not ${value}`);
  const managers = docker(
    ['run', '--rm', '--network', 'none', '--entrypoint', 'node', tag, '-e', PACKAGE_MANAGER_PROBE],
    'pipe',
  );
  if (managers !== '') throw new Error(`${tag} still holds ${managers}`);
  return Number(docker(['image', 'inspect', '-f', '{{.Size}}', tag], 'pipe'));
}

/** The Dockerfile's sbom stage (the build stage the images copied from, cached), its files copied out and validated. */
function imageSboms(
  /** @type {string} */ root,
  /** @type {string[]} */ buildArgs,
  /** @type {string} */ version,
  /** @type {Array<{ service: string, sbom: string }>} */ images,
  /** @type {string} */ out,
) {
  const sbomImage = `plant-release-sbom:${version}`;
  docker(['build', '--network', 'host', ...buildArgs, '--target', 'sbom', '-t', sbomImage, root]);
  const container = docker(['create', sbomImage, 'true'], 'pipe');
  const work = mkdtempSync(join(tmpdir(), 'release-sbom-'));
  try {
    docker(['cp', `${container}:/sbom/.`, work]);
    return images.map(({ service, sbom }) => {
      const file = join(out, sbom);
      cpSync(join(work, `${service}.cdx.json`), file);
      return { service, file, components: validSbomComponents(service, file) };
    });
  } finally {
    docker(['rm', container], 'pipe');
    rmSync(work, { recursive: true, force: true });
  }
}

/** The real run: bump, commit, tag, build, SBOMs, checks, push. */
function release(
  /** @type {Options} */ options,
  /** @type {ReturnType<typeof releasePlan>} */ plan,
  /** @type {string} */ out,
) {
  const revision = commitRelease(options, plan);
  const short = `sha-${revision.slice(0, 12)}`;
  const images = plan.images.map((image) => ({
    ...image,
    tags: [image.tags[0] ?? '', (image.tags[0] ?? '').replace(/:[^:]+$/, `:${short}`)],
    labels: { ...image.labels, 'org.opencontainers.image.revision': revision },
  }));
  const buildArgs = [
    ...[
      'VERSION',
      plan.version,
      'REVISION',
      revision,
      'CREATED',
      plan.created,
      'SOURCE',
      plan.source,
    ],
    ...(options.nodeImage ? ['NODE_IMAGE', options.nodeImage] : []),
  ].flatMap((value, i, all) => (i % 2 === 0 ? ['--build-arg', `${value}=${all[i + 1]}`] : []));
  const sizes = images.map((image) => buildImage(options.root, buildArgs, image));
  const sboms = imageSboms(options.root, buildArgs, plan.version, images, out);
  if (options.push) for (const image of images) for (const tag of image.tags) docker(['push', tag]);
  return {
    ...plan,
    revision,
    images: images.map((image, i) => ({ ...image, size: sizes[i] })),
    sboms,
  };
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const plan = releasePlan(options);
  const out = resolve(
    options.out ??
      (options.dryRun
        ? mkdtempSync(join(tmpdir(), 'release-'))
        : join(options.root, 'release', plan.version)),
  );
  mkdirSync(out, { recursive: true });
  if (options.dryRun) {
    // The bumped files go to the temporary copy, never to the repository.
    const files = releaseFiles(options, plan);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(out, path)), { recursive: true });
      writeFileSync(join(out, path), content);
    }
    const sboms = options.withSbom ? hostSboms(options, plan, out) : [];
    const result = { dryRun: true, out, ...plan, files: Object.keys(files), sboms };
    writeFileSync(
      join(out, `release-${plan.version}.json`),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const result = release(options, plan, out);
  writeFileSync(join(out, `release-${plan.version}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`release: ${/** @type {Error} */ (err).message}\n`);
    process.exit(1);
  }
}
