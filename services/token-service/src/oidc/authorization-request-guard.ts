/**
 * The authorization endpoint is the one place an anonymous caller makes this service store
 * something: each request that reaches oidc-provider may write an interaction row (its
 * parameters, kept for the interaction's lifetime) before anyone has signed in. So before
 * oidc-provider reads a request there, its size is bounded (oidc-provider has no such option:
 * it keeps a `state` of tens of kilobytes) and it takes a start from the source's and everyone's
 * budget (`SourceBudget`, shared by the replicas): the rows one address, and all of them, can
 * leave are bounded whatever they send.
 */
import type { SourceBudget } from '@plant/shared/security';
import type { ProviderContext } from './oidc-provider-internals.js';
import { renderRefusalPage, type RealmPageContext } from './provider-pages.js';

/**
 * The authorization route as oidc-provider's router matches it: ASCII case folded, one
 * trailing slash tolerated (no `u` flag: a non-ASCII letter never folds to an ASCII one,
 * as in its router), on the raw path (it does not percent-decode either).
 */
const AUTHORIZATION_PATH = /^\/protocol\/openid-connect\/auth\/?$/i;

/**
 * oidc-provider's resume route (`/auth/:uid`, which a GET of `/auth/device`, the device
 * authorization address, also matches). It reads the interaction and its cookies, never the
 * query; but when it fails, oidc-provider's error handler looks up a `client_id` from the query
 * and then reads parameters a resume does not have (a TypeError: a 500). So a resume's query is
 * dropped before oidc-provider sees it: the failure is its 400 page, whatever the query holds.
 */
const RESUME_PATH = /^\/protocol\/openid-connect\/auth\/[^/]+\/?$/i;

/** Whether a path under a realm (`/protocol/...`) is its authorization endpoint, as oidc-provider routes it. */
export const isAuthorizationPath = (path: string): boolean => AUTHORIZATION_PATH.test(path);

/** The words of the 429: the same from the realm mount's early refusal (realm-routes.ts) and from here. */
export const TOO_MANY_STARTS = 'too many sign-ins were started from this network; try again later';

/** The whole request's parameters: the query string, or a POSTed form's declared length. */
export const AUTHORIZATION_REQUEST_MAX = 4096;
/** Each parameter's value (`state`, `nonce`, `scope`, `code_challenge`, ...), unless longer below. */
export const PARAMETER_MAX = 512;
/** URLs and tokens a legitimate client may send longer. */
const LONGER_PARAMETERS: Readonly<Record<string, number>> = {
  redirect_uri: 2048,
  id_token_hint: 2048,
  claims: 2048,
};

type Ctx = ProviderContext;

export interface AuthorizationRequestGuardDeps {
  budget: SourceBudget;
  /** The realm's pages: its name, the way back to the portal. */
  pageContext: RealmPageContext;
}

/** What is wrong with the request's size, if anything: the `error_description` of a 400. */
function oversize(ctx: Ctx): string | undefined {
  if (ctx.method === 'POST') {
    const length = ctx.request.length;
    if (length === undefined)
      return 'a POSTed authorization request must declare its Content-Length';
    return length > AUTHORIZATION_REQUEST_MAX
      ? `the authorization request is longer than ${AUTHORIZATION_REQUEST_MAX} bytes`
      : undefined;
  }
  if (ctx.querystring.length > AUTHORIZATION_REQUEST_MAX)
    return `the authorization request is longer than ${AUTHORIZATION_REQUEST_MAX} characters`;
  for (const [name, value] of Object.entries(ctx.query)) {
    const max = LONGER_PARAMETERS[name] ?? PARAMETER_MAX;
    const values = Array.isArray(value) ? value : [value ?? ''];
    if (!values.some((v) => v.length > max)) continue;
    // A name is shown back only when it is plain (as OAuth's are): the page never echoes a long or odd one.
    return `${/^[a-z_]{1,32}$/.test(name) ? `the ${name} parameter` : 'a parameter'} is longer than ${max} characters`;
  }
  return undefined;
}

/** The 400 (too large) and 429 (over budget) pages, oidc-provider's error page for this endpoint (it redirects an error only once it has checked the client's redirect_uri). */
function refuse(
  ctx: Ctx,
  context: RealmPageContext,
  status: 400 | 429,
  error: string,
  description: string,
): void {
  ctx.status = status;
  renderRefusalPage(ctx, context, { error, error_description: description });
}

export function guardAuthorizationRequests(deps: AuthorizationRequestGuardDeps) {
  return async function guardAuthorizationRequest(
    ctx: Ctx,
    next: () => Promise<unknown>,
  ): Promise<void> {
    if (!isAuthorizationPath(ctx.path)) {
      if (ctx.method === 'GET' && RESUME_PATH.test(ctx.path)) ctx.querystring = '';
      await next();
      return;
    }
    const tooLarge = oversize(ctx);
    if (tooLarge !== undefined) {
      refuse(ctx, deps.pageContext, 400, 'invalid_request', tooLarge);
      return;
    }
    const over = await deps.budget.take(ctx.ip);
    if (over !== undefined) {
      ctx.set('Retry-After', String(over.retryAfterSeconds));
      refuse(ctx, deps.pageContext, 429, 'temporarily_unavailable', TOO_MANY_STARTS);
      return;
    }
    await next();
  };
}
