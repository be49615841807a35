// Who may reach which port of each service (docs/deploy.md, trust boundaries): probes and metrics on a management port
// of their own that only the monitoring namespace (and the kubelet) reaches, public ports only
// from the ingress controller, the token service's internal API only from its callers.
import { describe, expect, test } from '@jest/globals';
import { admittedTo } from '../src/k8s-network-policies.js';
import { find, objectsOf, type K8sObject } from '../src/k8s-objects.js';
import { SERVICES, type ServiceName } from '../src/repo-paths.js';
import {
  containerOf,
  INGRESS_NAMESPACE,
  MONITORING_NAMESPACE,
  OVERLAYS,
  type OverlayName,
} from './helpers/rendered.js';
import { requirementsOf } from './helpers/service-configs.js';

type Port = { name: string; containerPort: number };
const portOf = (objects: K8sObject[], service: string, name: string): Port =>
  (containerOf(objects, service).ports as Port[]).find((p) => p.name === name)!;
const podsOf = (name: string) => ({
  podSelector: { matchLabels: { 'app.kubernetes.io/name': name } },
});
const policiesOf = (objects: K8sObject[], service: string) =>
  objectsOf(objects, 'NetworkPolicy').filter(
    (p) => p.spec!.podSelector!.matchLabels?.['app.kubernetes.io/name'] === service,
  );

/** Who may reach each service's public port: the ingress controller; the token service's also account-admin's back channel. */
const PUBLIC_PEERS: Record<ServiceName, unknown[]> = {
  'plant-store': [INGRESS_NAMESPACE],
  'token-service': [INGRESS_NAMESPACE, podsOf('account-admin')],
  'account-admin': [INGRESS_NAMESPACE],
};

describe.each(Object.keys(OVERLAYS) as OverlayName[])('k8s/overlays/%s', (overlay) => {
  const objects = OVERLAYS[overlay];
  const config = find(objects, 'ConfigMap', 'plant-store-config')!.data as Record<string, string>;

  test.each(SERVICES)(
    'When %s is deployed, then its probes and the Prometheus scrape point at its management port, open to the pod network, and no Service port names it',
    (service) => {
      const container = containerOf(objects, service);
      const management = portOf(objects, service, 'management');
      const annotations = find(objects, 'Deployment', service)!.spec!.template.metadata!
        .annotations as Record<string, string>;

      expect(management.containerPort).toBe(requirementsOf(service).defaults.MANAGEMENT_PORT);
      expect(container.env!.find((e) => e.name === 'MANAGEMENT_PORT')).toEqual({
        name: 'MANAGEMENT_PORT',
        value: String(management.containerPort),
      });
      // Loopback by default: the kubelet and Prometheus come from outside the pod.
      expect(container.envFrom).toEqual([{ configMapRef: { name: 'plant-store-config' } }]);
      expect(config.MANAGEMENT_HOST).toBe('0.0.0.0');
      expect(container.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: 'management' });
      expect(container.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'management' });
      expect(annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(management.containerPort),
        'prometheus.io/path': '/metrics',
      });
      // An Ingress routes to Service ports only: without one, no host of it can reach the management port.
      const servicePorts = find(objects, 'Service', service)!.spec!.ports as Array<{
        port: number;
        targetPort?: string | number;
      }>;
      expect(
        servicePorts.filter((p) =>
          [p.targetPort, p.port].some(
            (target) => target === 'management' || target === management.containerPort,
          ),
        ),
      ).toEqual([]);
    },
  );

  test.each(SERVICES)(
    'When the NetworkPolicy of %s is read, then only the monitoring namespace may reach its management port, and only the ingress controller (and a named back channel) its public port',
    (service) => {
      const policies = policiesOf(objects, service);
      expect(policies).toHaveLength(1);
      const policy = policies[0]!;

      expect(policy.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(admittedTo(policy, portOf(objects, service, 'management'))).toEqual([
        MONITORING_NAMESPACE,
      ]);
      // TRUST_PROXY trusts whoever connects to name the client's address: only these peers may connect.
      expect(Number(config.TRUST_PROXY)).toBeGreaterThan(0);
      expect(admittedTo(policy, portOf(objects, service, 'http'))).toEqual(PUBLIC_PEERS[service]);
    },
  );

  test('When the token service internal port is read, then only account-admin and plant-store pods may reach it, and its Service has the public and the internal port only', () => {
    const [policy] = policiesOf(objects, 'token-service');
    const internal = portOf(objects, 'token-service', 'internal');

    expect(internal.containerPort).toBe(requirementsOf('token-service').defaults.INTERNAL_PORT);
    expect(admittedTo(policy!, internal)).toEqual([podsOf('account-admin'), podsOf('plant-store')]);
    const service = find(objects, 'Service', 'token-service')!;
    expect(service.spec!.ports!.map((p) => [p.name, p.port])).toEqual([
      ['http', requirementsOf('token-service').defaults.PORT],
      ['internal', internal.containerPort],
    ]);
  });
});

describe('admittedTo catches a policy that opens a port by accident', () => {
  test('When a rule names no port or no peer, then it admits its peers to every port, or anyone to its ports', () => {
    const [policy] = policiesOf(structuredClone(OVERLAYS.dev), 'plant-store');
    const management = portOf(OVERLAYS.dev, 'plant-store', 'management');
    policy!.spec!.ingress!.push(
      { from: [INGRESS_NAMESPACE] },
      { ports: [{ port: management.containerPort, protocol: 'TCP' }] },
    );

    expect(admittedTo(policy!, management)).toEqual([
      MONITORING_NAMESPACE,
      INGRESS_NAMESPACE,
      'anyone',
    ]);
    expect(admittedTo(policy!, portOf(OVERLAYS.dev, 'plant-store', 'http'))).toEqual([
      INGRESS_NAMESPACE,
      INGRESS_NAMESPACE,
    ]);
  });
});
