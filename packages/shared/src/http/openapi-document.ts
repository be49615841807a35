/**
 * The plumbing of the services' OpenAPI 3.1 documents. zod-to-openapi generates them from
 * the zod schema objects the routes validate with and the response shapes are typed from;
 * a schema's `.meta({ id })` names its component. So a bound or field changed in a schema
 * changes the document; what a schema cannot carry (a hand-written parser) each service's
 * contract test holds to the document.
 */
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { ErrorSchema } from '../api/index.js';
import { DEFAULT_BODY_LIMIT } from './json-body.js';

export { OpenAPIRegistry, type ResponseConfig, type RouteConfig };

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;
type SecurityScheme = NonNullable<
  NonNullable<OpenApiDocument['components']>['securitySchemes']
>[string];
type Headers = Record<string, { description: string; schema: { type: 'string' } }>;

/** `Authorization: Bearer <access token>` with the JWT access tokens of the token service. */
export const BEARER_JWT: SecurityScheme = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };

/** The statuses the services answer in the `Error` shape. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 412 | 413 | 415 | 429 | 503;

/** A response in the `Error` shape. */
export function errorResponse(description: string, headers?: Headers): ResponseConfig {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: ErrorSchema } },
  };
}

/** An operation's `Error`-shaped responses: a description, or a whole response (to add headers). */
export function errorResponses(
  responses: Partial<Record<ErrorStatus, string | ResponseConfig>>,
): Record<string, ResponseConfig> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [
      status,
      typeof r === 'string' ? errorResponse(r) : r,
    ]),
  );
}

/** What `jsonBody()` answers before a route's schema sees the body. */
export const JSON_BODY_ERRORS = {
  413: `The body is larger than ${DEFAULT_BODY_LIMIT / 1024} KiB`,
  415: 'The body is not JSON (application/json or a +json type), is not UTF-8, or is compressed',
} as const satisfies Partial<Record<ErrorStatus, string>>;

/** A response whose body is `schema` as JSON. */
export function jsonResponse(
  description: string,
  schema: z.ZodType,
  headers?: Headers,
): ResponseConfig {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

/**
 * A page of a list: a JSON array of `item`, with the `Link: rel="next"` header (RFC 8288) that
 * `nextLink` describes, which carries the URL of the next page when there is one.
 */
export function jsonPageResponse(
  description: string,
  item: z.ZodType,
  nextLink: string,
): ResponseConfig {
  return jsonResponse(description, z.array(item), {
    Link: { description: nextLink, schema: { type: 'string' } },
  });
}

/**
 * `schema` as the response shape of the type `T` the code answers with: it compiles only when
 * the schema's output and `T` are assignable both ways, so neither can gain or lose a field
 * (or change a field's type) without the other. `responseSchema<ServiceAccount>()(schema)`.
 */
export function responseSchema<T>() {
  return <S extends z.ZodType<T>>(
    schema: S,
    ..._sameAsT: [T] extends [z.output<S>] ? [] : [never]
  ): S => schema;
}

/** A required JSON request body: `schema` must be the object the route parses the body with. */
export function jsonRequestBody(schema: z.ZodType): NonNullable<RouteConfig['request']>['body'] {
  return { required: true, content: { 'application/json': { schema } } };
}

export interface ApiDocumentConfig {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** Every scheme is an alternative: a request needs one of them. */
  securitySchemes: Record<string, SecurityScheme>;
}

/** The OpenAPI 3.1 document of the operations registered in `operations`. */
export function generateApiDocument(
  operations: OpenAPIRegistry,
  config: ApiDocumentConfig,
): OpenApiDocument {
  const registry = new OpenAPIRegistry([operations]);
  for (const [name, scheme] of Object.entries(config.securitySchemes))
    registry.registerComponent('securitySchemes', name, scheme);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: config.title, version: config.version, description: config.description },
    servers: [{ url: config.serverUrl }],
    security: Object.keys(config.securitySchemes).map((name) => ({ [name]: [] })),
  });
  // The generator emits these sections even when empty; here they only would be noise.
  if (Object.keys(document.webhooks ?? {}).length === 0) delete document.webhooks;
  if (Object.keys(document.components?.parameters ?? {}).length === 0)
    delete document.components?.parameters;
  return document;
}

/**
 * `GET …/openapi.json`: the document generated on its first request and kept, not on every
 * start, where generating it was most of account-admin's own start-up work (docs/performance.md,
 * "Start-up"); a schema that cannot be documented still fails the contract tests.
 */
export function apiDocumentHandler(generate: () => OpenApiDocument): RequestHandler {
  let document: string | undefined;
  return (_req: Request, res: Response) => {
    document ??= JSON.stringify(generate());
    res.type('application/json').send(document);
  };
}

/** What a resource's conditional requests look like in the document (precondition.ts). */
export interface ConditionalRequestsDoc {
  /** Whether the operation (a path of the document, `/service-accounts/{client_id}/keys`) changes the resource. */
  changes(method: string, path: string): boolean;
  /** Whether the operation's 2xx answers carry the resource's `ETag`. */
  answersEtag(method: string, path: string): boolean;
  /** The 412's description. */
  preconditionFailed: string;
}

const IF_MATCH_DOC =
  'Apply the change only if the resource is still at this state: the `ETag` it answered (a strong entity tag, `"v7"`), a comma-separated list of them, or `*`. A mismatch is 412 and changes nothing; without If-Match the change is unconditional. Malformed: 400.';
const ETAG_DOC =
  "The resource's current state as a strong entity tag (RFC 9110 §8.8.3): send it back in If-Match to change exactly this state.";

const ETAG: Headers = { ETag: { description: ETAG_DOC, schema: { type: 'string' } } };
const IF_MATCH = z.object({
  'If-Match': z.string().max(1024).optional().meta({ description: IF_MATCH_DOC }),
});

/** Each 2xx answer with a body also carries `ETag`. */
function withEtag(responses: Record<string, ResponseConfig>): void {
  for (const [status, response] of Object.entries(responses))
    if (status.startsWith('2') && response.content !== undefined)
      responses[status] = { ...response, headers: { ...response.headers, ...ETAG } };
}

/** The operation's request headers, and If-Match among them. */
function withIfMatch(route: RouteConfig): void {
  const headers = route.request?.headers;
  const list = headers === undefined ? [] : Array.isArray(headers) ? headers : [headers];
  route.request = {
    ...route.request,
    headers: (list.length === 0 ? IF_MATCH : [...list, IF_MATCH]) as never,
  };
}

/**
 * RFC 9110's conditional requests, documented on the operations already registered in
 * `registry`: every change `doc.changes` names takes `If-Match` and may answer 412; the reads
 * and changes `answersEtag` names answer `ETag`. Name them as the code's `conditionalRoute`
 * covers them, by path, so a route added there is documented here too.
 */
export function documentConditionalRequests(
  registry: OpenAPIRegistry,
  doc: ConditionalRequestsDoc,
): void {
  for (const definition of registry.definitions) {
    if (definition.type !== 'route') continue;
    const route = definition.route;
    const responses = route.responses as Record<string, ResponseConfig>;
    if (doc.answersEtag(route.method, route.path)) withEtag(responses);
    if (route.method === 'get' || !doc.changes(route.method, route.path)) continue;
    withIfMatch(route);
    responses['412'] = errorResponse(doc.preconditionFailed);
  }
}
