/**
 * The portal as an OpenID Connect relying party of each tenant's realm (`openid-client` v6):
 * public client `portal`, authorization code + PKCE (docs/architecture.md, "Sign-in").
 *
 * The issuer is `{AUTH_URL}/realms/<tenant>`, the address browsers use. Inside a deployment
 * that address may not reach the token service (localhost in a container), so server-side
 * calls (discovery, code exchange, JWKS) go to AUTH_INTERNAL_URL when set. oidc-provider
 * derives its endpoint URLs from the request's host, so endpoints discovered through the
 * internal address are mapped back to the public one before a browser is sent there.
 * The issuer check stays intact: `iss` must still be the public issuer.
 */
import { PORTAL_CLIENT_ID, SIGNING_ALGORITHMS } from '@plant/shared/api';
import * as oidc from 'openid-client';

export { PORTAL_CLIENT_ID };

export interface OidcClientsOptions {
  authUrl: string;
  authInternalUrl?: string | undefined;
  portalUrl: string;
  /** Seconds per call (default 5). */
  timeoutSec?: number;
}

export interface OidcClients {
  configFor(tenant: string): Promise<oidc.Configuration>;
  redirectUri: string;
  /** A URL of the token service as a browser must see it. */
  toPublic(url: URL): URL;
}

const CONFIG_TTL_MS = 10 * 60_000;

/**
 * The ID token algorithms the portal accepts: every one a realm may sign with. Without this,
 * openid-client holds the ID token to the realm's discovery document, which is cached for
 * CONFIG_TTL_MS: for that long after an operator switched a realm's algorithm, sign-ins would
 * fail. The ID token comes straight from the token endpoint over the back channel, so its
 * algorithm is a consistency check, not what secures it. oauth4webapi takes a list here
 * (`checkSigningAlgorithm`); its type says a string.
 */
const ID_TOKEN_ALGORITHMS = [...SIGNING_ALGORITHMS] as unknown as string;

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export function createOidcClients({
  authUrl,
  authInternalUrl,
  portalUrl,
  timeoutSec = 5,
}: OidcClientsOptions): OidcClients {
  const publicBase = trimSlash(authUrl);
  const internalBase = trimSlash(authInternalUrl ?? authUrl);
  const redirectUri = `${trimSlash(portalUrl)}/auth/callback`;
  const cache = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

  const rewrite = (url: string, from: string, to: string) =>
    from !== to && (url === from || url.startsWith(`${from}/`))
      ? `${to}${url.slice(from.length)}`
      : url;
  const customFetch: oidc.CustomFetch = (url, options) =>
    fetch(rewrite(url, publicBase, internalBase), options as RequestInit);

  async function discover(tenant: string): Promise<oidc.Configuration> {
    const issuer = new URL(`${publicBase}/realms/${encodeURIComponent(tenant)}`);
    const execute = issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
    return oidc.discovery(
      issuer,
      PORTAL_CLIENT_ID,
      { token_endpoint_auth_method: 'none', id_token_signed_response_alg: ID_TOKEN_ALGORITHMS },
      oidc.None(),
      {
        [oidc.customFetch]: customFetch,
        execute,
        timeout: timeoutSec,
      },
    );
  }

  return {
    redirectUri,
    configFor(tenant) {
      const hit = cache.get(tenant);
      if (hit && Date.now() - hit.at < CONFIG_TTL_MS) return hit.config;
      const config = discover(tenant);
      cache.set(tenant, { at: Date.now(), config });
      // A failed discovery is not remembered: the next sign-in tries again.
      config.catch(() => {
        if (cache.get(tenant)?.config === config) cache.delete(tenant);
      });
      if (cache.size > 1000) cache.delete(cache.keys().next().value!);
      return config;
    },
    toPublic(url) {
      return new URL(rewrite(url.href, internalBase, publicBase));
    },
  };
}
