/**
 * What a NetworkPolicy lets through: the peers admitted to a port, the flows its egress rules
 * open, and whether it is a default deny.
 */
import type * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import type { K8sKind } from './k8s-objects.js';

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
