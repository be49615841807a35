/** Names every service agrees on: what a tenant (realm) may be called, the portal's OAuth client, the signing algorithms. */

/** Tenant (realm) names: DNS-label-like, 1..63 characters (docs/architecture.md). */
export const TENANT_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isTenantName(value: string): boolean {
  return TENANT_NAME_PATTERN.test(value);
}

/** The public OAuth client each realm has for the account-admin portal (docs/architecture.md, "Sign-in"). */
export const PORTAL_CLIENT_ID = 'portal';

/**
 * The public OAuth client each realm has for `plantctl`, the admin CLI: a person's device
 * authorization grant (RFC 8628) or loopback redirect (RFC 8252), docs/device-flow.md.
 */
export const PLANTCTL_CLIENT_ID = 'plantctl';

/** The realms' static clients, which sign people in (every other client id is a service account's). */
export const PERSON_CLIENT_IDS: ReadonlySet<string> = new Set([
  PORTAL_CLIENT_ID,
  PLANTCTL_CLIENT_ID,
]);

/**
 * The algorithms a realm may sign its access and ID tokens with (docs/architecture.md, "Access
 * tokens"): RS256, the default every RFC 9068 party supports, or ES256 (P-256), cheaper to sign
 * and smaller. Resource servers and the portal accept exactly these.
 */
export const SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
export const DEFAULT_SIGNING_ALGORITHM: SigningAlgorithm = 'RS256';

export function isSigningAlgorithm(value: unknown): value is SigningAlgorithm {
  return (SIGNING_ALGORITHMS as readonly unknown[]).includes(value);
}
