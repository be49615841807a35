import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dumpYaml, loadYaml } from '@kubernetes/client-node';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';

/** A rendered object, as plain JSON. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
};

/** The kinds the checks read, as kubernetes-models types them. */
export interface K8sKinds {
  Namespace: coreV1.INamespace;
  ConfigMap: coreV1.IConfigMap;
  Secret: coreV1.ISecret;
  Service: coreV1.IService;
  Deployment: appsV1.IDeployment;
  Job: batchV1.IJob;
  HorizontalPodAutoscaler: autoscalingV2.IHorizontalPodAutoscaler;
  PodDisruptionBudget: policyV1.IPodDisruptionBudget;
  Ingress: networkingV1.IIngress;
  NetworkPolicy: networkingV1.INetworkPolicy;
}

/** A rendered object of a known kind: its fields typed, its name and kind known to be there. */
export type K8sKind<K extends keyof K8sKinds> = K8sObject & K8sKinds[K];

/** A container of a pod template. */
export type K8sContainer = coreV1.IContainer;

/** `kubectl kustomize <dir>` (offline: no cluster needed) as objects. */
export function renderKustomization(dir: string): K8sObject[] {
  const out = execFileSync('kubectl', ['kustomize', dir], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const MODELS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'batch/v1': batchV1,
  'autoscaling/v2': autoscalingV2,
  'policy/v1': policyV1,
  'networking.k8s.io/v1': networkingV1,
};

type ModelClass = new (data: unknown) => { validate(): void };

/** kubernetes-models' JSON-schema validation: types, required fields, enums. */
export function validateWithModels(obj: K8sObject): string[] {
  const Model = MODELS[obj.apiVersion]?.[obj.kind] as ModelClass | undefined;
  if (!Model)
    return [`${obj.kind}/${obj.metadata.name}: no model for ${obj.apiVersion} ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (err) {
    return [`${obj.kind}/${obj.metadata.name}: ${(err as Error).message}`];
  }
}

function droppedPaths(original: unknown, roundTripped: unknown, path: string): string[] {
  if (original === null || typeof original !== 'object') return [];
  if (roundTripped === null || roundTripped === undefined || typeof roundTripped !== 'object')
    return [path];
  if (Array.isArray(original)) {
    const other = roundTripped as unknown[];
    return original.flatMap((item, i) => droppedPaths(item, other[i], `${path}[${i}]`));
  }
  const other = roundTripped as Record<string, unknown>;
  return Object.entries(original as Record<string, unknown>).flatMap(([key, value]) =>
    key in other ? droppedPaths(value, other[key], `${path}.${key}`) : [`${path}.${key}`],
  );
}

/**
 * Unknown fields: a round trip through @kubernetes/client-node's typed models keeps only the
 * fields the API knows, so whatever is missing afterwards is a field the API server would
 * reject (strict field validation) or silently drop. Free-form maps (labels, data) survive.
 */
export function unknownFields(obj: K8sObject): string[] {
  const typed = loadYaml(JSON.stringify(obj));
  const back = parse(dumpYaml(typed)) as unknown;
  return droppedPaths(obj, back, '').map(
    (p) => `${obj.kind}/${obj.metadata.name}: unknown field ${p.slice(1)}`,
  );
}

// The rendered output is what `kubectl kustomize` wrote: its kind field says what an object is.
export const objectsOf = <K extends keyof K8sKinds>(objects: K8sObject[], kind: K) =>
  objects.filter((o): o is K8sKind<K> => o.kind === kind);

/** The object of `kind` named `name`, typed when the kind is one the checks know. */
export function find<K extends keyof K8sKinds>(
  objects: K8sObject[],
  kind: K,
  name: string,
): K8sKind<K> | undefined;
export function find(objects: K8sObject[], kind: string, name: string): K8sObject | undefined;
export function find(objects: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** A workload's pod template: its owner, its labels and its containers. */
interface PodTemplate {
  owner: K8sObject;
  labels: Record<string, string>;
  containers: K8sContainer[];
}

/** Workloads whose pod template carries labels: Deployments and Jobs. */
function podTemplates(objects: K8sObject[]): PodTemplate[] {
  return objects
    .filter((o): o is K8sKind<'Deployment' | 'Job'> => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => ({
      owner: o,
      labels: o.spec?.template?.metadata?.labels ?? {},
      containers: o.spec?.template?.spec?.containers ?? [],
    }));
}

/**
 * References between rendered objects: Service selectors and target ports, Ingress backends,
 * HPA targets, PDB and NetworkPolicy selectors, Deployment selectors versus their templates.
 */
export function crossReferences(objects: K8sObject[]): string[] {
  const pods = podTemplates(objects);
  return [
    ...deploymentSelectorProblems(objects),
    ...serviceProblems(objects, pods),
    ...ingressProblems(objects),
    ...autoscalerProblems(objects),
    ...disruptionBudgetProblems(objects, pods),
    ...networkPolicyProblems(objects, pods),
  ];
}

function deploymentSelectorProblems(objects: K8sObject[]): string[] {
  return objectsOf(objects, 'Deployment')
    .filter((d) => !selects(d.spec?.selector?.matchLabels, d.spec?.template?.metadata?.labels))
    .map((d) => `Deployment/${d.metadata.name}: selector does not match its pod template`);
}

/** Each Service selects pods, and each of its ports targets a port those pods declare. */
function serviceProblems(objects: K8sObject[], pods: PodTemplate[]): string[] {
  const problems: string[] = [];
  for (const service of objectsOf(objects, 'Service')) {
    const selected = pods.filter((p) => selects(service.spec?.selector, p.labels));
    if (selected.length === 0) {
      problems.push(`Service/${service.metadata.name}: selects no pods`);
      continue;
    }
    for (const port of service.spec?.ports ?? []) {
      const target = port.targetPort ?? port.port;
      const served = selected.every((p) =>
        p.containers.some((c) =>
          (c.ports ?? []).some((cp) =>
            typeof target === 'string' ? cp.name === target : cp.containerPort === target,
          ),
        ),
      );
      if (!served)
        problems.push(
          `Service/${service.metadata.name}: port ${port.name ?? port.port} targets ${target}, which its pods do not declare`,
        );
    }
  }
  return problems;
}

/** Each Ingress path routes to a Service that exists, on a port it has. */
function ingressProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const ingress of objectsOf(objects, 'Ingress')) {
    for (const rule of ingress.spec?.rules ?? []) {
      for (const path of rule.http?.paths ?? []) {
        const problem = backendProblem(objects, path.backend.service);
        if (problem !== undefined)
          problems.push(`Ingress/${ingress.metadata.name}: ${rule.host}${path.path} ${problem}`);
      }
    }
  }
  return problems;
}

function backendProblem(
  objects: K8sObject[],
  backend: networkingV1.IIngressServiceBackend | undefined,
): string | undefined {
  const service = backend && find(objects, 'Service', backend.name);
  if (!service) return `routes to missing Service ${backend?.name}`;
  const port = (service.spec?.ports ?? []).find((p) =>
    backend.port?.name !== undefined
      ? p.name === backend.port.name
      : p.port === backend.port?.number,
  );
  return port
    ? undefined
    : `names port ${JSON.stringify(backend.port)} that Service/${service.metadata.name} lacks`;
}

function autoscalerProblems(objects: K8sObject[]): string[] {
  return objectsOf(objects, 'HorizontalPodAutoscaler').flatMap((hpa) => {
    const ref = hpa.spec?.scaleTargetRef;
    return !ref || !find(objects, ref.kind, ref.name)
      ? [`HorizontalPodAutoscaler/${hpa.metadata.name}: targets missing ${ref?.kind}/${ref?.name}`]
      : [];
  });
}

function disruptionBudgetProblems(objects: K8sObject[], pods: PodTemplate[]): string[] {
  return objectsOf(objects, 'PodDisruptionBudget')
    .filter((pdb) => !pods.some((p) => selects(pdb.spec?.selector?.matchLabels, p.labels)))
    .map((pdb) => `PodDisruptionBudget/${pdb.metadata.name}: selects no pods`);
}

/** Each NetworkPolicy applies to pods, and each pod peer it admits selects some. */
function networkPolicyProblems(objects: K8sObject[], pods: PodTemplate[]): string[] {
  const problems: string[] = [];
  for (const policy of objectsOf(objects, 'NetworkPolicy')) {
    if (selectsEveryPod(policy)) continue;
    if (!pods.some((p) => selects(policy.spec?.podSelector?.matchLabels, p.labels)))
      problems.push(`NetworkPolicy/${policy.metadata.name}: applies to no pods`);
    for (const peer of (policy.spec?.ingress ?? []).flatMap((rule) => rule.from ?? [])) {
      const selector = peer.podSelector;
      if (selector && !pods.some((p) => selects(selector.matchLabels, p.labels))) {
        problems.push(
          `NetworkPolicy/${policy.metadata.name}: a peer selects no pods (${JSON.stringify(selector)})`,
        );
      }
    }
  }
  return problems;
}

export type EnvSource =
  | { from: 'value' }
  | { from: 'configMap' | 'secret'; name: string; key: string };

/**
 * Where each environment variable of a container comes from: literal `value`s, `valueFrom`
 * key references, and every key of ConfigMaps/Secrets pulled in with `envFrom`.
 * `secrets` supplies Secrets that are not in the rendered output (created out of band).
 * Returns the sources and the references that do not resolve.
 */
export function containerEnv(
  container: K8sContainer,
  objects: K8sObject[],
  secrets: K8sObject[] = [],
): { env: Map<string, EnvSource>; problems: string[] } {
  const env = new Map<string, EnvSource>();
  const problems: string[] = [];
  const lookup: EnvLookup = (kind, name) =>
    find(objects, kind, name) ??
    (kind === 'Secret' ? secrets.find((s) => s.metadata.name === name) : undefined);
  for (const from of container.envFrom ?? []) {
    const pulled = envFromSource(from, lookup);
    if (typeof pulled === 'string') problems.push(`${container.name}: ${pulled}`);
    else for (const [name, source] of pulled) env.set(name, source);
  }
  for (const entry of container.env ?? []) {
    const { source, problem } = envVarSource(entry, lookup);
    if (problem !== undefined) problems.push(`${container.name}: ${problem}`);
    if (source !== undefined) env.set(entry.name, source);
  }
  return { env, problems };
}

/** A ConfigMap or a Secret by name, from the rendered output or those supplied out of band. */
type EnvLookup = (kind: 'ConfigMap' | 'Secret', name: string) => K8sObject | undefined;

const keysOf = (o: K8sObject) =>
  new Set([
    ...Object.keys((o.data as Record<string, string> | undefined) ?? {}),
    ...Object.keys((o.stringData as Record<string, string> | undefined) ?? {}),
  ]);

const sourceKind = (kind: 'ConfigMap' | 'Secret') =>
  kind === 'ConfigMap' ? 'configMap' : 'secret';

/** Every key of the ConfigMap or Secret an `envFrom` pulls in, or why it resolves to nothing. */
function envFromSource(
  from: coreV1.IEnvFromSource,
  lookup: EnvLookup,
): Array<[string, EnvSource]> | string {
  const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
  // The API server reads an unset name as "".
  const name = (from.configMapRef ?? from.secretRef)?.name ?? '';
  const source = lookup(kind, name);
  if (!source) return `envFrom names missing ${kind}/${name}`;
  return [...keysOf(source)].map((key) => [
    `${from.prefix ?? ''}${key}`,
    { from: sourceKind(kind), name, key },
  ]);
}

/** Where one `env` entry comes from (nothing for a fieldRef or resourceFieldRef), and whether its reference resolves. */
function envVarSource(
  entry: coreV1.IEnvVar,
  lookup: EnvLookup,
): { source?: EnvSource; problem?: string } {
  if (entry.valueFrom === undefined) return { source: { from: 'value' } };
  const ref = entry.valueFrom.configMapKeyRef ?? entry.valueFrom.secretKeyRef;
  if (!ref) return {};
  const kind = entry.valueFrom.configMapKeyRef ? 'ConfigMap' : 'Secret';
  const name = ref.name ?? '';
  const source: EnvSource = { from: sourceKind(kind), name, key: ref.key };
  const found = lookup(kind, name);
  if (!found) return { source, problem: `${entry.name} comes from missing ${kind}/${name}` };
  if (!keysOf(found).has(ref.key))
    return {
      source,
      problem: `${entry.name} comes from ${kind}/${name} key ${ref.key}, which it lacks`,
    };
  return { source };
}

/** Who a NetworkPolicy peer is: a namespace, pods, an address block, or (no `from` at all) anyone. */
export type Admitted = networkingV1.INetworkPolicyPeer | 'anyone';

/**
 * Every peer a NetworkPolicy admits to a container port (known by its name and number): the
 * peers of each rule that names the port, or names no port at all (a rule without `ports`
 * admits every port), and `'anyone'` for a rule without `from`.
 */
export function admittedTo(
  policy: K8sKind<'NetworkPolicy'>,
  port: { name: string; containerPort: number },
): Admitted[] {
  const rules = policy.spec?.ingress ?? [];
  const covers = (rule: networkingV1.INetworkPolicyIngressRule) =>
    rule.ports === undefined ||
    rule.ports.some((p) => p.port === port.name || p.port === port.containerPort);
  return rules
    .filter(covers)
    .flatMap((rule): Admitted[] =>
      rule.from === undefined || rule.from.length === 0 ? ['anyone'] : rule.from,
    );
}

/** How many pods of `replicas` a PodDisruptionBudget lets a drain take at once (integers only; a percentage is reported as NaN). */
export function disruptionsAllowed(pdb: K8sKind<'PodDisruptionBudget'>, replicas: number): number {
  const { minAvailable, maxUnavailable } = pdb.spec ?? {};
  if (typeof maxUnavailable === 'number') return Math.min(maxUnavailable, replicas);
  if (typeof minAvailable === 'number') return Math.max(replicas - minAvailable, 0);
  return Number.NaN;
}

/** An empty podSelector (`{}`) applies a NetworkPolicy to every pod of its namespace. */
export function selectsEveryPod(policy: K8sKind<'NetworkPolicy'>): boolean {
  const selector = policy.spec?.podSelector ?? {};
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}

/** A default-deny policy: every pod, both directions, and no rule that admits anything. */
export function isDefaultDeny(policy: K8sKind<'NetworkPolicy'>): boolean {
  return (
    selectsEveryPod(policy) &&
    [...(policy.spec?.policyTypes ?? [])].sort().join() === 'Egress,Ingress' &&
    (policy.spec?.ingress ?? []).length === 0 &&
    (policy.spec?.egress ?? []).length === 0
  );
}

/** One flow an egress rule opens: to whom (a peer, or `'anywhere'`), on which port and protocol (`'any'` port when the rule names none). */
export interface EgressFlow {
  to: networkingV1.INetworkPolicyPeer | 'anywhere';
  port: number | string;
  protocol: string;
}

/**
 * Every flow the egress rules of a policy open, one per peer and port: a rule without `to`
 * opens its ports to anywhere, a rule without `ports` every port to its peers; both are what a
 * reviewer wants to see spelled out, so they show as `'anywhere'` and `'any'`.
 */
export function egressFlows(policy: K8sKind<'NetworkPolicy'>): EgressFlow[] {
  return (policy.spec?.egress ?? []).flatMap((rule) => {
    const peers: EgressFlow['to'][] =
      rule.to === undefined || rule.to.length === 0 ? ['anywhere'] : rule.to;
    const ports =
      rule.ports === undefined || rule.ports.length === 0
        ? [{ port: 'any', protocol: 'any' }]
        : rule.ports.map((p) => ({ port: p.port ?? 'any', protocol: p.protocol ?? 'TCP' }));
    return peers.flatMap((to) =>
      ports.map((p) => ({ to, port: p.port, protocol: p.protocol }) as EgressFlow),
    );
  });
}

/** Volume kinds the Pod Security "restricted" profile allows. */
const RESTRICTED_VOLUMES = new Set([
  'name',
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

/**
 * What in a pod template the Pod Security "restricted" profile (as the API server's admission
 * enforces it on a namespace labelled `pod-security.kubernetes.io/enforce: restricted`) refuses:
 * host namespaces, privileged or escalating containers, capabilities beyond NET_BIND_SERVICE or
 * not dropping ALL, a root user, no RuntimeDefault/Localhost seccomp, non-allowed volume kinds.
 */
export function restrictedProblems(owner: K8sObject): string[] {
  const spec = (owner as K8sKind<'Deployment'>).spec?.template?.spec;
  const where = `${owner.kind}/${owner.metadata.name}`;
  if (!spec) return [`${where}: no pod template`];
  const problems: string[] = [];
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
    if (spec[field]) problems.push(`${where}: ${field}`);
  for (const volume of spec.volumes ?? [])
    for (const kind of Object.keys(volume))
      if (!RESTRICTED_VOLUMES.has(kind))
        problems.push(`${where}: volume ${volume.name} is ${kind}`);
  for (const c of [...(spec.initContainers ?? []), ...spec.containers])
    problems.push(
      ...restrictedContainerProblems(c, spec.securityContext ?? {}).map(
        (p) => `${where} container ${c.name}: ${p}`,
      ),
    );
  return problems;
}

/** The restricted profile's rules for one container, its pod's security context filling in what it leaves unset. */
function restrictedContainerProblems(c: K8sContainer, pod: coreV1.IPodSecurityContext): string[] {
  const sc = c.securityContext ?? {};
  const problems: string[] = [];
  if (sc.privileged) problems.push('privileged');
  if (sc.allowPrivilegeEscalation !== false) problems.push('allowPrivilegeEscalation is not false');
  if (!(sc.capabilities?.drop ?? []).includes('ALL'))
    problems.push('does not drop ALL capabilities');
  for (const cap of sc.capabilities?.add ?? [])
    if (cap !== 'NET_BIND_SERVICE') problems.push(`adds ${cap}`);
  if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) problems.push('runAsNonRoot is not true');
  if ((sc.runAsUser ?? pod.runAsUser) === 0) problems.push('runs as uid 0');
  const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
    problems.push(`seccomp profile ${seccomp ?? 'unset'}`);
  return problems;
}

/** Deployments an HPA scales that also set `replicas` (each `kubectl apply` would reset the HPA's count to it). */
export function replicasBesideAutoscaler(objects: K8sObject[]): string[] {
  const scaled = new Set(
    objectsOf(objects, 'HorizontalPodAutoscaler')
      .filter((h) => h.spec?.scaleTargetRef?.kind === 'Deployment')
      .map((h) => h.spec!.scaleTargetRef.name),
  );
  return objectsOf(objects, 'Deployment')
    .filter((d) => scaled.has(d.metadata.name) && d.spec?.replicas !== undefined)
    .map(
      (d) =>
        `Deployment/${d.metadata.name}: replicas ${d.spec!.replicas} beside the HPA that scales it`,
    );
}

/** An `images:` entry of a kustomization. */
export interface KustomizeImage {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/** The `images:` of a kustomization directory's kustomization.yaml. */
export function kustomizeImages(dir: string): KustomizeImage[] {
  const doc = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    images?: KustomizeImage[];
  };
  return doc.images ?? [];
}

/** Every container image of every Deployment and Job (init containers too), with where it is. */
export function containerImages(objects: K8sObject[]): Array<{ where: string; image: string }> {
  return podTemplates(objects).flatMap(({ owner }) => {
    const spec = (owner as K8sKind<'Deployment'>).spec?.template?.spec;
    return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => ({
      where: `${owner.kind}/${owner.metadata.name} container ${c.name}`,
      image: c.image ?? '',
    }));
  });
}

/**
 * Images named anywhere but the kustomization's `images:`: each rendered container image must
 * be exactly what one entry makes of the base's name (newName, newTag or digest), and no file of
 * the overlay but kustomization.yaml may mention an image (a patch that sets `image:` would
 * bypass the one place a release writes).
 */
export function imagesNotFromOnePlace(dir: string, objects: K8sObject[]): string[] {
  const entries = kustomizeImages(dir);
  const expected = new Set(
    entries.map((e) => {
      const name = e.newName ?? e.name;
      return e.digest ? `${name}@${e.digest}` : `${name}:${e.newTag ?? 'latest'}`;
    }),
  );
  const problems = containerImages(objects)
    .filter(({ image }) => !expected.has(image))
    .map(({ where, image }) => `${where}: image ${image} is not from the kustomization's images:`);
  for (const file of readdirSync(dir)) {
    if (file === 'kustomization.yaml' || !/\.ya?ml$/.test(file)) continue;
    if (
      /^\s*(-\s*)?image:|\/image"?\s*$|path:\s*\S*\/image\b/m.test(
        readFileSync(join(dir, file), 'utf8'),
      )
    )
      problems.push(`${file}: sets an image outside images:`);
  }
  return problems;
}
