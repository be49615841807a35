import type { KoaContextWithOIDC } from 'oidc-provider';

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}.error{color:#b00020}</style>
</head>
<body>
${body}
</body>
</html>`;
}

/**
 * No scripts, no framing. form-action also governs the redirects that follow a form post
 * (sign-in and sign-out end at the portal), so the portal's origin is allowed besides 'self'.
 */
export function pageSecurityPolicy(portalOrigin: string): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${portalOrigin}; frame-ancestors 'none'`;
}

const HTML_HEADERS = (ctx: KoaContextWithOIDC) => {
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Content-Security-Policy', pageSecurityPolicy(portalOriginOf(ctx)));
};

/** The portal's origin, from the realm's only redirecting client. */
function portalOriginOf(ctx: KoaContextWithOIDC): string {
  return (ctx.oidc?.provider as unknown as { portalOrigin?: string } | undefined)?.portalOrigin ?? "'none'";
}

/** Routes whose callers are programs: their errors stay JSON (RFC 6749 §5.2) whatever Accept says. */
const API_ROUTES = new Set(['token', 'userinfo', 'jwks', 'discovery']);

export async function renderErrorPage(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }): Promise<void> {
  if (API_ROUTES.has(ctx.oidc?.route ?? '')) {
    ctx.type = 'json';
    ctx.body = out;
    return;
  }
  HTML_HEADERS(ctx);
  ctx.body = page('Sign-in error', `<h1>Something went wrong</h1><p class="error">${escapeHtml(out.error_description ?? out.error ?? 'error')}</p>`);
}

export async function renderLogoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  HTML_HEADERS(ctx);
  ctx.body = page('Sign out', `<h1>Sign out?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button> <button type="submit" form="op.logoutForm">No, stay signed in</button>`);
}

export async function renderLogoutSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  HTML_HEADERS(ctx);
  ctx.body = page('Signed out', '<h1>You are signed out</h1>');
}
