import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingVariables } from '../src/config-requirements.js';
import { containerEnv } from '../src/k8s-env.js';
import {
  find,
  objectsOf,
  unknownFields,
  validateWithModels,
  type K8sContainer,
} from '../src/k8s-objects.js';
import { disruptionsAllowed } from '../src/k8s-production-rules.js';
import { crossReferences } from '../src/k8s-references.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { base, containerOf, OVERLAYS, SECRET } from './helpers/rendered.js';
import { requirementsOf } from './helpers/service-configs.js';

const baseSecretTemplate = find(base, 'Secret', SECRET)!;
/** The keys of the Secret a container's environment reads. */
const secretKeysReadBy = (container: K8sContainer): string[] =>
  (container.env ?? []).flatMap((e) =>
    e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : [],
  );

/** API groups of custom resources, which the API server's own models do not describe. */
const CUSTOM_RESOURCE_API = /^monitoring\.coreos\.com\//;

/** Variables whose URL carries credentials. */
const CREDENTIAL_URLS = ['DATABASE_URL', 'REDIS_URL'];
describe('k8s/base', () => {
  test('When the base is rendered, then the Secret is a template: every key the services read, no value', () => {
    expect(baseSecretTemplate.data).toBeUndefined();
    expect(Object.values(baseSecretTemplate.stringData!)).toEqual(
      Object.keys(baseSecretTemplate.stringData!).map(() => ''),
    );
    // A variable may come from a key named otherwise (each internal token is one key, read by its caller and the token service).
    const secretKeys = new Set(SERVICES.flatMap((s) => secretKeysReadBy(containerOf(base, s))));
    expect(secretKeys.size).toBeGreaterThanOrEqual(SERVICES.length * 3);
    expect(Object.keys(baseSecretTemplate.stringData!)).toEqual(
      expect.arrayContaining([...secretKeys]),
    );
  });

  test('When the internal API credentials are mapped, then each pod holds its own and no other: the Plant Store reads, account-admin manages, the token service knows both', () => {
    const internalTokens = (service: string) =>
      secretKeysReadBy(containerOf(base, service)).filter((key) => key.endsWith('_INTERNAL_TOKEN'));
    const envFrom = (service: string, name: string) =>
      containerOf(base, service).env!.find((e) => e.name === name)?.valueFrom?.secretKeyRef?.key;

    expect(internalTokens('plant-store')).toEqual(['PLANT_STORE_INTERNAL_TOKEN']);
    expect(internalTokens('account-admin')).toEqual(['ACCOUNT_ADMIN_INTERNAL_TOKEN']);
    expect(internalTokens('token-service').sort()).toEqual([
      'ACCOUNT_ADMIN_INTERNAL_TOKEN',
      'PLANT_STORE_INTERNAL_TOKEN',
    ]);
    expect(envFrom('plant-store', 'INTERNAL_API_TOKEN')).toBe('PLANT_STORE_INTERNAL_TOKEN');
    expect(envFrom('account-admin', 'INTERNAL_API_TOKEN')).toBe('ACCOUNT_ADMIN_INTERNAL_TOKEN');
    expect(envFrom('token-service', 'RESOURCE_SERVER_TOKENS')).toBe('PLANT_STORE_INTERNAL_TOKEN');
    expect(envFrom('token-service', 'ACCOUNT_ADMIN_TOKEN')).toBe('ACCOUNT_ADMIN_INTERNAL_TOKEN');
    for (const service of SERVICES) {
      // A pod that could call the API server could read the whole Secret, not only its keys.
      expect({
        service,
        automount: find(base, 'Deployment', service)!.spec!.template.spec!
          .automountServiceAccountToken,
      }).toEqual({ service, automount: false });
      // envFrom the Secret would hand a pod every key of it.
      expect(
        (containerOf(base, service).envFrom ?? []).filter(
          (from: { secretRef?: unknown }) => from.secretRef !== undefined,
        ),
      ).toEqual([]);
    }
    const dev = find(OVERLAYS.dev, 'Secret', SECRET)!.stringData as Record<string, string>;
    expect(dev.PLANT_STORE_INTERNAL_TOKEN).not.toBe(dev.ACCOUNT_ADMIN_INTERNAL_TOKEN);
  });
});

describe.each(Object.keys(OVERLAYS) as Array<keyof typeof OVERLAYS>)(
  'k8s/overlays/%s',
  (overlay) => {
    const objects = OVERLAYS[overlay];
    // prod leaves the Secret out (created out of band): its keys are the base template's.
    const outOfBand = find(objects, 'Secret', SECRET) ? [] : [baseSecretTemplate];
    // Custom resources (prod's PrometheusRule) have no model here: observability.test.ts checks
    // that one with promtool.
    const coreObjects = objects.filter((o) => !CUSTOM_RESOURCE_API.test(o.apiVersion));

    test('When rendered with kubectl kustomize, then it has every kind the platform needs, in one namespace', () => {
      const kinds = [...new Set(objects.map((o) => o.kind))].sort();
      expect(kinds).toEqual(
        expect.arrayContaining([
          'ConfigMap',
          'Deployment',
          'HorizontalPodAutoscaler',
          'Ingress',
          'Job',
          'Namespace',
          'NetworkPolicy',
          'PodDisruptionBudget',
          'Service',
        ]),
      );
      const namespaces = new Set(
        objects.filter((o) => o.kind !== 'Namespace').map((o) => o.metadata.namespace),
      );
      expect([...namespaces]).toEqual([objectsOf(objects, 'Namespace')[0]!.metadata.name]);
    });

    test('When every object is validated with kubernetes-models, then none has a type, required-field or enum error', () => {
      expect(coreObjects.flatMap(validateWithModels)).toEqual([]);
    });

    test('When every object goes through a @kubernetes/client-node round trip, then no field is unknown to the API', () => {
      expect(coreObjects.flatMap(unknownFields)).toEqual([]);
    });

    test('When cross-references are followed, then Services select existing pods and ports, Ingress backends name existing Service ports, and HPAs, PDBs and NetworkPolicies find their targets', () => {
      expect(crossReferences(objects)).toEqual([]);
    });

    test.each(SERVICES)(
      'When %s starts, then every variable its config requires, and every URL that defaults to this machine, comes from the ConfigMap or the Secret, and secrets only from the Secret',
      (service) => {
        const { env, problems } = containerEnv(containerOf(objects, service), objects, outOfBand);
        expect(problems).toEqual([]);
        const { required, loopbackDefaults, localhostDefaults } = requirementsOf(service);
        expect(
          missingVariables([...required, ...loopbackDefaults, ...localhostDefaults], env.keys()),
        ).toEqual([]);
        for (const name of [...required, ...loopbackDefaults, ...localhostDefaults]) {
          // Connection URLs carry credentials: the database's and Redis's come from the Secret, one per service.
          expect({ name, from: env.get(name)!.from }).toEqual({
            name,
            from:
              required.includes(name) || CREDENTIAL_URLS.includes(name) ? 'secret' : 'configMap',
          });
        }
        const key = service.toUpperCase().replace(/-/g, '_');
        expect(env.get('REDIS_URL')).toEqual({
          from: 'secret',
          name: SECRET,
          key: `${key}_REDIS_URL`,
        });
        expect(env.get('DATABASE_URL')).toEqual({
          from: 'secret',
          name: SECRET,
          key: `${key}_DATABASE_URL`,
        });
      },
    );

    test('When the ConfigMap is read, then it holds no connection URL (they carry credentials)', () => {
      const config = find(objects, 'ConfigMap', 'plant-store-config')!.data as Record<
        string,
        string
      >;
      expect(Object.keys(config).filter((k) => CREDENTIAL_URLS.includes(k))).toEqual([]);
    });

    test.each(SERVICES)(
      'When %s is deployed, then its HPA keeps >= 2 replicas, and it has its public port, requests and limits, a restricted read-only security context and a preStop delay',
      (service) => {
        const deployment = find(objects, 'Deployment', service)!;
        const container = containerOf(objects, service);
        // The HPA owns the count (k8s-production.test.ts): no replicas of the Deployment's own.
        expect(deployment.spec!.replicas).toBeUndefined();
        expect(container.ports!.find((p) => p.name === 'http')!.containerPort).toBe(
          requirementsOf(service).defaults.PORT,
        );
        expect(Object.keys(container.resources!).sort()).toEqual(['limits', 'requests']);
        expect(Object.keys(container.resources!.requests!).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources!.limits!).sort()).toEqual(['cpu', 'memory']);
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(deployment.spec!.template.spec!.securityContext).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 1000,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(container.lifecycle!.preStop!.exec!.command).toEqual(['sleep', '5']);
        expect(deployment.spec!.template.spec!.terminationGracePeriodSeconds).toBeGreaterThan(5);
        const hpa = objectsOf(objects, 'HorizontalPodAutoscaler').find(
          (h) => h.spec.scaleTargetRef.name === service,
        )!;
        expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
        // A drain takes one replica at a time, and never the last (prod: maxUnavailable 1, whatever the HPA scaled it to).
        expect(
          disruptionsAllowed(find(objects, 'PodDisruptionBudget', service)!, hpa.spec.minReplicas!),
        ).toBe(1);
      },
    );

    test('When the Ingress routes, then each service has its own host, the token service exposes only /realms/ and /secret-scanning/ on its public port, and the public URLs in the ConfigMap are those hosts', () => {
      const [ingress, ...others] = objectsOf(objects, 'Ingress');
      expect(others).toEqual([]);
      const routes = ingress!.spec!.rules!.flatMap((r) =>
        r.http!.paths.map((p) => ({
          host: r.host,
          path: p.path,
          service: p.backend.service!.name,
          port: p.backend.service!.port,
        })),
      );
      const config = find(objects, 'ConfigMap', 'plant-store-config')!.data!;
      const hostOf = (service: string) =>
        routes.filter((r) => r.service === service).map((r) => r.host);
      expect(hostOf('plant-store')).toEqual([new URL(config.PUBLIC_URL!).host]);
      expect([...new Set(hostOf('token-service'))]).toEqual([new URL(config.AUTH_URL!).host]);
      expect(hostOf('account-admin')).toEqual([new URL(config.PORTAL_URL!).host]);
      expect(new Set(routes.map((r) => r.host)).size).toBe(3);
      expect(routes.filter((r) => r.service === 'token-service')).toEqual(
        ['/realms/', '/secret-scanning/'].map((path) => ({
          host: new URL(config.AUTH_URL!).host,
          path,
          service: 'token-service',
          port: { name: 'http' },
        })),
      );
      expect(config.AUTH_INTERNAL_URL).toBe(
        `http://token-service:${requirementsOf('token-service').defaults.PORT}`,
      );
      expect(config.PLANT_STORE_AUDIENCE).toBe(config.PUBLIC_URL);
      expect(config.ACCOUNT_ADMIN_AUDIENCE).toBe(config.PORTAL_URL);
    });

    test('When the migration Job runs, then each service image runs its own migrate command with its own database URL from the Secret', () => {
      const job = find(objects, 'Job', 'migrate')!;
      const containers = job.spec!.template.spec!.containers as Array<{
        name: string;
        image: string;
        command: string[];
      }>;
      expect(containers.map((c) => c.name).sort()).toEqual([...SERVICES].sort());
      for (const container of containers) {
        expect(container.command).toEqual(['node', 'dist/migrate.js']);
        expect(container.image).toBe(containerOf(objects, container.name).image);
        const { env, problems } = containerEnv(container, objects, outOfBand);
        expect(problems).toEqual([]);
        expect(env.get('DATABASE_URL')).toEqual({
          from: 'secret',
          name: SECRET,
          key: `${container.name.toUpperCase().replace(/-/g, '_')}_DATABASE_URL`,
        });
        expect(
          containerEnv(containerOf(objects, container.name), objects, outOfBand).env.get(
            'DATABASE_URL',
          ),
        ).toEqual(env.get('DATABASE_URL'));
      }
    });
  },
);

describe('overlay differences', () => {
  test('When prod is rendered, then the Secret template is left out (real secrets are never overwritten), images come from the registry at the release tag (the root package.json version), and dev secrets are dev-only values', () => {
    expect(find(OVERLAYS.prod, 'Secret', SECRET)).toBeUndefined();
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    for (const service of SERVICES) {
      expect(containerOf(OVERLAYS.prod, service).image).toBe(
        `registry.example.com/plant/${service}:${version}`,
      );
      expect(containerOf(OVERLAYS.dev, service).image).toBe(`plant/${service}:dev`);
    }
    const devSecret = find(OVERLAYS.dev, 'Secret', SECRET)!;
    for (const [key, value] of Object.entries(devSecret.stringData as Record<string, string>)) {
      const readable =
        key === 'KEY_ENCRYPTION_KEY' ? Buffer.from(value, 'base64').toString('utf8') : value;
      expect({ key, devOnly: readable.includes('dev-only') }).toEqual({ key, devOnly: true });
    }
  });
});

describe('dev database URLs', () => {
  test('When the dev Secret names the database roles, then each service has its own, the one deploy/postgres/init-roles.sh creates by default', () => {
    const init = readFileSync(join(repoRoot, 'deploy/postgres/init-roles.sh'), 'utf8');
    const devSecret = find(OVERLAYS.dev, 'Secret', SECRET)!.stringData as Record<string, string>;
    const users = SERVICES.map((service) => {
      const prefix = service.toUpperCase().replace(/-/g, '_');
      const user = new URL(devSecret[`${prefix}_DATABASE_URL`]!).username;
      expect(init).toContain(`\${${prefix}_DB_ROLE:-${user}}`);
      return user;
    });
    expect(new Set(users).size).toBe(SERVICES.length);
  });
});

describe('k8s checks catch mistakes', () => {
  const deployment = find(OVERLAYS.dev, 'Deployment', 'plant-store')!;

  test('When a field is misspelled, then the client-node round trip reports it', () => {
    const broken = structuredClone(deployment);
    const container = broken.spec!.template.spec!.containers[0]!;
    // Fields the API does not have, so the types do not have them either.
    Object.assign(container, { readinesProbe: container.readinessProbe });
    Object.assign(broken.spec!.strategy!.rollingUpdate!, { maxSurged: 1 });
    expect(unknownFields(broken)).toEqual([
      'Deployment/plant-store: unknown field spec.strategy.rollingUpdate.maxSurged',
      'Deployment/plant-store: unknown field spec.template.spec.containers[0].readinesProbe',
    ]);
  });

  test('When an enum value or a type is wrong, then kubernetes-models reports it', () => {
    const broken = structuredClone(deployment);
    // A value outside the enum, which the types would refuse.
    Object.assign(broken.spec!.template.spec!.containers[0]!, { imagePullPolicy: 'Sometimes' });
    expect(validateWithModels(broken)).toEqual([
      'Deployment/plant-store: data/spec/template/spec/containers/0/imagePullPolicy must be equal to one of the allowed values',
    ]);
  });

  test('When a Service selects no pods and an Ingress names a missing port, then the cross-references report both', () => {
    const objects = structuredClone(OVERLAYS.dev);
    find(objects, 'Service', 'plant-store')!.spec!.selector!['app.kubernetes.io/name'] =
      'plant-stor';
    find(objects, 'Ingress', 'plant-store')!.spec!.rules![2]!.http!.paths[0]!.backend
      .service!.port = { name: 'internal' };
    expect(crossReferences(objects)).toEqual([
      'Service/plant-store: selects no pods',
      'Ingress/plant-store: portal.localhost/ names port {"name":"internal"} that Service/account-admin lacks',
    ]);
  });

  test('When a secret reference names a missing key, then the env check reports it', () => {
    const container = structuredClone(containerOf(OVERLAYS.dev, 'token-service'));
    container.env!.find((e) => e.name === 'SECRET_PEPPER')!.valueFrom!.secretKeyRef!.key = 'PEPPER';
    expect(containerEnv(container, OVERLAYS.dev).problems).toEqual([
      `token-service: SECRET_PEPPER comes from Secret/${SECRET} key PEPPER, which it lacks`,
    ]);
  });
});
