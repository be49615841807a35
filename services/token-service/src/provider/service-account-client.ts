import type { Grant, ServiceAccountRole } from '@plant/shared';
import type { ClientCredentialRow } from '../data-access/service-account-repository.js';

/** Client metadata property carrying what the token's claims need, consistent with the digest it came with. */
export const PRINCIPAL_METADATA = 'plant_principal';

export interface PrincipalMetadata {
  type: 'service_account';
  role: ServiceAccountRole;
  grants: Grant[];
  version: number;
}

export const ROLE_SCOPES: Record<string, string> = {
  View: 'plants:read',
  Edit: 'plants:read plants:write',
  'Account Admin': 'plants:read plants:write',
};

/**
 * A service account as an oidc-provider client. `client_secret` holds the HMAC digest,
 * never the secret: `compareClientSecret` is replaced to compare digests, and no
 * feature that would use the secret as a key (client_secret_jwt, HS* algorithms) is enabled.
 */
export function serviceAccountClientMetadata(row: ClientCredentialRow): Record<string, unknown> {
  const principal: PrincipalMetadata = { type: 'service_account', role: row.role, grants: row.grants, version: row.token_version };
  return {
    client_id: row.sub,
    client_secret: row.secret_digest,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: ROLE_SCOPES[row.role],
    [PRINCIPAL_METADATA]: principal,
  };
}
