/**
 * Rules a production overlay keeps beyond its references: how many pods a drain may take, the
 * Pod Security "restricted" profile, and no `replicas` beside an autoscaler.
 */
import type * as coreV1 from 'kubernetes-models/v1';
import { objectsOf, type K8sContainer, type K8sKind, type K8sObject } from './k8s-objects.js';

/** How many pods of `replicas` a PodDisruptionBudget lets a drain take at once (integers only; a percentage is reported as NaN). */
export function disruptionsAllowed(pdb: K8sKind<'PodDisruptionBudget'>, replicas: number): number {
  const { minAvailable, maxUnavailable } = pdb.spec ?? {};
  if (typeof maxUnavailable === 'number') return Math.min(maxUnavailable, replicas);
  if (typeof minAvailable === 'number') return Math.max(replicas - minAvailable, 0);
  return Number.NaN;
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
