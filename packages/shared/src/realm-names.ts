/** Names every service agrees on: what a tenant (realm) may be called, and the portal's OAuth client. */

/** Tenant (realm) names: DNS-label-like, 1..63 characters (docs/architecture.md). */
export const TENANT_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isTenantName(value: string): boolean {
  return TENANT_NAME_PATTERN.test(value);
}

/** The public OAuth client each realm has for the account-admin portal (docs/architecture.md, "Sign-in"). */
export const PORTAL_CLIENT_ID = 'portal';
