import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { Registry } from 'prom-client';
import {
  errorMiddleware,
  methodNotAllowed,
  notFoundHandler,
  sendError,
} from './error-middleware.js';
import { createRequestObserver, type RequestObserver } from './http-observability.js';
import type { Logger } from '../logging/index.js';
import { routeOf } from './metrics.js';
import {
  chainHandlers,
  routeEnd,
  type NodeHandler,
} from '@plant/resource-auth/platform/node-route';
import { forwardedTrust, type TrustProxy } from './proxy-trust.js';
import {
  allowHeader,
  isRoute,
  pathMatcher,
  routesOf,
  type HotRoute,
  type PathMatcher,
  type Route,
  type RouteParams,
  type RouteTable,
} from './route-table.js';

export interface HttpAppOptions {
  logger: Logger;
  /** Where request count and latency by route template go (exposed by the management port, `createManagementApp`); without it, none. */
  metrics?: Registry;
  /** Run each request inside the request context (default true; see `createRequestObserver`). */
  requestContext?: boolean;
  /** Paths whose successful requests get no access line (probes, polls); a failure there is logged. Default none. */
  quietPaths?: readonly string[];
  /** Who may set `X-Forwarded-*` (`TRUST_PROXY`: hops or ranges, see proxy-trust.ts); absent: nobody. */
  trustProxy?: TrustProxy;
  /** Let express add an `ETag` to what it sends (`res.json`, `res.send`): off unless asked. */
  etag?: boolean;
  routes: RouteTable;
}

/** A service's request listener, with its routes as data (`routes`), and the whole table they came in (`table`: layers too). */
export type HttpApp = RequestListener & {
  readonly routes: readonly Route[];
  readonly table: RouteTable;
};

/** What express gives a route handler that a hot route's handlers get too. */
type RoutedRequest = IncomingMessage & {
  originalUrl?: string;
  baseUrl?: string;
  params?: RouteParams;
};

interface HotEntry {
  match: PathMatcher;
  label: () => string;
  serve: (req: RoutedRequest, res: ServerResponse) => void;
}

/** Where express routes keep their template, which a handler's rewriting of `req.baseUrl` cannot change. */
const ROUTE_TEMPLATE = Symbol('route template');
type Labelled = Request & { [ROUTE_TEMPLATE]?: string };
const templateOf = (req: Request): string => (req as Labelled)[ROUTE_TEMPLATE] ?? routeOf(req);

/**
 * Builds a listener from its route table: one observer (request id, access line, metrics by
 * route template) for every request, then the table, then a 404, and one error responder
 * (`sendError`, the `Error` shape). Probes and metrics are routes of the management port's
 * table (`createManagementApp`), never of a public one: there they are a 404 like any unknown path.
 *
 * Every route is registered on express, with a 405 naming the path's methods for the others.
 * A hot route's exact method and path are also dispatched straight from `node:http`, skipping
 * express's router: the same handlers, observer and error responder, so both ways answer alike
 * (packages/shared/test/http-app-hot-routes.test.ts). Hot routes come first either way.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { logger, metrics } = options;
  const observe = createRequestObserver({
    logger,
    ...(metrics ? { metrics } : {}),
    requestContext: options.requestContext ?? true,
    ...(options.quietPaths ? { quietPaths: options.quietPaths } : {}),
  });
  const app = express();
  app.disable('x-powered-by');
  if (options.etag !== true) app.disable('etag');
  app.set('query parser', 'simple');
  const forwarded = forwardedTrust(options.trustProxy ?? 0);
  app.set('trust proxy', forwarded.express);

  app.use(function observeRequest(req: Request, res: Response, next: NextFunction) {
    observe(req, res, templateOf, () => next());
  });
  registerTable(app, options.routes);
  app.use(notFoundHandler());
  app.use(errorMiddleware(logger));

  const routes = routesOf(options.routes);
  const hot = hotLane(routes, observe, (err, req, res) => sendError(logger, err, req, res));
  const { sanitize } = forwarded;
  const listener: RequestListener =
    sanitize === undefined
      ? (req, res) => {
          if (!hot(req, res)) app(req, res);
        }
      : (req, res) => {
          sanitize(req);
          if (!hot(req, res)) app(req, res);
        };
  return Object.assign(listener, { routes, table: options.routes });
}

/** The table on express: hot routes' paths first, then every entry in its order; a path's routes together. */
function registerTable(app: Express, table: RouteTable): void {
  const byPath = new Map<string, Route[]>();
  for (const route of routesOf(table))
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const hotPaths = [...byPath.keys()].filter((path) =>
    byPath.get(path)!.some((route) => route.hot === true),
  );
  const registered = new Set<string>();
  const registerPath = (path: string) => {
    if (registered.has(path)) return;
    registered.add(path);
    registerPathRoutes(app, path, byPath.get(path)!);
  };
  hotPaths.forEach(registerPath);
  for (const entry of table) {
    if (isRoute(entry)) registerPath(entry.path);
    else if (entry.path === undefined) app.use(...(entry.use as RequestHandler[]));
    else app.use(entry.path, ...(entry.use as RequestHandler[]));
  }
}

function registerPathRoutes(app: Express, path: string, routes: Route[]): void {
  const passes = routes.map((route) => route.otherMethods === 'pass');
  if (new Set(passes).size > 1) throw new Error(`Routes of ${path} disagree on otherMethods`);
  const methods = routes.map((route) => route.method);
  if (new Set(methods).size < methods.length)
    throw new Error(`A method is declared twice on ${path}`);
  const label: RequestHandler = (req, _res, next) => {
    (req as Labelled)[ROUTE_TEMPLATE] = path;
    next();
  };
  const route = app.route(path).all(label);
  for (const declared of routes) {
    const lower = declared.method.toLowerCase() as Lowercase<typeof declared.method>;
    // After `routeEnd`, so it answers that error too; before the 405, which is not its route's.
    const onError =
      declared.hot !== true && declared.onError !== undefined
        ? [declared.onError as unknown as RequestHandler]
        : [];
    route[lower](
      ...(declared.handlers as RequestHandler[]),
      routeEnd as RequestHandler,
      ...onError,
    );
  }
  if (!passes[0]) route.all(methodNotAllowed(allowHeader(routes).split(', ')));
}

/**
 * Serves a request whose method and URL a hot route matches, and says so; otherwise leaves it
 * to express. One property read and one match per hot route of the method: no allocation on a
 * miss, and on a hit only what express would also give a route handler (`params`).
 */
function hotLane(
  routes: readonly Route[],
  observe: RequestObserver,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void,
) {
  const byMethod: Record<string, HotEntry[] | undefined> = Object.create(null) as Record<
    string,
    HotEntry[] | undefined
  >;
  for (const route of routes.filter((r): r is HotRoute => r.hot === true)) {
    const label = () => route.path;
    const entry: HotEntry = {
      match: pathMatcher(route.path),
      label,
      serve: chainHandlers(route.handlers as readonly NodeHandler<RoutedRequest>[], onError),
    };
    const entries = byMethod[route.method] ?? [];
    entries.push(entry);
    byMethod[route.method] = entries;
  }
  return function serveHot(req: RoutedRequest, res: ServerResponse): boolean {
    const entries = byMethod[req.method ?? ''];
    if (entries === undefined) return false;
    const url = req.url ?? '';
    for (const entry of entries) {
      const params = entry.match(url);
      if (params === undefined) continue;
      req.originalUrl = url;
      req.baseUrl = '';
      req.params = params;
      observe(req, res, entry.label, entry.serve);
      return true;
    }
    return false;
  };
}
