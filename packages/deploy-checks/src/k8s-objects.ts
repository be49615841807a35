/**
 * The rendered objects of a kustomization (`kubectl kustomize`, offline), their types, how a
 * check finds one, the pod templates of the workloads, and their validation against the
 * Kubernetes schemas (kubernetes-models).
 */
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

/** A workload's pod template: its owner, its labels and its containers. */
export interface PodTemplate {
  owner: K8sObject;
  labels: Record<string, string>;
  containers: K8sContainer[];
}

/** Workloads whose pod template carries labels: Deployments and Jobs. */
export function podTemplates(objects: K8sObject[]): PodTemplate[] {
  return objects
    .filter((o): o is K8sKind<'Deployment' | 'Job'> => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => ({
      owner: o,
      labels: o.spec?.template?.metadata?.labels ?? {},
      containers: o.spec?.template?.spec?.containers ?? [],
    }));
}
