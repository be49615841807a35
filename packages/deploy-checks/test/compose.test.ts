import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  commandOf,
  crossCheckCompose,
  dependsOnOf,
  buildOf,
  environmentOf,
  loadCompose,
  validateComposeSchema,
  type ComposeFile,
} from '../src/compose-checks.js';
import { missingVariables } from '../src/config-requirements.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { requirementsOf } from './helpers/service-configs.js';

const compose = loadCompose(join(repoRoot, 'docker-compose.yml'));
const clone = (): ComposeFile => structuredClone(compose);
const buildsService = (name: string) => buildOf(compose.services[name]!);

describe('docker-compose.yml against the compose-spec schema', () => {
  test('When the file is validated against the schema dclint bundles, then there is no error', () => {
    expect(validateComposeSchema(compose)).toEqual([]);
  });

  test('When a service has a key the spec does not know or a wrong type, then the schema check reports both', () => {
    const broken = clone();
    broken.services.redis!.healtcheck = { test: ['CMD', 'true'] };
    broken.services.postgres!.restart = 5 as never;
    expect(validateComposeSchema(broken)).toEqual([
      '/services/postgres/restart: must be string {"type":"string"}',
      '/services/redis: must NOT have additional properties {"additionalProperty":"healtcheck"}',
    ]);
  });
});

describe('docker-compose.yml cross-checks', () => {
  test('When references are checked, then every depends_on target exists, waits are satisfiable, volumes are declared and bind sources exist', () => {
    expect(crossCheckCompose(compose, repoRoot)).toEqual([]);
  });

  test('When a dependency, a volume, a health check and a build target go missing, then the cross-check names each', () => {
    const broken = clone();
    broken.services['plant-store']!.depends_on = {
      'plant-stor-migrate': { condition: 'service_completed_successfully' },
      redis: { condition: 'service_healthy' },
    };
    delete broken.services.redis!.healthcheck;
    broken.volumes = {};
    broken.services.seed!.volumes = ['./deploy/compose/missing.sh:/seed/seed-demo.sh:ro'];
    broken.services['account-admin-migrate']!.build = {
      context: '.',
      target: 'account-admin-migrate',
    };
    expect(crossCheckCompose(broken, repoRoot).sort()).toEqual(
      [
        'account-admin: waits for redis to be healthy, but redis has no healthcheck',
        'account-admin-migrate: builds target account-admin-migrate, which Dockerfile does not define',
        'plant-store: depends_on names "plant-stor-migrate", which is not a service',
        'plant-store: waits for redis to be healthy, but redis has no healthcheck',
        'postgres: volume "pgdata" is not declared under top-level volumes',
        'seed: bind mount source ./deploy/compose/missing.sh does not exist',
        'token-service: waits for redis to be healthy, but redis has no healthcheck',
      ].sort(),
    );
  });

  test.each(SERVICES)(
    'When %s runs, then its environment sets every variable its config schema requires and every back-end URL that defaults to 127.0.0.1',
    (service) => {
      const spec = compose.services[service]!;
      expect(buildsService(service)).toEqual({ dockerfile: 'Dockerfile', target: service });
      expect(commandOf(spec)).toBeUndefined();
      const { required, loopbackDefaults } = requirementsOf(service);
      expect(required.length).toBeGreaterThan(0);
      expect(
        missingVariables([...required, ...loopbackDefaults], environmentOf(spec).keys()),
      ).toEqual([]);
    },
  );

  test.each(SERVICES)(
    'When %s runs, then it listens on its contract port, publishes exactly that port on loopback only, says it is a development run and is checked through /healthz on its unpublished management port',
    (service) => {
      const spec = compose.services[service]!;
      const { defaults } = requirementsOf(service);
      const contractPort = defaults.PORT;
      expect(environmentOf(spec).get('PORT')).toBe(String(contractPort));
      expect(spec.ports).toEqual([`127.0.0.1:${contractPort}:${contractPort}`]);
      // Its secrets are public development values: only a development run accepts them.
      expect(environmentOf(spec).get('NODE_ENV')).toBe('development');
      // The public port 404s the probes: the check asks the management port, inside the container.
      // It listens on the compose network for Prometheus (observability profile), never published.
      expect(environmentOf(spec).get('MANAGEMENT_PORT')).toBe(String(defaults.MANAGEMENT_PORT));
      expect(environmentOf(spec).get('MANAGEMENT_HOST')).toBe('0.0.0.0');
      expect(spec.healthcheck?.test).toEqual([
        'CMD',
        'node',
        '-e',
        expect.stringContaining(
          "fetch('http://127.0.0.1:' + process.env.MANAGEMENT_PORT + '/healthz')",
        ),
      ]);
      expect(JSON.stringify([spec.ports, spec.expose ?? []])).not.toContain(
        String(defaults.MANAGEMENT_PORT),
      );
      expect(dependsOnOf(spec).get('postgres')).toBe('service_healthy');
      expect(dependsOnOf(spec).get('redis')).toBe('service_healthy');
      // Redis asks for a password, and the service's URL carries it.
      const password = /--requirepass\s+(\S+)/.exec(
        (compose.services.redis!.command as string[]).join(' '),
      )?.[1];
      expect(password).toBeDefined();
      expect(new URL(environmentOf(spec).get('REDIS_URL')!).password).toBe(password);
    },
  );

  test('When the token service runs, then its internal API port is reachable by the other containers but never published', () => {
    const spec = compose.services['token-service']!;
    const internalPort = String(requirementsOf('token-service').defaults.INTERNAL_PORT);
    expect(environmentOf(spec).get('INTERNAL_PORT')).toBe(internalPort);
    expect(JSON.stringify(spec.ports)).not.toContain(internalPort);
    for (const service of ['plant-store', 'account-admin']) {
      expect(environmentOf(compose.services[service]!).get('TOKEN_SERVICE_INTERNAL_URL')).toBe(
        `http://token-service:${internalPort}`,
      );
    }
  });

  test('When account-admin talks to the token service server-side, then it uses the container address, not the browser one', () => {
    const tokenPort = requirementsOf('token-service').defaults.PORT;
    const env = environmentOf(compose.services['account-admin']!);
    expect(requirementsOf('account-admin').keys).toContain('AUTH_INTERNAL_URL');
    expect(env.get('AUTH_INTERNAL_URL')).toBe(`http://token-service:${tokenPort}`);
    expect(env.get('AUTH_URL')).toBe(`http://localhost:${tokenPort}`);
  });

  test.each(SERVICES)(
    'When %s starts, then it waits for its own migration one-shot (same image, node dist/migrate.js) to complete',
    (service) => {
      const migrate = compose.services[`${service}-migrate`]!;
      expect(migrate).toBeDefined();
      expect(buildsService(`${service}-migrate`)).toEqual({
        dockerfile: 'Dockerfile',
        target: service,
      });
      expect(migrate.image).toBe(compose.services[service]!.image);
      expect(commandOf(migrate)).toEqual(['node', 'dist/migrate.js']);
      expect(environmentOf(migrate).get('DATABASE_URL')).toBe(
        environmentOf(compose.services[service]!).get('DATABASE_URL'),
      );
      expect(dependsOnOf(migrate).get('postgres')).toBe('service_healthy');
      expect(dependsOnOf(compose.services[service]!).get(`${service}-migrate`)).toBe(
        'service_completed_successfully',
      );
    },
  );

  test('When the services connect to Postgres, then each uses its own role, created by the init script with the password compose gives it', () => {
    const postgres = compose.services.postgres!;
    const pgEnv = environmentOf(postgres);
    const init = readFileSync(join(repoRoot, 'deploy/postgres/init-roles.sh'), 'utf8');
    expect(postgres.volumes).toContain(
      './deploy/postgres/init-roles.sh:/docker-entrypoint-initdb.d/10-init-roles.sh:ro',
    );
    const roles = SERVICES.map((service) => {
      const url = new URL(environmentOf(compose.services[service]!).get('DATABASE_URL')!);
      const prefix = service.toUpperCase().replace(/-/g, '_');
      expect(init).toContain(`\${${prefix}_DB_ROLE:-${url.username}}`);
      expect(pgEnv.get(`${prefix}_DB_PASSWORD`)).toBe(decodeURIComponent(url.password));
      expect(url.hostname).toBe('postgres');
      expect(url.pathname).toBe(`/${pgEnv.get('POSTGRES_DB')}`);
      return url.username;
    });
    expect(new Set(roles).size).toBe(SERVICES.length);
  });

  test('When the internal API credentials are read, then each caller holds its own and no other, and the token service knows both', () => {
    const env = (service: string) => environmentOf(compose.services[service]!);
    const plantStore = env('plant-store').get('INTERNAL_API_TOKEN');
    const accountAdmin = env('account-admin').get('INTERNAL_API_TOKEN');

    expect(plantStore).toBeDefined();
    expect(accountAdmin).toBeDefined();
    expect(plantStore).not.toBe(accountAdmin);
    expect(env('token-service').get('RESOURCE_SERVER_TOKENS')).toBe(plantStore);
    expect(env('token-service').get('ACCOUNT_ADMIN_TOKEN')).toBe(accountAdmin);
    for (const [name, spec] of Object.entries(compose.services)) {
      const holds = [...environmentOf(spec)]
        .filter(([, value]) => value === plantStore || value === accountAdmin)
        .map(([key]) => key);
      const allowed =
        {
          'token-service': ['RESOURCE_SERVER_TOKENS', 'ACCOUNT_ADMIN_TOKEN'],
          'plant-store': ['INTERNAL_API_TOKEN'],
          'account-admin': ['INTERNAL_API_TOKEN'],
        }[name] ?? [];
      expect({ name, holds: holds.sort() }).toEqual({ name, holds: [...allowed].sort() });
    }
  });

  test('When the secrets in the file are read, then every one is marked as a development-only value', () => {
    const secretNames = new Set(SERVICES.flatMap((service) => requirementsOf(service).required));
    const values = Object.entries(compose.services).flatMap(([, spec]) =>
      [...environmentOf(spec)]
        .filter(([name]) => secretNames.has(name) || /PASSWORD/.test(name))
        .map(([name, value]) => ({ name, value })),
    );
    expect(values.length).toBeGreaterThan(secretNames.size);
    for (const { name, value } of values) {
      const readable =
        name === 'KEY_ENCRYPTION_KEY' ? Buffer.from(value!, 'base64').toString('utf8') : value;
      expect({ name, devOnly: /dev-only/.test(readable ?? '') }).toEqual({ name, devOnly: true });
    }
  });

  test('When everything is healthy, then the seed creates tenant demo with an Account Admin and prints the sign-in URL, email and password', () => {
    const seed = compose.services.seed!;
    const env = environmentOf(seed);
    expect(env.get('DEMO_TENANT')).toBe('demo');
    expect(env.get('PORTAL_URL')).toBe('http://localhost:8083');
    for (const service of SERVICES) expect(dependsOnOf(seed).get(service)).toBe('service_healthy');
    expect(seed.restart).toBe('no');
    expect(commandOf(seed)).toEqual(['sh', '/seed/seed-demo.sh']);
    const script = readFileSync(join(repoRoot, 'deploy/compose/seed-demo.sh'), 'utf8');
    // The password on standard input, never an argument (docs/deploy.md).
    expect(script).toContain(
      `printf '%s' "$DEMO_ADMIN_PASSWORD" | node dist/cli.js tenant create "$DEMO_TENANT" --admin-email "$DEMO_ADMIN_EMAIL" --admin-password-file - --admin-factor optional`,
    );
    expect(script).not.toMatch(/--admin-password "/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose variable syntax, literal on purpose
    expect(script).toContain('${PORTAL_URL}/login?tenant=${DEMO_TENANT}');
    expect(script).toMatch(/email: +\$\{DEMO_ADMIN_EMAIL\}/);
    expect(script).toMatch(/password: +\$\{DEMO_ADMIN_PASSWORD\}/);
    expect(
      missingVariables(['DATABASE_URL', 'KEY_ENCRYPTION_KEY', 'REDIS_URL', 'AUTH_URL'], env.keys()),
    ).toEqual([]);
  });
});
