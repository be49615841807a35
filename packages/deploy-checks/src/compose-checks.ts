import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse } from 'yaml';
import { parseDockerfile } from './dockerfile-checks.js';

export type ComposeService = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; target?: string };
  command?: string | string[];
  environment?: Record<string, unknown> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
  ports?: Array<string | number | { target?: number; published?: string | number }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  restart?: string;
  [key: string]: unknown;
};
export type ComposeFile = {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
};

/** Parses a compose file the way compose does (YAML 1.1 merge keys `<<:` included). */
export function loadCompose(path: string): ComposeFile {
  return parse(readFileSync(path, 'utf8'), { merge: true }) as ComposeFile;
}

/** The compose-spec JSON schema as bundled (and kept current) by the dclint package. */
export function composeSpecSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const dclintDir = dirname(require.resolve('dclint/package.json'));
  const schema = JSON.parse(
    readFileSync(join(dclintDir, 'schemas', 'compose.schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  // Draft-07 is Ajv's default meta-schema; the file names it by an https URL Ajv does not know.
  delete schema.$schema;
  return schema;
}

/** Schema errors as `path: message` lines (empty when valid). */
export function validateComposeSchema(doc: unknown): string[] {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(composeSpecSchema());
  if (validate(doc)) return [];
  return (validate.errors ?? []).map(
    (e: ErrorObject) =>
      `${e.instancePath || '/'}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}

export function environmentOf(service: ComposeService): Map<string, string | undefined> {
  const env = new Map<string, string | undefined>();
  const raw = service.environment;
  if (Array.isArray(raw)) {
    for (const entry of raw) {
      const at = entry.indexOf('=');
      if (at === -1) env.set(entry, undefined);
      else env.set(entry.slice(0, at), entry.slice(at + 1));
    }
  } else if (raw) {
    for (const [k, v] of Object.entries(raw))
      env.set(k, v === null || v === undefined ? undefined : String(v));
  }
  return env;
}

export function dependsOnOf(service: ComposeService): Map<string, string> {
  const deps = new Map<string, string>();
  const raw = service.depends_on;
  if (Array.isArray(raw)) for (const name of raw) deps.set(name, 'service_started');
  else if (raw)
    for (const [name, spec] of Object.entries(raw))
      deps.set(name, spec?.condition ?? 'service_started');
  return deps;
}

export function commandOf(service: ComposeService): string[] | undefined {
  if (service.command === undefined) return undefined;
  return Array.isArray(service.command)
    ? service.command
    : service.command.split(/\s+/).filter(Boolean);
}

/** The Dockerfile a service builds (relative to the compose file's directory) and its target stage, if one is named. */
export function buildOf(
  service: ComposeService,
): { dockerfile: string; target?: string } | undefined {
  if (service.build === undefined) return undefined;
  if (typeof service.build === 'string') return { dockerfile: join(service.build, 'Dockerfile') };
  const dockerfile = join(service.build.context ?? '.', service.build.dockerfile ?? 'Dockerfile');
  return service.build.target === undefined
    ? { dockerfile }
    : { dockerfile, target: service.build.target };
}

/**
 * Cross-checks the schema cannot express: references between services and to volumes, bind
 * mount sources on disk, health checks behind `service_healthy`, one-shots behind
 * `service_completed_successfully`.
 */
export function crossCheckCompose(doc: ComposeFile, composeDir: string): string[] {
  const services = Object.entries(doc.services ?? {});
  const declaredVolumes = new Set(Object.keys(doc.volumes ?? {}));
  return [
    ...services.flatMap(([name, service]) => [
      ...dependencyProblems(doc, name, service),
      ...volumeProblems(name, service, declaredVolumes, composeDir),
      ...buildProblems(name, service, composeDir),
    ]),
    ...services
      .filter(([name]) => name !== name.toLowerCase())
      .map(([name]) => `${name}: service names must be lower case`),
  ];
}

/** Each `depends_on` names a service, and its condition is one that service can meet. */
function dependencyProblems(doc: ComposeFile, name: string, service: ComposeService): string[] {
  const problems: string[] = [];
  for (const [target, condition] of dependsOnOf(service)) {
    const dep = doc.services[target];
    if (!dep) {
      problems.push(`${name}: depends_on names "${target}", which is not a service`);
      continue;
    }
    if (condition === 'service_healthy' && (!dep.healthcheck || dep.healthcheck.disable)) {
      problems.push(`${name}: waits for ${target} to be healthy, but ${target} has no healthcheck`);
    }
    if (condition === 'service_completed_successfully' && (dep.restart ?? 'no') !== 'no') {
      problems.push(
        `${name}: waits for ${target} to complete, but ${target} restarts (${dep.restart})`,
      );
    }
  }
  return problems;
}

/** A bind mount's source exists on disk; a named volume is declared at the top level. */
function volumeProblems(
  name: string,
  service: ComposeService,
  declaredVolumes: ReadonlySet<string>,
  composeDir: string,
): string[] {
  const problems: string[] = [];
  for (const volume of service.volumes ?? []) {
    const source = typeof volume === 'string' ? volume.split(':')[0]! : volume.source;
    if (source === undefined || (typeof volume === 'object' && volume.type === 'tmpfs')) continue;
    const isPath = source.startsWith('.') || source.startsWith('/') || source.startsWith('~');
    if (isPath) {
      const onDisk = isAbsolute(source) ? source : join(composeDir, source);
      if (!existsSync(onDisk)) problems.push(`${name}: bind mount source ${source} does not exist`);
    } else if (!declaredVolumes.has(source)) {
      problems.push(`${name}: volume "${source}" is not declared under top-level volumes`);
    }
  }
  return problems;
}

/** A build's Dockerfile exists and defines the target it names. */
function buildProblems(name: string, service: ComposeService, composeDir: string): string[] {
  const build = buildOf(service);
  if (build === undefined) return [];
  if (!existsSync(join(composeDir, build.dockerfile)))
    return [`${name}: builds ${build.dockerfile}, which does not exist`];
  if (
    build.target !== undefined &&
    !parseDockerfile(readFileSync(join(composeDir, build.dockerfile), 'utf8')).stages.some(
      (s) => s.name === build.target,
    )
  )
    return [`${name}: builds target ${build.target}, which ${build.dockerfile} does not define`];
  return [];
}
