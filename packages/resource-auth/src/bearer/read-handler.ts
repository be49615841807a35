/**
 * A read-only route with a DPoP proof waits for two round trips: the proof's `jti` claim in
 * Redis and the route's own read. Made one after the other they are two waits and two wake-ups
 * of the event loop per request; `readHandler` makes them at once, but only once everything
 * else about the caller is settled (token, revocation, proof claims, key binding, signature),
 * so a forged proof still writes nothing. What the read found is sent only after the claim
 * succeeded: a replayed proof gets its 401 (and a store that cannot answer its 503), the read's
 * result dropped. Only GET and HEAD overlap; any other method claims first, as the middleware
 * does, since its handler may write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeHandler } from '../platform/node-route.js';
import type { AuthenticatedRequest } from './authenticated-request.js';
import type { Principal } from './principal.js';

/** Who called, and a DPoP proof's `jti` claim still in flight (undefined for a bearer token). */
export interface Caller {
  principal: Principal;
  claim: Promise<void> | undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const ignore = (): void => {};

export function readHandler<T>(
  identify: (req: IncomingMessage, res: ServerResponse) => Caller | Promise<Caller>,
  load: (req: AuthenticatedRequest, principal: Principal) => Promise<T>,
  send: (res: ServerResponse, result: T, req: AuthenticatedRequest) => void,
): NodeHandler<AuthenticatedRequest> {
  return async function readRoute(req, res) {
    const { principal, claim } = await identify(req, res);
    req.auth = principal;
    if (claim === undefined) {
      send(res, await load(req, principal), req);
      return;
    }
    if (!SAFE_METHODS.has(req.method ?? '')) {
      await claim;
      send(res, await load(req, principal), req);
      return;
    }
    let loading: Promise<T>;
    try {
      loading = load(req, principal);
    } catch (err) {
      loading = Promise.reject(err);
    }
    // The claim's refusal is the answer whatever the read did: its failure must not go unhandled.
    loading.catch(ignore);
    await claim;
    send(res, await loading, req);
  };
}
