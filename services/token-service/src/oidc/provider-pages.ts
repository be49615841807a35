/**
 * The token service's pages (sign-in, its errors, sign-out), in the portal's look: the page
 * shell, header and stylesheet of `@plant/shared` (`renderPage`), the stylesheet served by this
 * service under SIGN_IN_ASSETS. oidc-provider's own pages (errors, sign-out) are rendered here
 * through its configuration hooks; the sign-in form's routes use the same pieces.
 */
import { createHash } from 'node:crypto';
import { html, Html, renderPage } from '@plant/shared/page-look';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { isTenantName } from '@plant/shared/api';

/**
 * Where this service serves the shared stylesheet: under `/realms/`, the only prefix the ingress
 * routes to it (k8s/base/ingress.yaml), in a segment no realm can be named (`_` is not in tenant
 * names), so it never reaches a realm's provider and no tenant can shadow it.
 */
export const SIGN_IN_ASSETS = '/realms/_assets';

/** What a realm's pages know of it, set on each realm's provider (realm-provider.ts). */
export interface RealmPageContext {
  tenant: string;
  portalUrl: string;
}

/**
 * No framing, no inline style: the stylesheet comes from this origin. No scripts, but for the
 * one line a page names by its digest (`scriptHash`, the sign-out page's) or, with OWN_SCRIPTS,
 * the files this service serves (the passkey pages'). form-action also
 * governs the redirects that follow a form post (sign-in and sign-out end at the portal), so
 * the portal's origin is allowed besides 'self', and on a sign-in page the origin the sign-in
 * redirects to (plantctl's loopback listener for `login --browser`).
 */
export function pageSecurityPolicy(
  portalOrigin: string,
  scriptHash?: string,
  redirectOrigin?: string,
): string {
  const scripts = scriptHash === undefined ? '' : ` script-src '${scriptHash}';`;
  const redirect = redirectOrigin === undefined ? '' : ` ${redirectOrigin}`;
  return `default-src 'none';${scripts} style-src 'self'; form-action 'self' ${portalOrigin}${redirect}; base-uri 'none'; frame-ancestors 'none'`;
}

/**
 * The headers of every page of this service: never cached (a form carries a CSRF field), never
 * framed. `redirectOrigin`: a sign-in page's, where its sign-in ends (the origin of the
 * interaction's redirect URI, which oidc-provider checked against the client's registration:
 * plantctl's loopback listener), so the redirect after its last form is not blocked.
 */
export function pageHeaders(
  portalOrigin: string,
  scriptHash?: string,
  redirectOrigin?: string,
): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': pageSecurityPolicy(portalOrigin, scriptHash, redirectOrigin),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

/** A whole page of this service. `tenant` shows in the header only when it names a realm that exists. */
export function page(title: string, body: Html, tenant?: string, scripts?: string[]): string {
  return renderPage({ title, assetsDir: SIGN_IN_ASSETS, tenant, body, scripts });
}

/** The script source of pages that load this service's own scripts (the passkey ceremonies): `script-src 'self'`. */
export const OWN_SCRIPTS = 'self';

export interface PageLink {
  href: string;
  text: string;
}

/** One message in a card, with the way back (to the portal, or to start the sign-in again). */
export function messageCard(heading: string, message: string | Html, link?: PageLink): Html {
  return html`<section class="card narrow">
  <h1>${heading}</h1>
  <p>${message}</p>
  ${link ? html`<p><a class="button" href="${link.href}">${link.text}</a></p>` : ''}
</section>`;
}

const base = (portalUrl: string) => portalUrl.replace(/\/+$/, '');

/** The portal's tenant picker: where a person goes who has no valid sign-in to continue. */
export const portalLink = (portalUrl: string): PageLink => ({
  href: `${base(portalUrl)}/`,
  text: 'Go to the admin portal',
});

/** A new sign-in to the same realm, started by the portal. */
export const signInAgainLink = (portalUrl: string, tenant: string): PageLink => ({
  href: `${base(portalUrl)}/login?tenant=${encodeURIComponent(tenant)}`,
  text: 'Sign in again',
});

/**
 * The 404 a person gets for a realm that does not exist: the same status and the same answer
 * for any name that is not a realm (a program gets `{"error":404,...}` instead). The name is
 * echoed only when it is a well-formed tenant name (escaped either way).
 */
export function unknownRealmPage(tenant: string, portalUrl: string): string {
  const message = isTenantName(tenant)
    ? html`There is no Plant Store tenant named <strong>${tenant}</strong>. Check the tenant name, or ask your administrator for the sign-in address.`
    : 'This address does not lead to a Plant Store tenant. Check the link, or start from the admin portal.';
  return page('Unknown account', messageCard('Unknown account', message, portalLink(portalUrl)));
}

function pageContextOf(ctx: KoaContextWithOIDC): RealmPageContext | undefined {
  return (ctx.oidc?.provider as unknown as { pageContext?: RealmPageContext } | undefined)
    ?.pageContext;
}

/** Sets a page's headers on an oidc-provider answer (the realm's CSP); its page context, if any. */
export function setPageHeaders(
  ctx: KoaContextWithOIDC,
  scriptHash?: string,
): RealmPageContext | undefined {
  const context = pageContextOf(ctx);
  ctx.type = 'html';
  for (const [name, value] of Object.entries(
    pageHeaders(context ? new URL(context.portalUrl).origin : "'none'", scriptHash),
  ))
    ctx.set(name, value);
  return context;
}

/** Routes whose callers are programs: their errors stay JSON (RFC 6749 §5.2) whatever Accept says. */
const API_ROUTES = new Set([
  'token',
  'userinfo',
  'jwks',
  'discovery',
  'device_authorization',
  'revocation',
]);

export async function renderErrorPage(
  ctx: KoaContextWithOIDC,
  out: { error?: string; error_description?: string },
): Promise<void> {
  if (API_ROUTES.has(ctx.oidc?.route ?? '')) {
    ctx.type = 'json';
    ctx.body = out;
    return;
  }
  if (ctx.oidc?.route === 'end_session') {
    renderSignOutRefusedPage(ctx, out);
    return;
  }
  sendErrorPage(ctx, setPageHeaders(ctx), out);
}

/**
 * The same error page for a request refused before oidc-provider has read it (no `ctx.oidc`
 * yet: the realm's page context is given), e.g. an authorization request over its bounds.
 */
export function renderRefusalPage(
  ctx: { type: string; body: unknown; set(name: string, value: string): void },
  context: RealmPageContext | undefined,
  out: { error: string; error_description: string },
): void {
  ctx.type = 'html';
  for (const [name, value] of Object.entries(
    pageHeaders(context ? new URL(context.portalUrl).origin : "'none'"),
  ))
    ctx.set(name, value);
  sendErrorPage(ctx, context, out);
}

function sendErrorPage(
  ctx: { body: unknown },
  context: RealmPageContext | undefined,
  out: { error?: string; error_description?: string },
): void {
  ctx.body = errorPage(context, out);
}

/** The sign-in error page; `context` gives the realm's name in the header and the way back to the portal. */
export function errorPage(
  context: Partial<RealmPageContext> | undefined,
  out: { error?: string; error_description?: string },
): string {
  const message = html`This sign-in cannot continue: ${out.error_description ?? out.error ?? 'the request was not valid'}. Start again from the admin portal.`;
  return page(
    'Sign-in error',
    messageCard(
      'Something went wrong',
      message,
      context?.portalUrl === undefined ? undefined : portalLink(context.portalUrl),
    ),
    context?.tenant,
  );
}

/** Presses the sign-out page's button as soon as the page is read (the script sits after it). */
const SIGN_OUT_SCRIPT = "document.getElementById('sign-out').click();";
/** The CSP source that allows SIGN_OUT_SCRIPT and nothing else. */
export const SIGN_OUT_SCRIPT_HASH = `sha256-${createHash('sha256').update(SIGN_OUT_SCRIPT).digest('base64')}`;

/**
 * Whether this sign-out was asked for by the relying party of the very sign-in it ends: its
 * `id_token_hint` (signature and audience checked by oidc-provider before this page is drawn)
 * names the account signed in here. That is the portal's own sign-out, which the person has
 * already confirmed there; a link anyone can send (no hint, or the hint of another account)
 * still gets the question.
 */
function hintNamesSignedInAccount(ctx: KoaContextWithOIDC): boolean {
  const sub = ctx.oidc.entities.IdTokenHint?.payload.sub;
  const accountId = ctx.oidc.session?.accountId;
  return typeof sub === 'string' && typeof accountId === 'string' && sub === accountId;
}

/**
 * A sign-out request oidc-provider refused: most often the portal's hint, an ID token the realm
 * can no longer verify because it changed its signing key or algorithm since the sign-in (the
 * portal session lives longer than a retired key is kept). The person meant to sign out and the
 * session here is still open: the page leads to the plain sign-out question, not a dead end.
 */
function renderSignOutRefusedPage(
  ctx: KoaContextWithOIDC,
  out: { error?: string; error_description?: string },
): void {
  const context = setPageHeaders(ctx);
  const message = html`This sign-out link could not be used (${out.error_description ?? out.error ?? 'the request was not valid'}), so your sign-in on this browser may still be open.`;
  ctx.body = page(
    'Sign out',
    messageCard('Finish signing out', message, {
      href: ctx.oidc.urlFor('end_session'),
      text: 'Sign out',
    }),
    context?.tenant,
  );
}

export async function renderLogoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  if (hintNamesSignedInAccount(ctx)) {
    renderSigningOutPage(ctx, form);
    return;
  }
  const context = setPageHeaders(ctx);
  // `form` is oidc-provider's hidden form (its action and xsrf field); the buttons submit it.
  const body = html`<section class="card narrow">
  <h1>Sign out?</h1>
  <p>End your sign-in to the Plant Store tenant${context ? html` <strong>${context.tenant}</strong>` : ''} on this browser.</p>
  ${new Html(form)}
  <div class="button-row">
    <button autofocus type="submit" form="op.logoutForm" value="yes" name="logout" class="button button-primary">Yes, sign me out</button>
    <button type="submit" form="op.logoutForm" class="button">No, stay signed in</button>
  </div>
</section>`;
  ctx.body = page('Sign out', body, context?.tenant);
}

/**
 * The portal's sign-out, carried through: oidc-provider ends its session only on a form post
 * with the xsrf value it put in `form`, so the page posts that form itself (SIGN_OUT_SCRIPT, the
 * only script this CSP allows). Without scripts the same button is there to press.
 */
function renderSigningOutPage(ctx: KoaContextWithOIDC, form: string): void {
  const context = setPageHeaders(ctx, SIGN_OUT_SCRIPT_HASH);
  const body = html`<section class="card narrow">
  <h1>Signing you out</h1>
  <p>Ending your sign-in to the Plant Store tenant${context ? html` <strong>${context.tenant}</strong>` : ''} on this browser.</p>
  ${new Html(form)}
  <p><button autofocus id="sign-out" type="submit" form="op.logoutForm" value="yes" name="logout" class="button button-primary">Sign out</button></p>
</section>
${new Html(`<script>${SIGN_OUT_SCRIPT}</script>`)}`;
  ctx.body = page('Signing out', body, context?.tenant);
}

export async function renderLogoutSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  const context = setPageHeaders(ctx);
  ctx.body = page(
    'Signed out',
    messageCard(
      'You are signed out',
      'Your sign-in on this browser has ended.',
      context && portalLink(context.portalUrl),
    ),
    context?.tenant,
  );
}
