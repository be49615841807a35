/**
 * Where a container's environment comes from: literal values, ConfigMap and Secret keys, and
 * whether each reference resolves.
 */
import type * as coreV1 from 'kubernetes-models/v1';
import { find, type K8sContainer, type K8sObject } from './k8s-objects.js';

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
