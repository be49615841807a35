import { DockerfileParser, Env, type Instruction, Label } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-paths.js';

/** dockerfile-utils' linter: every diagnostic, errors and warnings alike, as a line. */
export function lintDockerfile(content: string): string[] {
  return validate(content).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
}

export interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

export interface DockerfileFacts {
  /** ARGs before the first FROM, with their defaults. */
  globalArgs: Map<string, string | undefined>;
  stages: Stage[];
}

export function parseDockerfile(content: string): DockerfileFacts {
  const dockerfile = DockerfileParser.parse(content);
  const globalArgs = new Map<string, string | undefined>();
  for (const arg of dockerfile.getInitialARGs()) {
    const property = arg.getProperty();
    if (property) globalArgs.set(property.getName(), property.getValue() ?? undefined);
  }
  const stages: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const args = instruction.getArguments().map((a) => a.getValue());
      const asAt = args.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({
        name: asAt >= 0 ? args[asAt + 1] : undefined,
        image: args.find((a) => !a.startsWith('--')) ?? '',
        instructions: [],
      });
    } else if (stages.length > 0) {
      stages[stages.length - 1]!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

// dockerfile-ast keeps `--flag=value` out of getArguments(); COPY, ADD and friends expose getFlags().
const flagValue = (instruction: Instruction, flag: string): string | undefined => {
  const flags =
    (
      instruction as Instruction & {
        getFlags?: () => Array<{ getName(): string; getValue(): string | null }>;
      }
    ).getFlags?.() ?? [];
  const found = flags.find((f) => f.getName() === flag);
  return found ? (found.getValue() ?? '') : undefined;
};

const isExecForm = (instruction: Instruction): boolean => {
  const raw = (instruction.getArgumentsContent() ?? '').trim();
  if (!raw.startsWith('[')) return false;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) && parsed.length > 0 && parsed.every((p) => typeof p === 'string');
  } catch {
    return false;
  }
};

/** The Node release the project runs on (`.nvmrc`): the images' base must be this one. */
export const PINNED_NODE = readFileSync(join(repoRoot, '.nvmrc'), 'utf8').trim().replace(/^v/, '');

/**
 * A tag naming exactly the pinned release (`24.22.3-bookworm-slim` for `.nvmrc` 24.22.3), or a
 * digest; not a moving tag (`24`, `lts`, `latest`) nor another release than the one tested.
 */
export function isPinnedNode(image: string, version: string = PINNED_NODE): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = image.split('/').pop()!.split(':')[1];
  return tag === version || (tag?.startsWith(`${version}-`) ?? false);
}

/**
 * The stages an image built with `--target <target>` (default: the last stage) is made of,
 * its first base first; undefined when there is no such stage.
 */
export function imageStages(stages: Stage[], target?: string): Stage[] | undefined {
  let stage =
    target === undefined ? stages[stages.length - 1] : stages.find((s) => s.name === target);
  if (stage === undefined) return undefined;
  const chain: Stage[] = [];
  while (stage !== undefined && !chain.includes(stage)) {
    chain.unshift(stage);
    const base: string = stage.image;
    stage = stages.slice(0, stages.indexOf(stage)).find((s) => s.name === base);
  }
  return chain;
}

/** The instructions of an image (see `imageStages`), its bases' first. */
function imageInstructions(content: string, target?: string): Instruction[] | undefined {
  return imageStages(parseDockerfile(content).stages, target)?.flatMap(
    (stage) => stage.instructions,
  );
}

/** Why a stage's FROM is not an earlier stage, `scratch` (filled from earlier stages: packageManagerProblems) or the pinned Node image (`.nvmrc`). */
function baseProblem(
  from: string,
  globalArgs: Map<string, string | undefined>,
  earlier: Set<string>,
): string | undefined {
  const ref = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(from);
  const image = ref ? globalArgs.get(ref[1]!) : from;
  if (earlier.has(from) || image === 'scratch') return undefined;
  if (image === undefined) return `FROM ${from}: the ARG has no default`;
  if (!isPinnedNode(image))
    return `FROM ${from}: base ${image} is not the pinned Node ${PINNED_NODE} (.nvmrc)`;
  return undefined;
}

/**
 * Our rules for a service image (`target`, default the last stage): multi-stage; every FROM is
 * an earlier stage or the pinned Node image (`.nvmrc`) (directly or through a global ARG default); every
 * `COPY --from` names an earlier stage; the image, with what it inherits from its base stages,
 * runs as a non-root USER, sets NODE_ENV=production, has a HEALTHCHECK and an exec-form CMD.
 */
export function checkServiceDockerfile(content: string, target?: string): string[] {
  const problems: string[] = [];
  const { globalArgs, stages } = parseDockerfile(content);
  if (stages.length < 2)
    problems.push('not multi-stage (expected a build stage and a runtime stage)');
  const earlier = new Set<string>();
  stages.forEach((stage, index) => {
    const problem = baseProblem(stage.image, globalArgs, earlier);
    if (problem !== undefined) problems.push(problem);
    for (const instruction of stage.instructions) {
      if (instruction.getKeyword() !== 'COPY') continue;
      const from = flagValue(instruction, 'from');
      if (
        from !== undefined &&
        !earlier.has(from) &&
        !(/^\d+$/.test(from) && Number(from) < index)
      ) {
        problems.push(`COPY --from=${from} does not name an earlier stage`);
      }
    }
    if (stage.name) earlier.add(stage.name);
  });
  const instructions = imageInstructions(content, target);
  if (!instructions)
    return [...problems, target === undefined ? 'no FROM' : `no stage named ${target}`];
  const last = (keyword: string) => instructions.filter((i) => i.getKeyword() === keyword).pop();
  const user = last('USER');
  const userName = user?.getArguments()[0]?.getValue().split(':')[0];
  if (!user || userName === undefined) problems.push('final stage has no USER (would run as root)');
  else if (userName === 'root' || userName === '0')
    problems.push(`final stage runs as ${userName}`);
  const healthcheck = last('HEALTHCHECK');
  if (!healthcheck) problems.push('final stage has no HEALTHCHECK');
  else if ((healthcheck.getArgumentsContent() ?? '').trim().toUpperCase() === 'NONE')
    problems.push('HEALTHCHECK NONE');
  const cmd = last('CMD');
  if (!cmd) problems.push('final stage has no CMD');
  else if (!isExecForm(cmd))
    problems.push('CMD is not in exec form (JSON array): signals would go to a shell, not node');
  if (imageEnv(content, target).get('NODE_ENV') !== 'production')
    problems.push('final stage does not set NODE_ENV=production');
  return problems;
}

/** The environment an image (see `imageStages`) sets, later stages over their bases. */
export function imageEnv(content: string, target?: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const instruction of imageInstructions(content, target) ?? []) {
    if (instruction instanceof Env)
      for (const property of instruction.getProperties())
        env.set(property.getName(), property.getValue() ?? '');
  }
  return env;
}

/** What an image (see `imageStages`) copies from other stages, as `<stage>:<source>`. */
export function copiedFromStages(content: string, target?: string): string[] {
  return (imageInstructions(content, target) ?? []).flatMap((instruction) => {
    const from = instruction.getKeyword() === 'COPY' ? flagValue(instruction, 'from') : undefined;
    return from === undefined ? [] : [`${from}:${instruction.getArguments()[0]?.getValue() ?? ''}`];
  });
}

/** Values of `ARG name=default` anywhere in the file (global or per stage). */
export function argDefaults(content: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const instruction of DockerfileParser.parse(content).getInstructions()) {
    if (instruction.getKeyword() !== 'ARG') continue;
    const [decl] = instruction.getArguments().map((a) => a.getValue());
    if (!decl) continue;
    const at = decl.indexOf('=');
    out.set(at === -1 ? decl : decl.slice(0, at), at === -1 ? undefined : decl.slice(at + 1));
  }
  return out;
}

/** Ports in an image's EXPOSE instructions (see `imageStages`). */
export function exposedPorts(content: string, target?: string): number[] {
  return (imageInstructions(content, target) ?? [])
    .filter((i) => i.getKeyword() === 'EXPOSE')
    .flatMap((i) => i.getArguments().map((a) => Number.parseInt(a.getValue(), 10)));
}

/** The labels an image (see `imageStages`) carries, later stages over their bases, quotes removed. */
export function imageLabels(content: string, target?: string): Map<string, string> {
  const labels = new Map<string, string>();
  for (const instruction of imageInstructions(content, target) ?? []) {
    if (instruction instanceof Label)
      for (const property of instruction.getProperties())
        labels.set(property.getName(), (property.getValue() ?? '').replace(/^"(.*)"$/, '$1'));
  }
  return labels;
}

/** The OCI annotations every release image carries (github.com/opencontainers/image-spec, annotations.md). */
export const OCI_LABELS = [
  'org.opencontainers.image.version',
  'org.opencontainers.image.revision',
  'org.opencontainers.image.created',
  'org.opencontainers.image.source',
  'org.opencontainers.image.licenses',
  'org.opencontainers.image.title',
  'org.opencontainers.image.description',
] as const;

/** What the Node base images hold besides node: the package managers a service image must not carry. */
export const PACKAGE_MANAGER_PATHS = [
  '/usr/local/lib/node_modules',
  '/usr/local/bin/npm',
  '/usr/local/bin/npx',
  '/usr/local/bin/corepack',
] as const;

/**
 * Whether npm and corepack are in no layer of the image: its first stage must be `scratch`
 * filled with `COPY --from=<stage> / /`, where that stage (on the Node base) removes every
 * package manager path in a RUN. Deleting them in a stage on top of the base would hide them
 * from the running container but keep them in the base's layer (and in a scanner's report).
 */
export function packageManagerProblems(content: string, target?: string): string[] {
  const { stages } = parseDockerfile(content);
  const chain = imageStages(stages, target);
  if (!chain) return [target === undefined ? 'no FROM' : `no stage named ${target}`];
  const root = chain[0]!;
  if (root.image !== 'scratch')
    return [`the image is built on ${root.image}, whose layers keep npm and corepack`];
  const fill = root.instructions.find(
    (i) =>
      i.getKeyword() === 'COPY' &&
      flagValue(i, 'from') !== undefined &&
      i
        .getArguments()
        .map((a) => a.getValue())
        .join(' ') === '/ /',
  );
  const source = fill && stages.find((s) => s.name === flagValue(fill, 'from'));
  if (!source) return ['the scratch stage is not filled with COPY --from=<stage> / /'];
  const removed = source.instructions
    .filter((i) => i.getKeyword() === 'RUN')
    .map((i) => i.getArgumentsContent() ?? '')
    .filter((run) => /\brm\b/.test(run))
    .join(' ');
  return PACKAGE_MANAGER_PATHS.filter(
    (path) => !new RegExp(`(^|\\s)${path}(\\s|$)`).test(removed),
  ).map((path) => `stage ${source.name} does not remove ${path}`);
}
