import type { IncomingMessage } from 'node:http';
import type { Principal } from './principal.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified caller, set by `BearerAuth.middleware`. */
      auth?: Principal;
    }
  }
}

/** A request that went through `BearerAuth.middleware` (or `createResourceAuth`'s). */
export type AuthenticatedRequest = IncomingMessage & { auth?: Principal };

/** The verified caller of a request behind `BearerAuth.middleware` (a missing one is a wiring bug). */
export function principalOf(req: AuthenticatedRequest): Principal {
  if (req.auth === undefined)
    throw new Error('principalOf called on a route without bearer authentication');
  return req.auth;
}
