/** Names shared by the service and the CLI (kept free of oidc-provider so the CLI stays light). */
export { PORTAL_CLIENT_ID } from '@plant/shared/api';

/** Key rotations (by the CLI, another process) are announced here so every replica reloads the realm. */
export const KEY_ROTATION_CHANNEL = 'plantstore:token-service:keys';

/** The message announcing that a realm's signing keys changed, for both that send it: the CLI and the internal API. */
export function keyChangeMessage(tenant: string): string {
  return JSON.stringify({ tenant });
}

/** The realm a key-change message names; undefined for anything else (the channel is not trusted to be well-formed). */
export function parseKeyChangeMessage(message: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(message);
    const tenant = (parsed as { tenant?: unknown } | null)?.tenant;
    return typeof tenant === 'string' ? tenant : undefined;
  } catch {
    return undefined;
  }
}

export function issuerOf(authUrl: string, tenant: string): string {
  return `${authUrl.replace(/\/+$/, '')}/realms/${tenant}`;
}

export function realmPath(tenant: string): string {
  return `/realms/${tenant}`;
}

/** The token introspection endpoint under a realm's issuer (RFC 7662, at Keycloak's path). */
export const INTROSPECTION_PATH = '/protocol/openid-connect/token/introspect';
