/**
 * The production checklist, read against the rendered overlays: replicas owned by the HPA, a
 * startupProbe, Pod Security "restricted", default-deny NetworkPolicies with exactly the flows
 * each workload needs (ingress in k8s-network.test.ts, egress here), a scrape target for every
 * management port, and the images named in one place (`images:` of the kustomization).
 */
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imagesNotFromOnePlace } from '../src/k8s-images.js';
import { egressFlows, isDefaultDeny, type EgressFlow } from '../src/k8s-network-policies.js';
import { find, objectsOf, type K8sKind, type K8sObject } from '../src/k8s-objects.js';
import { replicasBesideAutoscaler, restrictedProblems } from '../src/k8s-production-rules.js';
import { repoRoot, SERVICES, type ServiceName } from '../src/repo-paths.js';
import { base, containerOf, OVERLAYS, type OverlayName } from './helpers/rendered.js';
import { requirementsOf } from './helpers/service-configs.js';

const pods = (name: string) => ({
  podSelector: { matchLabels: { 'app.kubernetes.io/name': name } },
});
const DNS = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
  podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
};
const flow = (to: EgressFlow['to'], port: number, protocol = 'TCP'): EgressFlow => ({
  to,
  port,
  protocol,
});
const dns = [flow(DNS, 53, 'UDP'), flow(DNS, 53, 'TCP')];
/** Public addresses only: every IPv4 address but the private, loopback, link-local and shared ranges. */
const PUBLIC_IPV4 = {
  ipBlock: {
    cidr: '0.0.0.0/0',
    except: [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '100.64.0.0/10',
      '127.0.0.0/8',
      '169.254.0.0/16',
    ],
  },
};
const INTERNAL_PORT = requirementsOf('token-service').defaults.INTERNAL_PORT as number;
const TOKEN_PUBLIC_PORT = requirementsOf('token-service').defaults.PORT as number;

/** What each workload may reach, per overlay: dev talks to Postgres and Redis; prod to PgBouncer and Redis's sentinels too. */
function expectedEgress(overlay: OverlayName, workload: ServiceName | 'migrate'): EgressFlow[] {
  const postgres = flow(pods('postgres'), 5432);
  const database = overlay === 'prod' ? flow(pods('pgbouncer'), 6432) : postgres;
  const redis = [
    flow(pods('redis'), 6379),
    ...(overlay === 'prod' ? [flow(pods('redis-sentinel'), 26379)] : []),
  ];
  const own: Record<ServiceName | 'migrate', EgressFlow[]> = {
    migrate: [...dns, postgres],
    'plant-store': [...dns, database, flow(pods('token-service'), INTERNAL_PORT), ...redis],
    'account-admin': [
      ...dns,
      database,
      flow(pods('token-service'), INTERNAL_PORT),
      flow(pods('token-service'), TOKEN_PUBLIC_PORT),
      ...redis,
    ],
    'token-service': [...dns, database, flow(PUBLIC_IPV4, 443), ...redis],
  };
  return own[workload];
}

const sortFlows = (flows: EgressFlow[]) =>
  [...flows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The policies that apply to a workload's pods (by its name label), the namespace-wide ones left out. */
const policiesFor = (objects: K8sObject[], name: string) =>
  objectsOf(objects, 'NetworkPolicy').filter(
    (p) => p.spec?.podSelector?.matchLabels?.['app.kubernetes.io/name'] === name,
  );

describe.each(Object.keys(OVERLAYS) as OverlayName[])(
  'k8s/overlays/%s: production checklist',
  (overlay) => {
    const objects = OVERLAYS[overlay];
    const dir = join(repoRoot, 'k8s/overlays', overlay);

    test('When the Deployments are rendered, then none that an HPA scales sets replicas (every apply would reset the count), and each service has its HPA', () => {
      expect(replicasBesideAutoscaler(objects)).toEqual([]);
      for (const service of SERVICES)
        expect(
          objectsOf(objects, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name),
        ).toContain(service);
    });

    test.each(SERVICES)(
      'When %s starts, then a startupProbe on the management port holds its liveness probe back until it answers once, and liveness has no fixed delay of its own',
      (service) => {
        const container = containerOf(objects, service);
        expect(container.startupProbe!.httpGet).toEqual({ path: '/healthz', port: 'management' });
        expect(
          container.startupProbe!.periodSeconds! * container.startupProbe!.failureThreshold!,
        ).toBeGreaterThanOrEqual(30);
        expect(container.livenessProbe!.initialDelaySeconds).toBeUndefined();
      },
    );

    test('When the namespace is created, then Pod Security admission enforces, audits and warns on the restricted profile, and every pod template meets it', () => {
      const [namespace, ...others] = objectsOf(objects, 'Namespace');
      expect(others).toEqual([]);
      const labels = namespace!.metadata.labels!;
      for (const mode of ['enforce', 'audit', 'warn']) {
        expect(labels[`pod-security.kubernetes.io/${mode}`]).toBe('restricted');
        expect(labels[`pod-security.kubernetes.io/${mode}-version`]).toMatch(/^v1\.\d+$/);
      }
      const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
      expect(workloads.length).toBe(SERVICES.length + 1);
      expect(workloads.flatMap(restrictedProblems)).toEqual([]);
    });

    test('When the NetworkPolicies are read, then one denies every ingress and egress of every pod, and each workload has its own policy for both directions', () => {
      const policies = objectsOf(objects, 'NetworkPolicy');
      expect(policies.filter(isDefaultDeny).map((p) => p.metadata.name)).toEqual(['default-deny']);
      for (const workload of [...SERVICES, 'migrate']) {
        const own = policiesFor(objects, workload);
        expect({ workload, policies: own.length }).toEqual({ workload, policies: 1 });
        expect(own[0]!.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
      }
      // The migration Job accepts nothing at all.
      expect(policiesFor(objects, 'migrate')[0]!.spec!.ingress).toBeUndefined();
    });

    test.each([...SERVICES, 'migrate' as const])(
      'When %s connects out, then it reaches exactly DNS, its database, Redis and the peers it calls, nothing else',
      (workload) => {
        const [policy] = policiesFor(objects, workload);
        expect(sortFlows(egressFlows(policy!))).toEqual(
          sortFlows(expectedEgress(overlay, workload)),
        );
      },
    );

    test('When the images are named, then every container of every Deployment and Job takes its name and tag from the kustomization images:, and no other file of the overlay sets one', () => {
      expect(imagesNotFromOnePlace(dir, objects)).toEqual([]);
      const images = objects.flatMap((o) =>
        o.kind === 'Deployment' || o.kind === 'Job'
          ? ((o as K8sKind<'Deployment'>).spec!.template.spec!.containers.map((c) => c.image) ?? [])
          : [],
      );
      expect(images.length).toBe(SERVICES.length * 2);
    });
  },
);

describe('k8s/overlays/prod: a scrape target for every management port', () => {
  const prod = OVERLAYS.prod;
  const monitors = prod.filter((o) => o.kind === 'PodMonitor') as Array<
    K8sObject & {
      spec: {
        jobLabel?: string;
        selector: { matchExpressions?: Array<{ key: string; operator: string; values: string[] }> };
        podMetricsEndpoints: Array<{ port: string; path: string }>;
      };
    }
  >;
  const selects = (
    selector: (typeof monitors)[number]['spec']['selector'],
    labels: Record<string, string>,
  ) =>
    (selector.matchExpressions ?? []).every(
      (e) => e.operator === 'In' && e.values.includes(labels[e.key] ?? ''),
    );

  test.each(SERVICES)(
    'When Prometheus looks for %s, then a PodMonitor in its namespace selects its pods, scrapes /metrics on the management port, and labels the job with the service name',
    (service) => {
      const template = find(prod, 'Deployment', service)!.spec!.template;
      const labels = template.metadata!.labels as Record<string, string>;
      const scraping = monitors.filter((m) => selects(m.spec.selector, labels));
      expect(scraping).toHaveLength(1);
      const monitor = scraping[0]!;
      expect(monitor.metadata.namespace).toBe(
        find(prod, 'Deployment', service)!.metadata.namespace,
      );
      expect(monitor.spec.podMetricsEndpoints).toEqual([
        expect.objectContaining({ port: 'management', path: '/metrics' }),
      ]);
      expect(containerOf(prod, service).ports!.map((p) => p.name)).toContain('management');
      expect(labels[monitor.spec.jobLabel!]).toBe(service);
    },
  );

  test('When a PodMonitor is read, then it selects the services only, never the migration Job', () => {
    const job = find(prod, 'Job', 'migrate')!.spec!.template.metadata!.labels as Record<
      string,
      string
    >;
    expect(monitors.filter((m) => selects(m.spec.selector, job))).toEqual([]);
  });
});

describe('k8s production checks catch mistakes', () => {
  test('When a Deployment an HPA scales sets replicas, then the check names it', () => {
    const objects = structuredClone(base);
    find(objects, 'Deployment', 'plant-store')!.spec!.replicas = 3;
    expect(replicasBesideAutoscaler(objects)).toEqual([
      'Deployment/plant-store: replicas 3 beside the HPA that scales it',
    ]);
  });

  test('When a pod template escalates, keeps capabilities, runs as root or mounts the host, then the restricted check names each', () => {
    const deployment = structuredClone(find(base, 'Deployment', 'plant-store')!);
    const spec = deployment.spec!.template.spec!;
    spec.hostNetwork = true;
    spec.volumes!.push({ name: 'host', hostPath: { path: '/' } });
    delete spec.securityContext!.seccompProfile;
    spec.containers[0]!.securityContext = {
      allowPrivilegeEscalation: true,
      runAsUser: 0,
      capabilities: { add: ['SYS_ADMIN'] },
    };
    expect(restrictedProblems(deployment)).toEqual([
      'Deployment/plant-store: hostNetwork',
      'Deployment/plant-store: volume host is hostPath',
      'Deployment/plant-store container plant-store: allowPrivilegeEscalation is not false',
      'Deployment/plant-store container plant-store: does not drop ALL capabilities',
      'Deployment/plant-store container plant-store: adds SYS_ADMIN',
      'Deployment/plant-store container plant-store: runs as uid 0',
      'Deployment/plant-store container plant-store: seccomp profile unset',
    ]);
  });

  test('When an egress rule names no peer or no port, then its flows show as anywhere or any port', () => {
    const [policy] = policiesFor(structuredClone(base), 'plant-store');
    policy!.spec!.egress = [{ ports: [{ port: 443, protocol: 'TCP' }] }, { to: [pods('redis')] }];
    expect(egressFlows(policy!)).toEqual([
      { to: 'anywhere', port: 443, protocol: 'TCP' },
      { to: pods('redis'), port: 'any', protocol: 'any' },
    ]);
    // A namespace-wide policy that admits anything is no default-deny.
    const deny = structuredClone(find(base, 'NetworkPolicy', 'default-deny')!);
    expect(isDefaultDeny(deny)).toBe(true);
    deny.spec!.egress = [{}];
    expect(isDefaultDeny(deny)).toBe(false);
  });

  test('When a patch sets an image, or the images: entry is missing, then the one-place check names both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'images-'));
    try {
      const prodDir = join(repoRoot, 'k8s/overlays/prod');
      const kustomization = readFileSync(join(prodDir, 'kustomization.yaml'), 'utf8').replace(
        / {2}- name: plant\/account-admin\n {4}newName: .*\n {4}newTag: .*\n/,
        '',
      );
      writeFileSync(join(dir, 'kustomization.yaml'), kustomization);
      writeFileSync(
        join(dir, 'image-patch.yaml'),
        '- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: evil/x:1\n',
      );
      const problems = imagesNotFromOnePlace(dir, OVERLAYS.prod);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^Deployment\/account-admin container account-admin: image .* is not from/,
          ),
          'image-patch.yaml: sets an image outside images:',
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
