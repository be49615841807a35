/**
 * The portal's page shell, which every wing's pages render into: the layout (header, navigation,
 * the signed-in person), the message page, the shared confirmation dialog, and how a page is sent.
 */
import { html, renderPage, type Html } from '@plant/shared/page-look';
import type { Response } from 'express';
import type { Role } from '../platform/index.js';

/** Who the shell names in its header: a portal session's person (a `Session` fits). */
export interface PageViewer {
  tenant: string;
  sub: string;
  email: string | null;
  role: Role;
}

/** Where the portal serves its stylesheet (`stylesheetRoute`) and its script. */
export const ASSETS_PATH = '/assets';

interface LayoutOptions {
  title: string;
  session?: PageViewer | undefined;
  active?:
    | 'service-accounts'
    | 'credentials'
    | 'people'
    | 'activity'
    | 'sessions'
    | 'security'
    | 'policy';
  body: Html;
  /** The page's own scripts, after portal.js. */
  scripts?: readonly string[];
}

export function layout({ title, session, active, body, scripts = [] }: LayoutOptions): string {
  const current = (page: LayoutOptions['active']) =>
    active === page ? html`aria-current="page"` : '';
  const nav = session
    ? html`<nav class="nav" aria-label="Settings">
        <a href="/settings/service-accounts" ${current('service-accounts')}>Service accounts</a>
        <a href="/settings/credentials" ${current('credentials')}>Credentials</a>
        ${session.role === 'Account Admin' ? html`<a href="/settings/people" ${current('people')}>People</a>` : ''}
        <a href="/activity" ${current('activity')}>Activity</a>
        <a href="/settings/sessions" ${current('sessions')}>Sessions</a>
        <a href="/settings/security" ${current('security')}>Security</a>
        ${session.role === 'Account Admin' ? html`<a href="/settings/policy" ${current('policy')}>Sign-in policy</a>` : ''}
      </nav>
      <div class="account">
        <span class="who"><span class="email">${session.email ?? session.sub}</span> <span class="badge">${session.role}</span></span>
        <button type="button" class="button button-quiet" data-action="sign-out">Sign out</button>
      </div>`
    : undefined;
  return renderPage({
    title,
    assetsDir: ASSETS_PATH,
    scripts: [`${ASSETS_PATH}/portal.js`, ...scripts],
    area: 'admin',
    tenant: session?.tenant,
    headerEnd: nav,
    body,
  });
}

export function messagePage(
  title: string,
  message: string,
  {
    session,
    link = { href: '/', text: 'Back to sign-in' },
  }: { session?: PageViewer; link?: { href: string; text: string } } = {},
): string {
  return layout({
    title,
    session,
    body: html`<section class="card narrow">
  <h1>${title}</h1>
  <p>${message}</p>
  <p><a class="button" href="${link.href}">${link.text}</a></p>
</section>`,
  });
}

/** The confirmation dialog portal.js's `confirm` opens. */
export const confirmDialog = html`
<dialog id="confirm-dialog" aria-labelledby="confirm-title" aria-describedby="confirm-message">
  <form class="stack" data-form="confirm">
    <h2 id="confirm-title"></h2>
    <p id="confirm-message"></p>
    <p id="confirm-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close autofocus>Cancel</button>
      <button type="submit" class="button" id="confirm-button"></button>
    </div>
  </form>
</dialog>`;

export function sendPage(res: Response, status: number, body: string): void {
  res.status(status).setHeader('cache-control', 'no-store').type('html').send(body);
}
