import {
  BadRequest,
  holdsUnstorableText,
  isStorableText,
  isTenantName,
  NotFound,
} from '@plant/shared/api';
import { type ExpressRoute, fieldsOf, jsonBody } from '@plant/shared/http';
import type { Request, RequestHandler, Response } from 'express';
import { StreamNotFound } from '../platform/index.js';
import {
  authenticateReceiver,
  createStream,
  deleteStream,
  listStreams,
  pollStream,
  type Receiver,
  readStatus,
  readStream,
  requestVerification,
  setStatus,
  setSubject,
  type SharedSignalsContext,
  transmitterConfiguration,
  updateStream,
} from './shared-signals.js';
import {
  CreateStreamSchema,
  PollRequestSchema,
  ReplaceStreamSchema,
  RequiredStreamQuerySchema,
  StatusUpdateSchema,
  StreamQuerySchema,
  SubjectRequestSchema,
  UpdateStreamSchema,
  VerificationRequestSchema,
} from './signal-validators.js';

const REPORT_INPUT = { reportInput: true } as const;
const STREAMS = '/realms/:tenant/ssf/streams';

type ReceiverRequest = Request & { receiver?: Receiver };

function tenantOf(req: Request): string {
  const tenant = String(req.params.tenant);
  if (!isTenantName(tenant)) throw new NotFound('Realm not found');
  return tenant;
}

/** The caller, checked before its body is read (an unauthenticated body costs nothing). */
function receiverOf(ctx: SharedSignalsContext, need: 'manage' | 'read'): RequestHandler {
  return async (req, _res, next) => {
    const tenant = tenantOf(req);
    (req as ReceiverRequest).receiver = await authenticateReceiver(
      ctx,
      tenant,
      req.headers.authorization,
      need,
    );
    next();
  };
}

const receiver = (req: Request) => (req as ReceiverRequest).receiver!;

function answer(res: Response, status: number, body?: unknown): void {
  res.setHeader('cache-control', 'no-store');
  if (body === undefined) res.status(status).end();
  else res.status(status).json(body);
}

/** What a receiver sends is stored (streams, subjects, verification state): NUL anywhere in it cannot be. */
const storableBody: RequestHandler = (req, _res, next) => {
  next(
    holdsUnstorableText(req.body)
      ? new BadRequest('body must not contain NUL (U+0000)')
      : undefined,
  );
};

function discovery(ctx: SharedSignalsContext, path: string): ExpressRoute {
  return {
    method: 'GET',
    path,
    handlers: [
      async (req, res) => {
        res.setHeader('cache-control', 'public, max-age=300');
        res.json(await transmitterConfiguration(ctx, tenantOf(req)));
      },
    ],
  };
}

/** What a stream endpoint runs before its handler: the caller checked, then its body read. */
interface Guards {
  manage: RequestHandler;
  read: RequestHandler;
}

/** A receiver's request body as its schema reads it (every stream schema is a zod object). */
type BodySchema<T> = { shape: object; parse(body: unknown, params: typeof REPORT_INPUT): T };

const readJson = jsonBody();

/**
 * The one body guard of every stream endpoint, after the caller is checked (an unauthenticated
 * body costs nothing): the body read as JSON, refused if it holds NUL anywhere (what a receiver
 * sends is stored), then parsed by the endpoint's schema, whose errors are reported as input
 * errors. The route's `input` names the schema's fields (`fields`: another schema's, when two
 * endpoints document one shape).
 */
function bodyRoute<T>(
  route: { method: 'POST' | 'PATCH' | 'PUT'; path: string; caller: RequestHandler },
  schema: BodySchema<T>,
  handle: (req: Request, res: Response, input: T) => Promise<void>,
  fields: { shape: object } = schema,
): ExpressRoute {
  return {
    method: route.method,
    path: route.path,
    input: { body: { type: 'json', fields: fieldsOf(fields) } },
    handlers: [
      route.caller,
      readJson,
      storableBody,
      (req, res) => handle(req, res, schema.parse(req.body, REPORT_INPUT)),
    ],
  };
}

/**
 * The SSF transmitter of each realm: its configuration metadata (at SSF 1.0's well-known path
 * for an issuer with a path, and at Keycloak's), stream configuration, status, subjects,
 * verification, and the RFC 8936 poll endpoint. Listed before the realm mount (oidc-provider).
 */
export function signalRoutes(ctx: SharedSignalsContext): ExpressRoute[] {
  const guards: Guards = {
    manage: receiverOf(ctx, 'manage'),
    read: receiverOf(ctx, 'read'),
  };
  return [
    discovery(ctx, '/.well-known/ssf-configuration/realms/:tenant'),
    discovery(ctx, '/realms/:tenant/.well-known/ssf-configuration'),
    ...streamConfigurationRoutes(ctx, guards),
    ...streamStatusRoutes(ctx, guards),
    ...verificationAndPollRoutes(ctx, guards),
  ];
}

/** SSF 1.0 §8.1.1: a stream created, read (one or all), updated, replaced, deleted. */
function streamConfigurationRoutes(ctx: SharedSignalsContext, guards: Guards): ExpressRoute[] {
  const manage = (method: 'POST' | 'PATCH' | 'PUT') => ({
    method,
    path: STREAMS,
    caller: guards.manage,
  });
  return [
    bodyRoute(manage('POST'), CreateStreamSchema, async (req, res, input) => {
      answer(res, 201, await createStream(ctx, receiver(req), input));
    }),
    {
      method: 'GET',
      path: STREAMS,
      input: { query: fieldsOf(StreamQuerySchema) },
      handlers: [
        guards.read,
        async (req, res) => {
          const { stream_id: id } = StreamQuerySchema.parse(req.query, REPORT_INPUT);
          answer(
            res,
            200,
            id === undefined
              ? await listStreams(ctx, receiver(req))
              : await readStream(ctx, receiver(req), id),
          );
        },
      ],
    },
    bodyRoute(
      manage('PATCH'),
      UpdateStreamSchema,
      async (req, res, { stream_id: id, ...input }) => {
        answer(res, 200, await updateStream(ctx, receiver(req), id, input, false));
      },
    ),
    bodyRoute(
      manage('PUT'),
      ReplaceStreamSchema,
      async (req, res, { stream_id: id, ...input }) => {
        answer(res, 200, await updateStream(ctx, receiver(req), id, input, true));
      },
      // A replacement is documented with the update's fields (its members are the same).
      UpdateStreamSchema,
    ),
    {
      method: 'DELETE',
      path: STREAMS,
      input: { query: fieldsOf(RequiredStreamQuerySchema) },
      handlers: [
        guards.manage,
        async (req, res) => {
          const { stream_id: id } = RequiredStreamQuerySchema.parse(req.query, REPORT_INPUT);
          await deleteStream(ctx, receiver(req), id);
          answer(res, 204);
        },
      ],
    },
  ];
}

/** SSF 1.0 §8.1.2 and §8.1.3: a stream's status, and the subjects it carries. */
function streamStatusRoutes(ctx: SharedSignalsContext, guards: Guards): ExpressRoute[] {
  const manage = (path: string) => ({ method: 'POST' as const, path, caller: guards.manage });
  return [
    {
      method: 'GET',
      path: `${STREAMS}/status`,
      input: { query: fieldsOf(RequiredStreamQuerySchema) },
      handlers: [
        guards.read,
        async (req, res) => {
          const { stream_id: id } = RequiredStreamQuerySchema.parse(req.query, REPORT_INPUT);
          answer(res, 200, await readStatus(ctx, receiver(req), id));
        },
      ],
    },
    bodyRoute(manage(`${STREAMS}/status`), StatusUpdateSchema, async (req, res, input) => {
      answer(
        res,
        200,
        await setStatus(ctx, receiver(req), input.stream_id, input.status, input.reason),
      );
    }),
    ...(['add', 'remove'] as const).map((action) =>
      bodyRoute(
        manage(`${STREAMS}/subjects/${action}`),
        SubjectRequestSchema,
        async (req, res, input) => {
          const mode = action === 'add' ? 'added' : 'removed';
          await setSubject(ctx, receiver(req), input.stream_id, input.subject, mode);
          // SSF 1.0 §8.1.3: 200 for an added subject, 204 for a removed one.
          answer(res, action === 'add' ? 200 : 204);
        },
      ),
    ),
  ];
}

/** SSF 1.0 §8.1.4 verification, and RFC 8936 polling. */
function verificationAndPollRoutes(ctx: SharedSignalsContext, guards: Guards): ExpressRoute[] {
  const read = (path: string) => ({ method: 'POST' as const, path, caller: guards.read });
  return [
    bodyRoute(read(`${STREAMS}/verify`), VerificationRequestSchema, async (req, res, input) => {
      await requestVerification(ctx, receiver(req), input.stream_id, input.state);
      answer(res, 204);
    }),
    bodyRoute(read(`${STREAMS}/poll/:stream_id`), PollRequestSchema, async (req, res, input) => {
      // A client that gave up ends the wait (and frees its waiter slot) at once.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const id = String(req.params.stream_id).slice(0, 64);
      if (!isStorableText(id)) throw new StreamNotFound();
      answer(res, 200, await pollStream(ctx, receiver(req), id, input, gone.signal));
    }),
  ];
}
