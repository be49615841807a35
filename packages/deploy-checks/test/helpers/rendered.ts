// The kustomizations as `kubectl kustomize` renders them, once per test file that reads them.
import { join } from 'node:path';
import {
  find,
  renderKustomization,
  type K8sContainer,
  type K8sObject,
} from '../../src/k8s-objects.js';
import { repoRoot } from '../../src/repo-paths.js';

const render = (dir: string) => renderKustomization(join(repoRoot, 'k8s', dir));

export const base = render('base');
export const OVERLAYS = { dev: render('overlays/dev'), prod: render('overlays/prod') };
export type OverlayName = keyof typeof OVERLAYS;
export const SECRET = 'plant-store-secrets';

/** The service's own container in its Deployment. */
export const containerOf = (objects: K8sObject[], service: string): K8sContainer =>
  find(objects, 'Deployment', service)!.spec!.template.spec!.containers.find(
    (c) => c.name === service,
  )!;

/** The ingress controller's namespace, as every NetworkPolicy that admits it names it. */
export const INGRESS_NAMESPACE = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
};
/** The monitoring namespace (Prometheus), the only peer of every management port. */
export const MONITORING_NAMESPACE = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
};
