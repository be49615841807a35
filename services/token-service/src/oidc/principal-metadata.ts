/**
 * What a service account's client carries into oidc-provider (its role, grants, token version,
 * delegations) and the scopes that follow from it: read by the token claims, the exchange and
 * the workload subject, so they live apart from the provider's configuration.
 */
import type { Grant, ServiceAccountRole } from '@plant/shared/token-service-client';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/** Client metadata property carrying what the token's claims need, consistent with the digest it came with. */
export const PRINCIPAL_METADATA = 'plant_principal';

export interface PrincipalMetadata {
  type: 'service_account';
  role: ServiceAccountRole;
  grants: Grant[];
  version: number;
  /** May ask for the Shared Signals scopes. */
  receiveSignals: boolean;
  /** Where it may act for others (token exchange), per target audience. */
  delegations: readonly { audience: string; scope: string }[];
}

export const ROLE_SCOPES: Record<string, string> = {
  View: 'plants:read',
  Edit: 'plants:read plants:write',
  'Account Admin': 'plants:read plants:write',
};

const KNOWN_RESOURCE_SCOPES = new Set(['plants:read', 'plants:write']);
/**
 * The CAEP interoperability profile's scopes for a receiver (stream configuration; reading it,
 * status and polling): only an account an Account Admin allowed to receive signals may ask for
 * them, and only by asking (the default scope never carries them).
 */
export const SIGNAL_SCOPES = ['ssf.manage', 'ssf.read'] as const;
const SIGNAL_SCOPE_SET = new Set<string>(SIGNAL_SCOPES);

/**
 * A service account's scope: its role's, and `plants:write` too for a View account with edit
 * grants. Resource servers let a grant create only with `plants:write` in the token (a scope
 * narrows what the role and grants allow, @plant/resource-auth), so without it here a grant
 * could never be used; the View role itself still writes nothing (hasRole checks the role first).
 */
export function serviceAccountScope(role: string, grants: readonly Grant[]): string {
  const scope = ROLE_SCOPES[role]!;
  return grants.length > 0 && !scope.split(' ').includes('plants:write')
    ? `${scope} plants:write`
    : scope;
}

/**
 * Client credentials without `scope` get the account's scope (`serviceAccountScope`, RFC 6749 §3.3 default);
 * unknown scope values are refused with invalid_scope rather than silently dropped.
 */
export function applyClientCredentialsScope(
  ctx: KoaContextWithOIDC,
  principal: PrincipalMetadata,
): void {
  const params = ctx.oidc.params as Record<string, unknown>;
  const requested = typeof params.scope === 'string' ? params.scope.split(' ').filter(Boolean) : [];
  if (requested.length === 0) {
    params.scope = serviceAccountScope(principal.role, principal.grants);
    return;
  }
  for (const scope of requested) {
    if (KNOWN_RESOURCE_SCOPES.has(scope)) continue;
    if (SIGNAL_SCOPE_SET.has(scope) && principal.receiveSignals) continue;
    throw new errors.InvalidScope('requested scope is not allowed', scope);
  }
}

/** The principal a service account's client carries (`PRINCIPAL_METADATA`); none for a person's clients. */
export function principalOf(client: unknown): PrincipalMetadata | undefined {
  return (client as Record<string, unknown> | undefined)?.[PRINCIPAL_METADATA] as
    | PrincipalMetadata
    | undefined;
}
