import type { NextFunction, Request, Response } from 'express';
import { Forbidden, Unauthorized } from '@plant/shared/api';
import { constantTimeEquals } from '@plant/shared/security';

/**
 * What a caller of the internal API may do. `verify`: what a resource server needs to check
 * access tokens (the realm list, revocations, principal lookups; the keys are open). `admin`:
 * tenants, users and service-account management, account-admin's alone.
 */
export type InternalScope = 'verify' | 'admin';

/** The internal API's callers: each resource server its own token, account-admin another. */
export interface InternalCredentials {
  resourceServerTokens: readonly string[];
  accountAdminToken: string;
}

interface Credential {
  token: string;
  scopes: ReadonlySet<InternalScope>;
}

const RESOURCE_SERVER: ReadonlySet<InternalScope> = new Set(['verify']);
const ACCOUNT_ADMIN: ReadonlySet<InternalScope> = new Set(['verify', 'admin']);

/** Where the authenticated caller's scopes wait for the route's check. */
const CALLER_SCOPES = Symbol('internal caller scopes');
type ScopedRequest = Request & { [CALLER_SCOPES]?: ReadonlySet<InternalScope> };

function credentialsOf({
  resourceServerTokens,
  accountAdminToken,
}: InternalCredentials): Credential[] {
  return [
    ...resourceServerTokens.map((token) => ({ token, scopes: RESOURCE_SERVER })),
    { token: accountAdminToken, scopes: ACCOUNT_ADMIN },
  ];
}

/**
 * `Authorization: Bearer <token>`: 401 unless it is one of the credentials. The token is compared
 * with every credential in constant time, none skipped after a match, so the time taken does not
 * tell which one matched, or how far a guess got.
 */
export function authenticateInternalCaller(
  credentials: InternalCredentials,
  equals: (a: string, b: string) => boolean = constantTimeEquals,
) {
  const known = credentialsOf(credentials);
  return function assertInternalCaller(req: Request, _res: Response, next: NextFunction): void {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    let scopes: ReadonlySet<InternalScope> | undefined;
    if (match) {
      for (const credential of known) {
        if (equals(match[1]!, credential.token)) scopes = credential.scopes;
      }
    }
    if (scopes === undefined) {
      next(
        new Unauthorized('A valid internal API token is required', {
          headers: { 'www-authenticate': 'Bearer realm="token-service-internal"' },
        }),
      );
      return;
    }
    (req as ScopedRequest)[CALLER_SCOPES] = scopes;
    next();
  };
}

/** A route's first handler: 403 in the `Error` shape for a known caller outside `scope` (and for one never authenticated). */
export function requireInternalScope(scope: InternalScope) {
  return function assertInternalScope(req: Request, _res: Response, next: NextFunction): void {
    if ((req as ScopedRequest)[CALLER_SCOPES]?.has(scope) !== true) {
      next(new Forbidden('This credential may not call this route'));
      return;
    }
    next();
  };
}
