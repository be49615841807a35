/**
 * How a sign-in page is sent: its headers (a page with a passkey form may load this origin's
 * scripts, no other page runs any), the cheap 429 of a refusal, and the pages that end a
 * sign-in with the way to start a new one.
 */
import type { Response } from 'express';
import { messageCard, OWN_SCRIPTS, page, pageHeaders, signInAgainLink } from '../oidc/index.js';
import type { PageAnswers } from './interaction-kit.js';

/**
 * Where this request's sign-in ends, as `load` found it (interaction-kit.ts): a form on its page
 * leads there through redirects, which the page's form-action must allow (Chromium blocks a
 * form's redirect chain that leaves it). Only an http(s) origin is named; anything else, none.
 */
export function rememberRedirectOrigin(res: Response, redirectUri: unknown): void {
  if (typeof redirectUri !== 'string') return;
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'http:' || url.protocol === 'https:')
      res.locals.signInRedirectOrigin = url.origin;
  } catch {
    // Not a URL: oidc-provider refused it before any page was shown.
  }
}

function redirectOriginOf(res: Response): string | undefined {
  const origin = res.locals.signInRedirectOrigin;
  return typeof origin === 'string' ? origin : undefined;
}

export function interactionPages(portalUrl: string): PageAnswers {
  const portalOrigin = new URL(portalUrl).origin;
  const headers = pageHeaders(portalOrigin);
  // Pages with a passkey form load this origin's scripts (renderPage writes them in the head):
  // only those pages allow `script-src 'self'`; every other page runs no script at all.
  const scriptHeaders = pageHeaders(portalOrigin, OWN_SCRIPTS);
  const loadsScripts = (body: string) => body.includes('<script type="module" src="/');

  const refusalHeaders = Object.entries({
    ...headers,
    'content-type': 'text/html; charset=utf-8',
  });

  function sendRefusalPage(res: Response, retryAfterSeconds: number, body: string): void {
    for (const [name, value] of refusalHeaders) res.setHeader(name, value);
    res.setHeader('retry-after', String(retryAfterSeconds));
    res.setHeader('content-length', Buffer.byteLength(body));
    res.statusCode = 429;
    res.end(body);
  }

  function sendPage(res: Response, status: number, body: string): void {
    const redirectOrigin = redirectOriginOf(res);
    const scripts = loadsScripts(body) ? OWN_SCRIPTS : undefined;
    res
      .set(
        redirectOrigin === undefined || redirectOrigin === portalOrigin
          ? scripts === undefined
            ? headers
            : scriptHeaders
          : pageHeaders(portalOrigin, scripts, redirectOrigin),
      )
      .status(status)
      .type('html')
      .send(body);
  }

  /** A page that ends this sign-in, with the way to start a new one. */
  function sendEnd(
    res: Response,
    status: number,
    tenant: string,
    heading: string,
    message: string,
  ): void {
    sendPage(
      res,
      status,
      page(heading, messageCard(heading, message, signInAgainLink(portalUrl, tenant)), tenant),
    );
  }

  function sendInvalidForm(res: Response, tenant: string): void {
    sendEnd(
      res,
      403,
      tenant,
      'This sign-in form is not valid',
      'It was not sent from the sign-in page this browser opened. Start a new sign-in.',
    );
  }

  return { sendPage, sendRefusalPage, sendEnd, sendInvalidForm };
}
