/**
 * Every HTTP app of every service, built in-process by the code the service processes run, so
 * the route-table fuzzer reads the very tables the services answer with. Nothing is served
 * here: the dependencies are inert (any use throws), only the tables are read.
 */
import {
  createManagementApp,
  createMetricsRegistry,
  type HttpApp,
  type OpenAPIRegistry,
  type Route,
  type RouteConfig,
} from '@plant/shared/http';
import { createLogger } from '@plant/shared/logging';
import { accountAdminOperations } from '../../../../services/account-admin/src/http/openapi.js';
import { createApp as createAccountAdminApp } from '../../../../services/account-admin/src/http/server.js';
import { plantStoreOperations } from '../../../../services/plant-store/src/entry-points/api/openapi.js';
import { createApp as createPlantStoreApp } from '../../../../services/plant-store/src/entry-points/api/server.js';
import { createInternalApp } from '../../../../services/token-service/src/internal-app.js';
import { createPublicApp } from '../../../../services/token-service/src/public-app.js';
import type { Platform } from '../../src/index.js';

export interface ServiceApp {
  /** `<service>` or `<service> <listener>`. */
  name: string;
  /** The file that calls `createHttpApp` for it, from the repository root. */
  source: string;
  app: HttpApp;
  /** Where the platform serves it. */
  url(p: Platform): string;
  /** Where the process serving it exposes the metrics it records (its management port), when it records any. */
  metricsUrl?(p: Platform): string;
  /** Its OpenAPI operations, whose paths are relative to `base`. */
  documented?: { base: string; operations: OpenAPIRegistry };
}

/** A dependency that is never used while a table is built: any call on it throws, naming it. */
function inert<T>(name: string): T {
  const use = () => {
    throw new Error(`${name} was used while a route table was read`);
  };
  return new Proxy(use, {
    get: (_target, key) =>
      typeof key === 'symbol' || key === 'then' ? undefined : inert(`${name}.${key}`),
  }) as T;
}

/** The resource-server auth a table is built with: a read route wraps its handler at build time (the wrapper is inert); anything else as `inert`. */
function inertAuth<T extends object>(): T {
  const auth = inert<T>('auth');
  return new Proxy(auth, {
    get: (target, key) =>
      key === 'readHandler' ? () => inert('auth.readHandler(...)') : Reflect.get(target, key),
  });
}

const URL_OF_NOTHING = 'http://service.invalid';

export function serviceApps(): ServiceApp[] {
  const logger = createLogger({ name: 'route-tables', level: 'silent' });
  // One registry per app, as each process has its own.
  const metrics = () => createMetricsRegistry('route-tables');
  return [
    {
      name: 'plant-store',
      source: 'services/plant-store/src/entry-points/api/server.ts',
      app: createPlantStoreApp({
        plants: inert('plants'),
        auth: inertAuth(),
        logger,
        metrics: metrics(),
        publicUrl: URL_OF_NOTHING,
      }),
      url: (p) => p.plantStores[0]!.url,
      metricsUrl: (p) => p.plantStores[0]!.managementUrl,
      documented: { base: '', operations: plantStoreOperations() },
    },
    {
      name: 'token-service public',
      source: 'services/token-service/src/public-app.ts',
      app: createPublicApp({
        logger,
        metrics: metrics(),
        providers: inert('providers'),
        identity: inert('identity'),
        accessTokenTtl: 300,
        trustProxy: 0,
        signInStarts: inert('signInStarts'),
        interactions: {
          providers: inert('providers'),
          signIn: inert('signIn'),
          factors: inert('factors'),
          passkeys: inert('passkeys'),
          csrfKey: 'unused',
          portalUrl: URL_OF_NOTHING,
          logger,
        },
        invitationPage: {
          identity: inert('identity'),
          checkers: inert('checkers'),
          budget: inert('budget'),
          csrfKey: 'unused',
          portalUrl: URL_OF_NOTHING,
        },
        introspection: { authenticator: inert('authenticator'), inspector: inert('inspector') },
        signals: inert('signals'),
        secretScanning: { identity: inert('identity'), keys: inert('keys') },
      }),
      url: (p) => p.authUrl,
      metricsUrl: (p) => p.tokenService.managementUrl,
    },
    {
      name: 'token-service internal',
      source: 'services/token-service/src/internal-app.ts',
      app: createInternalApp({
        logger,
        identity: inert('identity'),
        credentials: {
          resourceServerTokens: ['unused-resource-server-token'],
          accountAdminToken: 'unused-account-admin-token',
        },
        accessTokenTtl: 300,
        invitations: { authUrl: URL_OF_NOTHING, ttlSeconds: 604_800 },
        exchangeAudiences: [URL_OF_NOTHING],
        announceKeyChange: inert('announceKeyChange'),
      }),
      url: (p) => p.internalUrl,
    },
    {
      name: 'account-admin',
      source: 'services/account-admin/src/http/server.ts',
      app: createAccountAdminApp({
        accounts: inert('accounts'),
        people: inert('people'),
        audit: inert('audit'),
        tokenService: inert('tokenService'),
        store: inert('store'),
        sessions: inert('sessions'),
        signInStarts: inert('signInStarts'),
        oidc: inert('oidc'),
        auth: inert('auth'),
        logger,
        metrics: metrics(),
        portalUrl: URL_OF_NOTHING,
        authUrl: URL_OF_NOTHING,
        audience: URL_OF_NOTHING,
        sessionSecret: 'unused',
        trustProxy: 0,
      }),
      url: (p) => p.portalUrl,
      metricsUrl: (p) => p.accountAdmin!.managementUrl,
      documented: { base: '/api/v1', operations: accountAdminOperations() },
    },
    // Every service's management port: one table (packages/shared), each process's own checks behind it.
    ...(['plant-store', 'token-service', 'account-admin'] as const).map((service) => ({
      name: `${service} management`,
      source: 'packages/shared/src/http/management-app.ts',
      app: createManagementApp({ logger, metrics: metrics(), readiness: {} }),
      url: (p: Platform) => managedProcess(p, service).managementUrl,
    })),
  ];
}

function managedProcess(p: Platform, service: 'plant-store' | 'token-service' | 'account-admin') {
  if (service === 'plant-store') return p.plantStores[0]!;
  return service === 'token-service' ? p.tokenService : p.accountAdmin!;
}

/** `METHOD /path`: how the fuzzer names a route. */
export const routeKey = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** An app's documented operations by route key (`GET /api/v1/audit-events`). */
export function documentedOperations(app: ServiceApp): Map<string, RouteConfig> {
  const byKey = new Map<string, RouteConfig>();
  for (const definition of app.documented?.operations.definitions ?? []) {
    if (definition.type !== 'route') continue;
    const { route } = definition;
    byKey.set(
      `${route.method.toUpperCase()} ${app.documented!.base}${route.path.replace(/\{([^}]+)\}/g, ':$1')}`,
      route,
    );
  }
  return byKey;
}

/** The query parameter and body field names an operation documents (from the zod objects it was registered with). */
export function documentedInput(operation: RouteConfig): { query: string[]; body: string[] } {
  const shapeOf = (schema: unknown) =>
    Object.keys((schema as { shape?: object } | undefined)?.shape ?? {});
  const body = (
    operation.request?.body?.content['application/json'] as { schema?: unknown } | undefined
  )?.schema;
  return { query: shapeOf(operation.request?.query), body: shapeOf(body) };
}
