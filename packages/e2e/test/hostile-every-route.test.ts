/**
 * Every route of every service under hostile input, read from the route tables the services
 * are built with (helpers/service-apps.ts): each route's path parameters, query parameters and
 * body fields get every value of a dictionary of known-bad ones (forged cursors, numbers past
 * int64, NUL...) one at a time (route-dictionary.ts), then random hostile values with real ones
 * mixed in so cases pass authentication and lookups (route-fuzzer.ts); the paths a mount serves
 * (oidc-provider's endpoints, the portal's assets) get random cases too. No answer is 5xx (but a
 * documented 503), leaks internals, or errs outside the `Error` shape and the forms its route
 * declares (`errors`); no redirect leaves the platform; every process stays up. The last tests
 * fail when a route, mount or app exists that was not fuzzed, so a new one cannot be forgotten.
 * HOSTILE_RUNS sets the random cases (ROUTE_RUNS per target); HOSTILE_SEED replays a run.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type fc from 'fast-check';
import { isRoute, type ExpressLayer } from '@plant/shared/http';
import { LeakReporter, REPO_ROOT } from '@plant/test-kit';
import {
  assertEach,
  assertHostile,
  dictionaryCases,
  HOSTILE_CONCURRENCY,
  HOSTILE_RUNS,
  HOSTILE_SEED,
  HOSTILE_TIMEOUT_MS,
  httpRequest,
  mountCase,
  routeAnswerProblem,
  routeCase,
  startPlatform,
  type AnswerRules,
  type FuzzCase,
  type Platform,
} from '../src/index.js';
import {
  documentedInput,
  documentedOperations,
  routeKey,
  serviceApps,
  type ServiceApp,
} from './helpers/service-apps.js';
import { fuzzContexts, type FuzzContexts } from './helpers/fuzz-contexts.js';

/** Random cases per route and per mount: HOSTILE_RUNS spread over every target of every app, each getting a fair share. */
const ROUTE_RUNS = Math.max(HOSTILE_CONCURRENCY * 8, Math.ceil(HOSTILE_RUNS / 20));

const apps = serviceApps();
let p: Platform;
let contexts: FuzzContexts;
/** What was sent, by app, then by route key or mount path: the statuses answered. */
const fuzzed = new Map<string, Map<string, Map<number, number>>>();

beforeAll(async () => {
  // Raised throttles: hostile credentials must reach the parsers and comparisons, not stop at 429.
  // Failed sign-ins per account keep their limit: each costs a password hash, and the form's
  // account (not the admin's, whose portal sessions the fuzzer renews) is soon refused before one.
  const throttles = {
    CLIENT_AUTH_FAILURES_PER_CLIENT_IP: '100000',
    CLIENT_AUTH_FAILURES_PER_IP: '100000',
    CLIENT_AUTH_FAILURES_PER_CLIENT: '100000',
    SIGN_IN_FAILURES_PER_IP: '100000',
    // The leak-report route verifies signatures only with a key document configured.
    SECRET_SCANNING_GITHUB_KEYS: new LeakReporter(mkdtempSync(join(tmpdir(), 'fuzz-keys-')))
      .documentPath,
  };
  p = await startPlatform({
    plantStores: 1,
    accountAdmin: true,
    serviceEnv: { 'token-service': throttles },
  });
  contexts = await fuzzContexts(p);
}, 120_000);

afterAll(() => p?.close());

/** The express layers of an app's table that serve or guard a path prefix (one per prefix). */
function mountsOf(app: ServiceApp): ExpressLayer[] {
  const layers = app.app.table.filter(
    (entry): entry is ExpressLayer => !isRoute(entry) && entry.path !== undefined,
  );
  return layers.filter((layer, i) => layers.findIndex((other) => other.path === layer.path) === i);
}

/** Sends a route's (or mount's) dictionary sweep, then its random cases; every answer checked against `rules`. */
async function fuzz(
  app: ServiceApp,
  target: string,
  sweep: readonly FuzzCase[],
  cases: fc.Arbitrary<FuzzCase>,
  rules: AnswerRules,
): Promise<void> {
  const statuses = new Map<number, number>();
  const byTarget = fuzzed.get(app.name) ?? new Map<string, Map<number, number>>();
  fuzzed.set(app.name, byTarget.set(target, statuses));
  const base = app.url(p);
  const check = async (c: FuzzCase) => {
    const url = `${base}${c.url}`;
    const answer = await httpRequest(url, { method: c.method, headers: c.headers, body: c.body });
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const problem = routeAnswerProblem(c.method, url, answer, rules);
    return problem === undefined ? undefined : `${app.name} ${target}: ${problem}`;
  };
  const swept = await assertEach(sweep, check);
  const sent = await assertHostile(cases, check, ROUTE_RUNS);
  expect({ target, swept, sent: sent >= ROUTE_RUNS }).toEqual({
    target,
    swept: sweep.length,
    sent: true,
  });
}

async function assertAllUp(): Promise<void> {
  for (const svc of p.processes) {
    expect({ name: svc.name, exitCode: svc.child.exitCode, signal: svc.child.signalCode }).toEqual({
      name: svc.name,
      exitCode: null,
      signal: null,
    });
    expect({
      name: svc.name,
      health: (await httpRequest(`${svc.managementUrl}/healthz`)).status,
    }).toEqual({ name: svc.name, health: 200 });
  }
}

describe('Every route of every service under hostile input', () => {
  test.each(apps.map((app) => [app.name, app] as const))(
    'When every route and mount of %s gets hostile path parameters, query parameters, bodies and credentials, then no answer is 5xx, leaks internals, errs outside its declared shapes or redirects off the platform, and every process stays up',
    async (_name, app) => {
      const documented = documentedOperations(app);
      const origins = [
        p.authUrl,
        p.portalUrl,
        p.internalUrl,
        ...p.plantStores.map((s) => s.url),
      ].map((u) => new URL(u).origin);
      // Every route is fuzzed even after one fails, so a run reports each failing route once.
      const failures: string[] = [];
      // fast-check's message names the run and the whole batch; the cause names the failing case and its answer.
      const failing = (err: unknown) => {
        const { message, cause } = err as Error & { cause?: Error };
        failures.push(
          cause === undefined
            ? message
            : `${message.split('\n').slice(0, 2).join(' ')}\n${cause.message}`,
        );
      };
      for (const route of app.app.routes) {
        const ctx = await contexts.forApp(app.name);
        const may503 = documented.get(routeKey(route))?.responses['503'] !== undefined;
        await fuzz(app, routeKey(route), dictionaryCases(route, ctx), routeCase(route, ctx), {
          ...(route.errors ? { errors: route.errors } : {}),
          may503,
          origins,
        }).catch(failing);
      }
      for (const mount of mountsOf(app)) {
        const ctx = await contexts.forApp(app.name);
        const served = contexts.mountPaths(app.name, mount.path!);
        await fuzz(
          app,
          `mount ${mount.path}`,
          [],
          mountCase({ path: mount.path! }, served.subpaths, served.query, ctx),
          { ...(mount.errors ? { errors: mount.errors } : {}), origins },
        ).catch(failing);
      }
      await assertAllUp();
      if (failures.length > 0)
        throw new Error(
          `${failures.length} of ${fuzzed.get(app.name)!.size} targets failed (HOSTILE_SEED=${HOSTILE_SEED}):\n\n${failures.join('\n\n')}`,
        );
    },
    HOSTILE_TIMEOUT_MS,
  );
});

const SERIES = /^http_requests_total\{(.*)\} \d+$/gm;

describe('What the route-table fuzzer covers', () => {
  test('When the tables are compared with what was fuzzed, then every route and mount of every app was, and each route was reached past routing (by its own answers and, where the app has metrics, by the route template it counted)', async () => {
    for (const app of apps) {
      const sent = fuzzed.get(app.name) ?? new Map<string, Map<number, number>>();
      const expected = [
        ...app.app.routes.map(routeKey),
        ...mountsOf(app).map((m) => `mount ${m.path}`),
      ];
      expect({ app: app.name, fuzzed: [...sent.keys()].sort() }).toEqual({
        app: app.name,
        fuzzed: [...expected].sort(),
      });
      const unreached = app.app.routes
        .map(routeKey)
        .filter(
          (key) =>
            ![...(sent.get(key)?.keys() ?? [])].some((status) => status !== 404 && status !== 405),
        );
      expect({ app: app.name, unreached }).toEqual({ app: app.name, unreached: [] });

      if (app.metricsUrl === undefined) continue;
      const metrics = await httpRequest(`${app.metricsUrl(p)}/metrics`);
      expect({ app: app.name, status: metrics.status }).toEqual({ app: app.name, status: 200 });
      const counted = new Set(
        [...metrics.text.matchAll(SERIES)].map(
          ([, labels]) =>
            `${/method="([^"]+)"/.exec(labels!)?.[1]} ${/route="([^"]+)"/.exec(labels!)?.[1]}`,
        ),
      );
      expect({
        app: app.name,
        uncounted: app.app.routes.map(routeKey).filter((key) => !counted.has(key)),
      }).toEqual({ app: app.name, uncounted: [] });
    }
  });

  test('When the tables are read, then no layer hides routes in an express Router: every route is table data the fuzzer sees', () => {
    const routers = apps.flatMap((app) =>
      app.app.table
        .filter((entry): entry is ExpressLayer => !isRoute(entry))
        .flatMap((layer) =>
          layer.use
            .filter((fn) => Array.isArray((fn as { stack?: unknown }).stack))
            .map(() => `${app.name} ${layer.path ?? '(no path)'}`),
        ),
    );

    expect(routers).toEqual([]);
  });

  test("When the services' sources are read, then every app they build (each createHttpApp call, and the management app) is one the fuzzer reads", () => {
    const builders: string[] = [];
    const managed: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        if (!entry.isFile() || !path.endsWith('.ts')) continue;
        const text = readFileSync(join(REPO_ROOT, path), 'utf8');
        if (text.includes('createHttpApp(')) builders.push(path);
        if (text.includes('createManagementApp(')) managed.push(path.split('/')[1]!);
      }
    };
    for (const service of readdirSync(join(REPO_ROOT, 'services'))) walk(`services/${service}/src`);
    // The management listener is built in packages/shared (createManagementApp), the same for every service.
    const serviceBuilt = apps.filter((app) => app.source.startsWith('services/'));

    expect(builders.sort()).toEqual(serviceBuilt.map((app) => app.source).sort());
    expect(managed.sort()).toEqual(
      apps
        .filter((app) => app.name.endsWith(' management'))
        .map((app) => app.name.split(' ')[0])
        .sort(),
    );
    for (const source of builders)
      expect({
        source,
        calls: readFileSync(join(REPO_ROOT, source), 'utf8').split('createHttpApp(').length - 1,
      }).toEqual({ source, calls: 1 });
  });

  test('When the OpenAPI documents are compared with the tables, then every documented operation is a route whose declared input has the documented query parameters and body fields', () => {
    for (const app of apps) {
      for (const [key, operation] of documentedOperations(app)) {
        const route = app.app.routes.find((r) => routeKey(r) === key);
        expect({
          key,
          declared:
            route === undefined
              ? 'no such route'
              : {
                  query: [...(route.input?.query ?? [])],
                  body: [...(route.input?.body?.fields ?? [])],
                },
        }).toEqual({ key, declared: documentedInput(operation) });
      }
    }
  });
});
