/**
 * Bearer-token authentication for resource servers (the Plant Store, account-admin's API).
 *
 * A token is accepted when, in this order (cheap checks first, so garbage never costs a
 * key fetch or an RSA verification):
 * 1. it is a compact JWS of bounded size;
 * 2. its header says `alg: RS256` or `ES256`, `typ: at+jwt` (RFC 9068) and names a `kid`;
 * 3. its `tenant` claim is a valid realm name and `iss` is exactly `{authUrl}/realms/<tenant>`;
 *    `aud` names this resource server; it has not expired;
 * 4. the realm exists (`RealmDirectory`: the token service's realm list, so an unknown realm
 *    costs no fetch of its own), its JWKS (cached, see `JwksCache`) has the `kid`, the header's
 *    `alg` is the one that key's JWK declares, and the signature verifies with it
 *    (`jsonwebtoken`, algorithms pinned to the key's, so `alg: none`, HS256 signed with the
 *    public key, and an ES256 token naming an RSA key or the reverse are refused);
 * 5. `aud`, `exp`, `nbf`, `iat`, `ver`, role and grants are well formed (`principalFromClaims`);
 * 6. on EVERY request, even when steps 1-5 come from the verified-token cache, the
 *    revocation checker accepts (tenant, sub, ver), and for an exchanged token (RFC 8693 `act`)
 *    the same (tenant, sub, ver) of every actor in its chain;
 * 7. a token bound to a key (`cnf.jkt`, RFC 9449) comes with `Authorization: DPoP` and a proof
 *    that the `dpop` option's checks accept (dpop/dpop-check.ts); with `Bearer` it is refused.
 * The token's own checks (1-3, 5) are in bearer-token-checks.ts; this module is the pipeline
 * around them: the header (authorization-header.ts), the caches, the revocation and DPoP steps,
 * the middleware.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CacheStats } from '../platform/cache-stats.js';
import type { NodeHandler } from '../platform/node-route.js';
import { TokenServiceReader } from '../platform/token-service-reader.js';
import { DpopCheck } from '../dpop/dpop-check.js';
import type { BearerAuthOptions } from './bearer-auth-options.js';
import { DpopInvalidToken } from '../dpop/dpop-errors.js';
import type { RevocationVerdict } from '../revocation/types.js';
import { credentialsOf } from './authorization-header.js';
import { AuthUnavailable, InsufficientScope, InvalidToken, MissingToken } from './bearer-errors.js';
import { BearerTokenChecks } from './bearer-token-checks.js';
import { FetchBudget } from './fetch-budget.js';
import { JwksCache } from './jwks-cache.js';
import type { AuthenticatedRequest } from './authenticated-request.js';
import {
  roleRefusal,
  roleRefusalMessage,
  type Actor,
  type Principal,
  type Role,
} from './principal.js';
import { readHandler, type Caller } from './read-handler.js';
import { RealmDirectory } from './realm-directory.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

export type { BearerAuthOptions } from './bearer-auth-options.js';

export interface BearerAuth {
  /** Middleware (express, or a hot route of `createHttpApp`): sets `req.auth`, or passes a 401/503 `AppError` on. */
  middleware: NodeHandler<AuthenticatedRequest>;
  /** The request's caller, as `middleware` decides it (DPoP proof included): resolves the principal or rejects with a 401/503 `AppError`. */
  authenticate(req: IncomingMessage, res: ServerResponse): Promise<Principal>;
  /** Verifies a raw bearer token (without the `Bearer ` prefix), revocation included; a DPoP-bound one is refused (no proof). Rejects with an `AppError`. */
  verify(token: string): Promise<Principal>;
  /** As `verify`, whatever the token is bound to: for token introspection, whose caller checks the proof. */
  inspect(token: string): Promise<Principal>;
  /**
   * A read-only route's whole handler, authentication included: `load` runs while a DPoP
   * proof's `jti` claim is in flight, `send` answers only once the claim succeeded (read-handler.ts).
   */
  readHandler<T>(
    load: (req: AuthenticatedRequest, principal: Principal) => Promise<T>,
    send: (res: ServerResponse, result: T, req: AuthenticatedRequest) => void,
  ): NodeHandler<AuthenticatedRequest>;
  /** Middleware answering 403 `insufficient_scope` unless `req.auth` has `minimum` or a higher role. */
  requireRole(minimum: Role): NodeHandler<AuthenticatedRequest>;
  /** The 403 `insufficient_scope` error of this realm, for checks a route makes itself. */
  insufficientScope(message: string): InsufficientScope;
  /** The JWKS cache's and the verified-token cache's sizes, for `/metrics` (`registerCacheMetrics`). */
  jwksStats(): CacheStats;
  verifiedTokenStats(): CacheStats;
  /** Drops caches and aborts JWKS and realm-list fetches in flight. */
  close(): void;
}

/** Builds the bearer verification of one resource server; see the module comment for the checks. */
// long: the bearer pipeline: its numbered checks (the module comment) share one closure over the options and caches, in the order they run.
export function createBearerAuth(options: BearerAuthOptions): BearerAuth {
  const { audience, realm, revocation, logger } = options;
  const authUrl = options.authUrl.replace(/\/+$/, '');
  const tolerance = options.clockToleranceSec ?? 5;
  const verified = new VerifiedTokenCache(options.verifiedCacheBytes ?? 32 * 1024 * 1024);
  const aborter = new AbortController();
  const tokenService = new TokenServiceReader({
    baseUrl: options.jwksBaseUrl,
    internalToken: options.internalToken,
    signal: aborter.signal,
    timeoutMs: 2_000,
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  });
  const directory = new RealmDirectory({
    load: () => tokenService.realms(),
    logger,
    ...(options.realmListBurst === undefined ? {} : { loadBurst: options.realmListBurst }),
    ...(options.realmListPerSecond === undefined
      ? {}
      : { loadsPerSecond: options.realmListPerSecond }),
  });
  const jwks = new JwksCache({
    jwksBaseUrl: options.jwksBaseUrl,
    logger,
    directory,
    budget: new FetchBudget(options.jwksRefetchBurst ?? 20, options.jwksRefetchPerSecond ?? 10),
    ...(options.jwksMinRefetchMs === undefined ? {} : { minRefetchMs: options.jwksMinRefetchMs }),
    ...(options.jwksMaxAgeMs === undefined ? {} : { maxAgeMs: options.jwksMaxAgeMs }),
    ...(options.jwksCacheBytes === undefined ? {} : { maxBytes: options.jwksCacheBytes }),
  });

  const invalid = (message: string): InvalidToken => {
    logger.debug({ reason: message }, 'bearer token rejected');
    return new InvalidToken(realm, message);
  };
  const checks = new BearerTokenChecks({ authUrl, audience, toleranceSec: tolerance, invalid });
  const dpop =
    options.dpop === undefined ? undefined : new DpopCheck(options.dpop, { realm, logger });

  /** Steps 1-5 for a token not in the verified cache. */
  async function verifyToken(token: string): Promise<Principal> {
    const { tenant, kid, alg } = checks.precheck(token);
    const lookup = await jwks.getKey(tenant, kid);
    if (lookup.kind === 'unavailable') throw new AuthUnavailable();
    if (lookup.kind === 'unknown-realm') throw invalid('Token issuer is not a known realm');
    if (lookup.kind === 'unknown-kid') throw invalid('Token signing key is not known');
    const principal = checks.verify(token, tenant, alg, lookup.key);
    verified.set(token, principal, (principal.exp + tolerance) * 1000);
    return principal;
  }

  function settle(verdict: RevocationVerdict, principal: Principal): Principal {
    if (verdict === 'valid') return principal;
    if (verdict === 'revoked') throw invalid('Token has been revoked');
    throw new AuthUnavailable();
  }

  const unavailable = (err: unknown): never => {
    logger.warn({ err: { message: (err as Error)?.message } }, 'revocation check failed');
    throw new AuthUnavailable();
  };

  /**
   * One principal's verdict (the subject's, or one actor's), synchronous when the checker answers
   * from memory; `cred` is the credential that principal used, so removing it refuses the token.
   */
  function verdictOf(
    checker: NonNullable<typeof revocation>,
    tenant: string,
    sub: string,
    ver: number,
    cred: string | undefined,
  ): RevocationVerdict | Promise<RevocationVerdict> {
    try {
      return checker.check(tenant, sub, ver, cred);
    } catch (err) {
      return unavailable(err);
    }
  }

  /**
   * Step 6 for an exchanged token: the subject and every actor of its chain, each through the
   * same check a plain token's subject gets; any one revoked refuses it, any one unknown (503)
   * before that is unavailable.
   */
  function checkChain(
    checker: NonNullable<typeof revocation>,
    principal: Principal,
    actors: readonly Actor[],
  ): Principal | Promise<Principal> {
    const verdicts = [
      verdictOf(checker, principal.tenant, principal.sub, principal.ver, principal.cred),
      ...actors.map((actor) =>
        verdictOf(checker, principal.tenant, actor.sub, actor.ver, actor.cred),
      ),
    ];
    const combine = (all: RevocationVerdict[]): RevocationVerdict => {
      if (all.includes('revoked')) return 'revoked';
      return all.includes('unavailable') ? 'unavailable' : 'valid';
    };
    if (verdicts.every((v) => typeof v === 'string'))
      return settle(combine(verdicts as RevocationVerdict[]), principal);
    return Promise.all(verdicts).then((all) => settle(combine(all), principal), unavailable);
  }

  /** Step 6, synchronous when the checker answers from memory. */
  function checkRevocation(principal: Principal): Principal | Promise<Principal> {
    if (revocation === undefined) return principal;
    if (principal.actors !== undefined) return checkChain(revocation, principal, principal.actors);
    const verdict = verdictOf(
      revocation,
      principal.tenant,
      principal.sub,
      principal.ver,
      principal.cred,
    );
    if (typeof verdict === 'string') return settle(verdict, principal);
    return verdict.then((v) => settle(v, principal), unavailable);
  }

  function authenticate(token: string): Principal | Promise<Principal> {
    const cached = verified.get(token, Date.now());
    if (cached !== undefined) return checkRevocation(cached);
    return verifyToken(token).then(checkRevocation);
  }

  /** Step 7 for the Bearer scheme: a bound token is worth nothing without its key's proof. */
  function unbound(principal: Principal): Principal {
    if (principal.jkt === undefined) return principal;
    logger.debug({ reason: 'bound token as bearer' }, 'bearer token rejected');
    throw (
      dpop?.boundTokenAsBearer() ??
      new DpopInvalidToken(realm, 'The access token is DPoP-bound and cannot be used here')
    );
  }

  function authenticateBearer(token: string): Principal | Promise<Principal> {
    const result = authenticate(token);
    return result instanceof Promise ? result.then(unbound) : unbound(result);
  }

  const withoutClaim = (principal: Principal): Caller => ({ principal, claim: undefined });

  /** The caller once every check but a DPoP proof's `jti` passed, and that claim, in flight. */
  function identify(req: IncomingMessage, res: ServerResponse): Caller | Promise<Caller> {
    const { scheme, token } = credentialsOf(req, realm, invalid, dpop !== undefined);
    if (scheme === 'bearer' || dpop === undefined) {
      const result = authenticateBearer(token);
      return result instanceof Promise ? result.then(withoutClaim) : withoutClaim(result);
    }
    // The proof's shape first: a request without a usable proof costs no token verification.
    const proof = dpop.read(req);
    const bound = (principal: Principal): Caller => {
      dpop.check(proof, req, res, token, principal);
      return { principal, claim: dpop.claim(proof) };
    };
    const result = authenticate(token);
    return result instanceof Promise ? result.then(bound) : bound(result);
  }

  const claimed = ({ principal, claim }: Caller): Principal | Promise<Principal> =>
    claim === undefined ? principal : claim.then(() => principal);

  function authenticateRequest(
    req: IncomingMessage,
    res: ServerResponse,
  ): Principal | Promise<Principal> {
    const caller = identify(req, res);
    return caller instanceof Promise ? caller.then(claimed) : claimed(caller);
  }

  const middleware: NodeHandler<AuthenticatedRequest> = function bearerAuth(req, res, next): void {
    let result: Principal | Promise<Principal>;
    try {
      result = authenticateRequest(req, res);
    } catch (err) {
      next(err);
      return;
    }
    if (result instanceof Promise) {
      result.then((principal) => {
        req.auth = principal;
        next();
      }, next);
    } else {
      req.auth = result;
      next();
    }
  };

  return {
    middleware,
    async authenticate(req, res) {
      return authenticateRequest(req, res);
    },
    readHandler: (load, send) => readHandler(identify, load, send),
    async verify(token: string) {
      return authenticateBearer(token);
    },
    async inspect(token: string) {
      return authenticate(token);
    },
    requireRole(minimum: Role): NodeHandler<AuthenticatedRequest> {
      return function requireRoleMiddleware(req, _res, next): void {
        const principal = req.auth;
        if (principal === undefined) next(new MissingToken(realm));
        else {
          const refusal = roleRefusal(principal, minimum);
          next(
            refusal === undefined
              ? undefined
              : new InsufficientScope(realm, roleRefusalMessage(minimum, refusal)),
          );
        }
      };
    },
    insufficientScope(message: string) {
      return new InsufficientScope(realm, message);
    },
    jwksStats: () => jwks.stats(),
    verifiedTokenStats: () => verified.stats(),
    close() {
      aborter.abort();
      directory.close();
      jwks.close();
      verified.clear();
      dpop?.close();
    },
  };
}
