import { AppError, BadRequest } from '@plant/shared/api';
import type { Principal } from '@plant/resource-auth';

/**
 * What verifies a token for introspection: signature, claims and the versioned revocation, the
 * checks every resource server makes, whatever the token is bound to (the caller checks the
 * DPoP proof, RFC 9449 §6.2). Rejects with a 401 `AppError` for a token that fails them, 503
 * when it cannot tell.
 */
export interface TokenInspector {
  inspect(token: string): Promise<Principal>;
}

/** RFC 7662 §2.2: every claim of a token that is active, or only `active: false`. */
export type IntrospectionAnswer =
  | { active: false }
  | ({ active: true; token_type: 'Bearer' | 'DPoP' } & Record<string, unknown>);

const INACTIVE: IntrospectionAnswer = Object.freeze({ active: false });
/** Longer than any token we mint by far; what is longer is nothing of ours. */
const MAX_TOKEN_LENGTH = 8192;

/**
 * Token introspection (RFC 7662) for a resource server that cannot verify JWTs itself: the same
 * verdict a resource server of ours reaches at this moment, from the same keys and the same live
 * revocation map, so a reset, delete or demotion makes the token inactive as soon as any
 * replica refuses it. A token of another realm than the one asked is inactive (a resource server
 * learns nothing of another tenant's tokens through this realm). Inactive says nothing of why.
 */
export async function introspectToken(
  inspector: TokenInspector,
  tenant: string,
  input: { token?: unknown },
): Promise<IntrospectionAnswer> {
  const { token } = input;
  if (typeof token !== 'string' || token === '') throw new BadRequest('token is required');
  if (token.length > MAX_TOKEN_LENGTH) return INACTIVE;
  let principal: Principal;
  try {
    principal = await inspector.inspect(token);
  } catch (err) {
    if (err instanceof AppError && err.status === 401) return INACTIVE;
    throw err;
  }
  if (principal.tenant !== tenant) return INACTIVE;
  // The token verified, so its payload is ours: every claim of it, as RFC 7662 §2.2 suggests.
  const claims = JSON.parse(
    Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'),
  ) as Record<string, unknown>;
  return { ...claims, active: true, token_type: principal.jkt === undefined ? 'Bearer' : 'DPoP' };
}
