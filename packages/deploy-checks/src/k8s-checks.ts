import { execFileSync } from 'node:child_process';
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
  [key: string]: any; // eslint-disable-line @typescript-eslint/no-explicit-any
};

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

export const objectsOf = (objects: K8sObject[], kind: string) =>
  objects.filter((o) => o.kind === kind);
export const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** Workloads whose pod template carries labels: Deployments and Jobs. */
function podTemplates(
  objects: K8sObject[],
): Array<{ owner: K8sObject; labels: Record<string, string>; containers: any[] }> {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
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
  const problems: string[] = [];
  const pods = podTemplates(objects);
  for (const deployment of objectsOf(objects, 'Deployment')) {
    if (
      !selects(deployment.spec?.selector?.matchLabels, deployment.spec?.template?.metadata?.labels)
    ) {
      problems.push(
        `Deployment/${deployment.metadata.name}: selector does not match its pod template`,
      );
    }
  }
  for (const service of objectsOf(objects, 'Service')) {
    const selected = pods.filter((p) => selects(service.spec?.selector, p.labels));
    if (selected.length === 0) {
      problems.push(`Service/${service.metadata.name}: selects no pods`);
      continue;
    }
    for (const port of service.spec?.ports ?? []) {
      const target = port.targetPort ?? port.port;
      const served = selected.every((p) =>
        p.containers.some((c: any) =>
          (c.ports ?? []).some((cp: any) =>
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
  for (const ingress of objectsOf(objects, 'Ingress')) {
    for (const rule of ingress.spec?.rules ?? []) {
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend?.service;
        const service = backend && find(objects, 'Service', backend.name);
        if (!service) {
          problems.push(
            `Ingress/${ingress.metadata.name}: ${rule.host}${path.path} routes to missing Service ${backend?.name}`,
          );
          continue;
        }
        const port = (service.spec?.ports ?? []).find((p: any) =>
          backend.port?.name !== undefined
            ? p.name === backend.port.name
            : p.port === backend.port?.number,
        );
        if (!port)
          problems.push(
            `Ingress/${ingress.metadata.name}: ${rule.host}${path.path} names port ${JSON.stringify(backend.port)} that Service/${service.metadata.name} lacks`,
          );
      }
    }
  }
  for (const hpa of objectsOf(objects, 'HorizontalPodAutoscaler')) {
    const ref = hpa.spec?.scaleTargetRef;
    if (!ref || !find(objects, ref.kind, ref.name))
      problems.push(
        `HorizontalPodAutoscaler/${hpa.metadata.name}: targets missing ${ref?.kind}/${ref?.name}`,
      );
  }
  for (const pdb of objectsOf(objects, 'PodDisruptionBudget')) {
    if (!pods.some((p) => selects(pdb.spec?.selector?.matchLabels, p.labels)))
      problems.push(`PodDisruptionBudget/${pdb.metadata.name}: selects no pods`);
  }
  for (const policy of objectsOf(objects, 'NetworkPolicy')) {
    if (!pods.some((p) => selects(policy.spec?.podSelector?.matchLabels, p.labels)))
      problems.push(`NetworkPolicy/${policy.metadata.name}: applies to no pods`);
    for (const rule of policy.spec?.ingress ?? []) {
      for (const peer of rule.from ?? []) {
        if (
          peer.podSelector &&
          !pods.some((p) => selects(peer.podSelector.matchLabels, p.labels))
        ) {
          problems.push(
            `NetworkPolicy/${policy.metadata.name}: a peer selects no pods (${JSON.stringify(peer.podSelector)})`,
          );
        }
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
  container: any,
  objects: K8sObject[],
  secrets: K8sObject[] = [],
): { env: Map<string, EnvSource>; problems: string[] } {
  const env = new Map<string, EnvSource>();
  const problems: string[] = [];
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string) =>
    find(objects, kind, name) ??
    (kind === 'Secret' ? secrets.find((s) => s.metadata.name === name) : undefined);
  const keysOf = (o: K8sObject) =>
    new Set([...Object.keys(o.data ?? {}), ...Object.keys(o.stringData ?? {})]);
  for (const from of container.envFrom ?? []) {
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const name = (from.configMapRef ?? from.secretRef)?.name;
    const source = lookup(kind, name);
    if (!source) {
      problems.push(`${container.name}: envFrom names missing ${kind}/${name}`);
      continue;
    }
    for (const key of keysOf(source))
      env.set(`${from.prefix ?? ''}${key}`, {
        from: kind === 'ConfigMap' ? 'configMap' : 'secret',
        name,
        key,
      });
  }
  for (const entry of container.env ?? []) {
    if (entry.valueFrom === undefined) {
      env.set(entry.name, { from: 'value' });
      continue;
    }
    const ref = entry.valueFrom.configMapKeyRef ?? entry.valueFrom.secretKeyRef;
    if (!ref) continue; // fieldRef / resourceFieldRef
    const kind = entry.valueFrom.configMapKeyRef ? 'ConfigMap' : 'Secret';
    const source = lookup(kind, ref.name);
    if (!source)
      problems.push(`${container.name}: ${entry.name} comes from missing ${kind}/${ref.name}`);
    else if (!keysOf(source).has(ref.key))
      problems.push(
        `${container.name}: ${entry.name} comes from ${kind}/${ref.name} key ${ref.key}, which it lacks`,
      );
    env.set(entry.name, {
      from: kind === 'ConfigMap' ? 'configMap' : 'secret',
      name: ref.name,
      key: ref.key,
    });
  }
  return { env, problems };
}

/** Who a NetworkPolicy peer is: a namespace, pods, an address block, or (no `from` at all) anyone. */
export type Admitted = Record<string, unknown> | 'anyone';

/**
 * Every peer a NetworkPolicy admits to a container port (known by its name and number): the
 * peers of each rule that names the port, or names no port at all (a rule without `ports`
 * admits every port), and `'anyone'` for a rule without `from`.
 */
export function admittedTo(
  policy: K8sObject,
  port: { name: string; containerPort: number },
): Admitted[] {
  const rules: any[] = policy.spec?.ingress ?? [];
  const covers = (rule: any) =>
    rule.ports === undefined ||
    rule.ports.some((p: any) => p.port === port.name || p.port === port.containerPort);
  return rules
    .filter(covers)
    .flatMap((rule) =>
      rule.from === undefined || rule.from.length === 0
        ? ['anyone' as const]
        : (rule.from as Admitted[]),
    );
}

/** How many pods of `replicas` a PodDisruptionBudget lets a drain take at once (integers only; a percentage is reported as NaN). */
export function disruptionsAllowed(pdb: K8sObject, replicas: number): number {
  const { minAvailable, maxUnavailable } = pdb.spec as {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
  };
  if (typeof maxUnavailable === 'number') return Math.min(maxUnavailable, replicas);
  if (typeof minAvailable === 'number') return Math.max(replicas - minAvailable, 0);
  return Number.NaN;
}
