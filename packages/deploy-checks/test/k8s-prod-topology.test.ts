/**
 * The prod overlay has the shape `pnpm test:topology` proves on this machine (packages/topology):
 * several replicas of each service spread over nodes and zones and taken one at a time by a
 * drain, Redis through Sentinel and Postgres through PgBouncer as configuration, migrations
 * straight to Postgres. Rendered offline with `kubectl kustomize`, as the other k8s checks.
 */
import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { parseSentinels } from '@plant/shared/redis';
import { containerEnv } from '../src/k8s-env.js';
import { find, objectsOf, renderKustomization, type K8sContainer } from '../src/k8s-objects.js';
import { disruptionsAllowed } from '../src/k8s-production-rules.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';

const prod = renderKustomization(join(repoRoot, 'k8s/overlays/prod'));
const base = renderKustomization(join(repoRoot, 'k8s/base'));
const secretTemplate = find(base, 'Secret', 'plant-store-secrets')!;
const config = find(prod, 'ConfigMap', 'plant-store-config')!.data as Record<string, string>;
const keyPrefix = (service: string) => service.toUpperCase().replace(/-/g, '_');
const envOf = (container: K8sContainer) => containerEnv(container, prod, [secretTemplate]);

describe('k8s/overlays/prod: replicas that survive a node', () => {
  test.each(SERVICES)(
    'When %s is scheduled, then its replicas (at least 2, as the HPA keeps them) prefer different nodes and spread over zones',
    (service) => {
      const deployment = find(prod, 'Deployment', service)!;
      const hpa = objectsOf(prod, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.name === service,
      )!;
      const pod = deployment.spec!.template.spec;
      const own = { matchLabels: { 'app.kubernetes.io/name': service } };

      expect(deployment.spec!.replicas).toBeUndefined();
      expect(hpa.spec!.minReplicas).toBeGreaterThanOrEqual(2);
      // Preferred, not required: the HPA may run more replicas than there are nodes.
      expect(pod!.affinity!.podAntiAffinity).toEqual({
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: own },
          },
        ],
      });
      expect(pod!.topologySpreadConstraints).toEqual([
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: own,
        },
      ]);
      expect(own.matchLabels).toEqual(
        expect.objectContaining({
          'app.kubernetes.io/name':
            deployment.spec!.selector.matchLabels!['app.kubernetes.io/name'],
        }),
      );
    },
  );

  test.each(SERVICES)(
    'When the nodes of %s are drained, then its PodDisruptionBudget lets one replica go at a time, however far the HPA scaled it',
    (service) => {
      const pdb = find(prod, 'PodDisruptionBudget', service)!;
      const hpa = objectsOf(prod, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.name === service,
      )!;

      expect([
        disruptionsAllowed(pdb, hpa.spec!.minReplicas!),
        disruptionsAllowed(pdb, hpa.spec.maxReplicas),
      ]).toEqual([1, 1]);
    },
  );
});

describe('k8s/overlays/prod: Redis through Sentinel, Postgres through PgBouncer', () => {
  test('When the ConfigMap is read, then it names the sentinels and their master group the way the services parse them, and the Plant Store runs unnamed statements (the pooler cannot carry named ones)', () => {
    expect(parseSentinels(config.REDIS_SENTINELS!).length).toBeGreaterThanOrEqual(3);
    expect(config.REDIS_SENTINEL_NAME).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(config.DATABASE_NAMED_STATEMENTS).toBe('false');
    // Connection URLs and passwords stay in the Secret.
    expect(
      Object.keys(config).filter(
        (key) =>
          /PASSWORD|_URL$/.test(key) &&
          ![
            'AUTH_URL',
            'PORTAL_URL',
            'PUBLIC_URL',
            'TOKEN_SERVICE_INTERNAL_URL',
            'AUTH_INTERNAL_URL',
          ].includes(key),
      ),
    ).toEqual([]);
  });

  test.each(SERVICES)(
    "When %s starts, then it reads the sentinels from the ConfigMap and the sentinels' password from the Secret, beside its own Redis credentials",
    (service) => {
      const container = find(prod, 'Deployment', service)!.spec!.template.spec!.containers.find(
        (c) => c.name === service,
      )!;
      const { env, problems } = envOf(container);

      expect(problems).toEqual([]);
      expect([env.get('REDIS_SENTINELS')?.from, env.get('REDIS_SENTINEL_NAME')?.from]).toEqual([
        'configMap',
        'configMap',
      ]);
      expect(env.get('REDIS_SENTINEL_PASSWORD')).toEqual({
        from: 'secret',
        name: 'plant-store-secrets',
        key: 'REDIS_SENTINEL_PASSWORD',
      });
      expect(env.get('REDIS_URL')).toEqual({
        from: 'secret',
        name: 'plant-store-secrets',
        key: `${keyPrefix(service)}_REDIS_URL`,
      });
    },
  );

  test('When the migration Job runs, then each container migrates straight to Postgres with its own MIGRATION_DATABASE_URL from the Secret, beside the DATABASE_URL its service reaches the pooler with', () => {
    const job = find(prod, 'Job', 'migrate')!;
    for (const container of job.spec!.template.spec!.containers) {
      const { env, problems } = envOf(container);
      expect(problems).toEqual([]);
      expect({ container: container.name, direct: env.get('MIGRATION_DATABASE_URL') }).toEqual({
        container: container.name,
        direct: {
          from: 'secret',
          name: 'plant-store-secrets',
          key: `${keyPrefix(container.name)}_MIGRATION_DATABASE_URL`,
        },
      });
      expect(env.get('DATABASE_URL')).toEqual({
        from: 'secret',
        name: 'plant-store-secrets',
        key: `${keyPrefix(container.name)}_DATABASE_URL`,
      });
    }
    // The services themselves never get the direct URL.
    for (const service of SERVICES) {
      const container = find(prod, 'Deployment', service)!.spec!.template.spec!.containers[0]!;
      expect(envOf(container).env.has('MIGRATION_DATABASE_URL')).toBe(false);
    }
  });
});
