/** Names shared by the service and the CLI (kept free of oidc-provider so the CLI stays light). */
export { PORTAL_CLIENT_ID } from '@plant/shared';

/** Key rotations (by the CLI, another process) are announced here so every replica reloads the realm. */
export const KEY_ROTATION_CHANNEL = 'plantstore:token-service:keys';

export function issuerOf(authUrl: string, tenant: string): string {
  return `${authUrl.replace(/\/+$/, '')}/realms/${tenant}`;
}

export function realmPath(tenant: string): string {
  return `/realms/${tenant}`;
}

/** The token introspection endpoint under a realm's issuer (RFC 7662, at Keycloak's path). */
export const INTROSPECTION_PATH = '/protocol/openid-connect/token/introspect';
