/**
 * References between rendered objects: what each selector, target port and backend names
 * exists.
 */
import type * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import { selectsEveryPod } from './k8s-network-policies.js';
import { find, objectsOf, podTemplates, type K8sObject, type PodTemplate } from './k8s-objects.js';

const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

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
