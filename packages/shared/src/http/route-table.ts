import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { NodeHandler } from '@plant/resource-auth/platform/node-route';

/** The methods a route can declare. HEAD is served by a path's GET route, OPTIONS never declared. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RouteBase {
  method: HttpMethod;
  /** An express path of literal segments and `:name` parameters (`req.params.name`), nothing else. */
  path: string;
  /**
   * What other methods on this path get: a 405 with `Allow` naming the path's routes (default),
   * or `'pass'`: the request goes on to the later layers, for a path a mounted app serves too
   * (oidc-provider answers other methods on its token endpoint itself).
   */
  otherMethods?: 'not-allowed' | 'pass';
  /** What the route reads besides its path parameters; absent: nothing. */
  input?: RouteInput;
  /** The forms its own errors may take besides the `Error` shape; absent: none. */
  errors?: readonly ErrorForm[];
}

/**
 * An error answer that is not in the `Error` shape: an HTML page (a person is reading: the
 * portal, sign-in) or RFC 6749's `{error, error_description}` (oidc-provider's endpoints). The
 * layers around a route (404, 405, authentication) always answer in the `Error` shape.
 */
export type ErrorForm = 'page' | 'oauth';

/**
 * A route's inputs as data, so whoever must visit every input of every route (the hostile-input
 * fuzzer of packages/e2e) reads them from the table rather than from a list kept by hand.
 */
export interface RouteInput {
  /** Query parameter names. */
  query?: readonly string[];
  /** The body's media type and top-level field names. */
  body?: { type: 'json' | 'form'; fields: readonly string[] };
}

/** The field names of a zod object schema (`z.object({...})`), for a route's `input`. */
export function fieldsOf(schema: { shape: object }): string[] {
  return Object.keys(schema.shape);
}

/**
 * A route served straight from `node:http` when a request's method is `method` and its URL is
 * exactly `path` (a query string aside; `:params` plain, without percent-encoding). Every other
 * spelling, HEAD and the 405s go through express to the same handlers. Its handlers are
 * node-level, so they run unchanged either way; they must answer or pass an error, as falling
 * off the end answers 404 and `next('route')` is not supported.
 */
export interface HotRoute extends RouteBase {
  hot: true;
  // `never` admits a handler of any request type (NodeHandler<PlantsRequest>, ...): a hot route
  // only ever hands its handlers the request that came in.
  handlers: readonly NodeHandler<never>[];
}

/** A route served by express only: its handlers may use express's `req`/`res` helpers. */
export interface ExpressRoute extends RouteBase {
  hot?: false;
  handlers: readonly RequestHandler[];
  /** Answers every error of its handlers (a page route's error page); absent: the app's error responder. */
  onError?: ErrorRequestHandler;
}

export type Route = HotRoute | ExpressRoute;

/**
 * Express layers a route table needs beside its routes, in their place in the table: app-wide
 * middleware (security headers), routers (pages), a mount (`path`) that authenticates everything
 * under it, or serves it (oidc-provider), and error decorators for what comes before them.
 */
export interface ExpressLayer {
  /** Layers are express's alone. (Declared so TypeScript tells a layer from a route by `hot`, and types inline handlers.) */
  hot?: false;
  path?: string;
  use: readonly (RequestHandler | ErrorRequestHandler)[];
  /** For a mount that serves what is under `path` (oidc-provider): the forms its errors may take besides the `Error` shape. */
  errors?: readonly ErrorForm[];
}

/**
 * A service's requests, in express's order: its routes as data (method, path, handlers) and the
 * express layers between them. Hot routes are served first, whichever way a request comes.
 */
export type RouteTable = readonly (Route | ExpressLayer)[];

export function isRoute(entry: Route | ExpressLayer): entry is Route {
  return 'method' in entry;
}

/** The routes of a table, for whoever needs to visit every route (docs, fuzzers). */
export function routesOf(table: RouteTable): Route[] {
  return table.filter(isRoute);
}

/** `Allow` for a path's routes: their methods in declaration order, HEAD right after GET. */
export function allowHeader(routes: readonly Route[]): string {
  return routes
    .flatMap((route) => (route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]))
    .join(', ');
}

/** Path parameters by name. */
export type RouteParams = Readonly<Record<string, string>>;

/** Matches a request URL against one path: its parameters, or undefined when it does not match. */
export type PathMatcher = (url: string) => RouteParams | undefined;

const NO_PARAMS: RouteParams = Object.freeze({});
const SLASH = 0x2f;
const QUERY = 0x3f;
const HASH = 0x23;
const PERCENT = 0x25;

/**
 * The hot lane's matcher for `path`: literal pieces compared as they are (case-sensitive), each
 * parameter up to the next `/`, then the end or a query string. It declines what express would
 * read differently (percent-encoded parameters, which express decodes; a fragment), so such
 * spellings go to express. No regular expression: one object per match, the parameters.
 */
export function pathMatcher(path: string): PathMatcher {
  const pieces = path.split(/:([A-Za-z_][A-Za-z0-9_]*)/);
  if (pieces.length === 1) {
    const withQuery = `${path}?`;
    return (url) => (url === path || url.startsWith(withQuery) ? NO_PARAMS : undefined);
  }
  const literals = pieces.filter((_, i) => i % 2 === 0);
  const names = pieces.filter((_, i) => i % 2 === 1);
  const first = literals[0]!;
  const wholeSegments =
    first.endsWith('/') &&
    literals
      .slice(1)
      .every((l, i) => (l === '' ? i === literals.length - 2 : l.charCodeAt(0) === SLASH));
  if (names.length !== new Set(names).size || !wholeSegments) {
    throw new Error(`A hot route's parameters must be whole segments with distinct names: ${path}`);
  }
  return function matchPath(url) {
    if (!url.startsWith(first)) return undefined;
    let at = first.length;
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const end = parameterEnd(url, at);
      if (end <= at) return undefined;
      params[names[i]!] = url.slice(at, end);
      const literal = literals[i + 1]!;
      if (!url.startsWith(literal, end)) return undefined;
      at = end + literal.length;
    }
    return at === url.length || url.charCodeAt(at) === QUERY ? params : undefined;
  };
}

/**
 * Where the parameter that starts at `at` ends (the next `/` or `?`, or the end of the URL), or
 * -1 when it holds a character express would read differently (`%`, `#`).
 */
function parameterEnd(url: string, at: number): number {
  for (let i = at; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === SLASH || c === QUERY) return i;
    if (c === PERCENT || c === HASH) return -1;
  }
  return url.length;
}
