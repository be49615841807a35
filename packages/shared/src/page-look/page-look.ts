/**
 * One look for every page a person sees, whichever service serves it: the stylesheet, the
 * header (the product's name, the tenant) and the page around them. The portal (account-admin)
 * and the token service's sign-in and error pages are built with `renderPage`, and each serves
 * the stylesheet itself with `stylesheetRoute`, on its own origin, so each page's CSP can stay
 * `style-src 'self'` with no inline style.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { html, type Html } from './html.js';
import { STYLESHEET } from './look-stylesheet.js';

export { STYLESHEET };
import type { Route } from '../http/index.js';

export const PRODUCT_NAME = 'Plant Store';

/**
 * The stylesheet's file name carries a digest of its content, so browsers may keep it for good:
 * a changed stylesheet is a new name. (During a rolling deploy a page from an older replica may
 * ask a newer one for the older name and get a 404: that page shows unstyled once.)
 */
export const STYLESHEET_FILE = `plant-store.${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 16)}.css`;

const STYLESHEET_BYTES = Buffer.from(STYLESHEET, 'utf8');
const A_YEAR_SECONDS = 365 * 24 * 3600;

/** Where the stylesheet is, for a service that serves it under `dir` (`/assets`). */
export function stylesheetHref(dir: string): string {
  return `${dir}/${STYLESHEET_FILE}`;
}

/**
 * `GET <dir>/<STYLESHEET_FILE>` (and HEAD): one literal path, so nothing of the request reaches
 * a file name (the text is in memory, nothing is read from disk); any other name under `dir` is
 * whatever the service answers there (a 404). Other methods: 405.
 */
export function stylesheetRoute(dir: string): Route {
  return {
    method: 'GET',
    path: stylesheetHref(dir),
    handlers: [
      function sendStylesheet(_req: Request, res: Response): void {
        res.setHeader('cache-control', `public, max-age=${A_YEAR_SECONDS}, immutable`);
        res.setHeader('x-content-type-options', 'nosniff');
        res.type('text/css').send(STYLESHEET_BYTES);
      },
    ],
  };
}

export interface HeaderOptions {
  /** The part of the product, after its name ("admin" in the portal). */
  area?: string | undefined;
  /** The tenant (account) the page belongs to. */
  tenant?: string | undefined;
  /** The header's other side: the portal's navigation and account menu. */
  end?: Html | undefined;
}

/** The bar at the top of every page: the product's name, its area, the tenant. */
export function renderHeader({ area, tenant, end }: HeaderOptions): Html {
  return html`<header class="topbar">
  <div class="brand"><span class="logo" aria-hidden="true">❦</span> ${PRODUCT_NAME}${area ? html` <span class="brand-sub">${area}</span>` : ''}${tenant ? html` <span class="tenant"><span class="sr-only">Tenant </span>${tenant}</span>` : ''}</div>
  ${end}
</header>`;
}

export interface PageOptions extends Omit<HeaderOptions, 'end'> {
  /** The page's own title; the product's name follows it in the window title. */
  title: string;
  /** Where this service serves the stylesheet (`stylesheetRoute(dir)`). */
  assetsDir: string;
  /** Same-origin ES module scripts (CSP `script-src 'self'`; deferred, as modules are); the sign-in pages have none. */
  scripts?: readonly string[];
  headerEnd?: Html | undefined;
  body: Html;
}

/** A whole page: the stylesheet, a skip link, the header, and `body` as the page's main content. */
export function renderPage({
  title,
  assetsDir,
  scripts = [],
  area,
  tenant,
  headerEnd,
  body,
}: PageOptions): string {
  return `<!doctype html>
${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${PRODUCT_NAME}${area ? ` ${area}` : ''}</title>
<link rel="stylesheet" href="${stylesheetHref(assetsDir)}">
${scripts.map((src) => html`<script type="module" src="${src}"></script>\n`)}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${renderHeader({ area, tenant, end: headerEnd })}
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>`}`;
}
