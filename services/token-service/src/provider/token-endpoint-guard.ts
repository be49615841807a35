import type Provider from 'oidc-provider';
import { TooManyFailedAuthentications, type ClientAuthThrottle } from './client-auth-throttle.js';

type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];

const TOKEN_PATH = '/protocol/openid-connect/token';
const GRANT_NOT_ALLOWED = 'requested grant type is not allowed for this client';
const ABSENT_CLIENT_AUTH = new Set(['no client authentication mechanism provided', 'client_secret must be provided in the Authorization header']);

function oauthError(ctx: ProviderContext, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

/**
 * RFC 6749 §5.2 codes where oidc-provider answers invalid_request: a grant type the client
 * may not use is unauthorized_client; no client authentication at all is invalid_client (401).
 */
function rewriteTokenErrors(ctx: ProviderContext, issuer: string): void {
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (ctx.status !== 400 || body?.error !== 'invalid_request') return;
  if (body.error_description === GRANT_NOT_ALLOWED) {
    body.error = 'unauthorized_client';
    return;
  }
  if (!ABSENT_CLIENT_AUTH.has(body.error_description ?? '')) return;
  ctx.set('WWW-Authenticate', `Basic realm="${issuer}"`);
  oauthError(ctx, 401, 'invalid_client', 'client authentication is required');
}

/**
 * Wraps every request of a realm's provider: a source over its failure budget is stopped
 * before any work, the token endpoint is POST only, its errors are made RFC 6749 exact,
 * a database outage is 503 (not 500), and an unknown path is a 404 in the Error shape.
 */
export function tokenEndpointGuard(tenant: string, issuer: string, throttle: ClientAuthThrottle) {
  return async function guardRealmRequest(ctx: ProviderContext, next: () => Promise<unknown>): Promise<void> {
    const isToken = ctx.path === TOKEN_PATH;
    if (isToken && ctx.method === 'POST' && !throttle.isClean(ctx.ip)) {
      try {
        await throttle.assertIpAllowed(tenant, ctx.ip, ctx);
      } catch (err) {
        if (!(err instanceof TooManyFailedAuthentications)) throw err;
        oauthError(ctx, 429, err.message, err.error_description);
        return;
      }
    }
    if (isToken && ctx.method !== 'POST' && ctx.method !== 'OPTIONS') {
      ctx.set('Allow', 'POST');
      oauthError(ctx, 405, 'invalid_request', 'the token endpoint accepts POST requests only');
      return;
    }
    await next();
    if (ctx.status === 500 && ctx.state.dependencyUnavailable) {
      // The database, not the request, failed: tell the client to retry rather than blame it.
      ctx.set('Retry-After', '1');
      oauthError(ctx, 503, 'temporarily_unavailable', 'the service is temporarily unavailable; retry shortly');
    }
    if (isToken) rewriteTokenErrors(ctx, issuer);
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = { error: 404, message: 'Not found' };
    }
  };
}
