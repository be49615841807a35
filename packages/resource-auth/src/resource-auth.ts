/**
 * `@plant/resource-auth` as a drop-in for any Node HTTP API, ours or another team's
 * (README.md, "Protect your own API"): one object that verifies access tokens locally (the
 * realm's keys from the token service), checks DPoP proofs, and keeps the live revocation map
 * (Redis events over a Postgres snapshot), configured by the token service's two URLs and the
 * API's own read-only credential. It answers its own errors in the `Error` shape, so an express
 * app or a bare `node:http` handler needs no error middleware of ours.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { sendAppError } from './platform/error-response.js';
import { createJsonLogger, type Logger } from './platform/logger.js';
import type { AuthenticatedRequest } from './bearer/authenticated-request.js';
import { createBearerAuth } from './bearer/bearer-auth.js';
import { MissingToken } from './bearer/bearer-errors.js';
import { roleRefusal, roleRefusalMessage, type Principal, type Role } from './bearer/principal.js';
import { createRedisReplayStore } from './dpop/dpop-replay-store.js';
import { createRevocationSync } from './revocation/revocation-sync.js';

export interface ResourceAuthOptions {
  /** The token service's public base URL ({auth_url}): a token's issuer must be `{authUrl}/realms/<tenant>`. */
  authUrl: string;
  /** The token service's internal API (realm keys, realm list, revocation snapshot and lookups). */
  internalUrl: string;
  /** This API's own credential for the internal API: one of the token service's `RESOURCE_SERVER_TOKENS` (read-only). */
  credential: string;
  /** Redis of the platform: the revocation channel, and the DPoP proof ids of every replica. */
  redisUrl: string;
  /** The `aud` this API's tokens carry (the `resource` its clients ask the token service for). */
  audience: string;
  /** The base URL clients call this API at. Given, DPoP-bound tokens are accepted with proofs for `{publicUrl}<path>`; absent, they are refused. */
  publicUrl?: string;
  /** Keys of server-provided DPoP nonces (RFC 9449 §8), the first issuing; absent: no nonce required. */
  dpopNonceKeys?: readonly string[];
  /** The `realm` of this API's `WWW-Authenticate` challenges (default `api`). */
  realm?: string;
  /** A pino logger, or anything with its `debug`/`info`/`warn`/`error`/`child` (default: warnings and errors as JSON lines on stdout). Tokens are never logged. */
  logger?: Logger;
  /** Where the `revocation_*` metrics go (default: a registry of its own). */
  metrics?: Registry;
  /** Period of the full revocation re-sync, ms (default 5000). */
  resyncMs?: number;
}

/** A request after `middleware`: `req.auth` is the caller. */
export type RequestWithAuth = IncomingMessage & { auth?: Principal };
type Next = (err?: unknown) => void;

export interface ResourceAuth {
  /** Connects to Redis and loads the revocation snapshot; resolves once the map is live or has tried without Redis (never rejects). */
  start(): Promise<void>;
  /** Closes connections and timers; later requests are refused (503). */
  stop(): Promise<void>;
  /** True once the revocation snapshot has loaded (for a readiness probe). */
  isReady(): boolean;
  /** Express (or connect) middleware: sets `req.auth`, or answers 401/503 in the `Error` shape itself. */
  middleware(req: IncomingMessage, res: ServerResponse, next: Next): void;
  /** Middleware after `middleware`: 403 `insufficient_scope` unless the caller has `minimum` or a higher role. */
  requireRole(minimum: Role): (req: IncomingMessage, res: ServerResponse, next: Next) => void;
  /** The plain function, for a bare `node:http` server: the caller, or a rejection to hand to `sendError`. */
  authenticate(req: IncomingMessage, res: ServerResponse): Promise<Principal>;
  /** Answers any error (an `authenticate` rejection: 401 with its challenge, 403, 503) in the `Error` shape `{error, message}`. */
  sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void;
}

export function createResourceAuth(options: ResourceAuthOptions): ResourceAuth {
  const realm = options.realm ?? 'api';
  const logger = options.logger ?? createJsonLogger({ name: 'resource-auth', level: 'warn' });
  const revocation = createRevocationSync({
    redis: options.redisUrl,
    tokenServiceUrl: options.internalUrl,
    internalToken: options.credential,
    logger,
    metricsRegistry: options.metrics ?? new Registry(),
    ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
  });
  const replay =
    options.publicUrl === undefined
      ? undefined
      : createRedisReplayStore({ redis: options.redisUrl, logger });
  const auth = createBearerAuth({
    authUrl: options.authUrl,
    audience: options.audience,
    jwksBaseUrl: options.internalUrl,
    internalToken: options.credential,
    realm,
    logger,
    revocation,
    ...(replay === undefined
      ? {}
      : {
          dpop: {
            publicUrl: options.publicUrl!,
            replay,
            ...(options.dpopNonceKeys ? { nonceKeys: options.dpopNonceKeys } : {}),
          },
        }),
  });
  const respond = (req: IncomingMessage, res: ServerResponse, err: unknown) =>
    sendAppError(logger, err, req, res);

  return {
    start: () => revocation.start(),
    async stop() {
      await revocation.stop();
      await replay?.close();
      auth.close();
    },
    isReady: () => revocation.isReady(),
    middleware(req, res, next) {
      auth.middleware(req as AuthenticatedRequest, res, (err?: unknown) =>
        err === undefined ? next() : respond(req, res, err),
      );
    },
    requireRole(minimum) {
      return (req, res, next) => {
        const principal = (req as RequestWithAuth).auth;
        if (principal === undefined) respond(req, res, new MissingToken(realm));
        else {
          const refusal = roleRefusal(principal, minimum);
          if (refusal === undefined) next();
          else respond(req, res, auth.insufficientScope(roleRefusalMessage(minimum, refusal)));
        }
      };
    },
    authenticate: (req, res) => auth.authenticate(req, res),
    sendError: respond,
  };
}
