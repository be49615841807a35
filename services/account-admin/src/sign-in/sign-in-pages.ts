/** The sign-in wing's own pages: the tenant picker that starts a sign-in, and the sign-out confirmation. */
import { html } from '@plant/shared/page-look';
import { layout } from '../portal/index.js';
import type { Session } from '../sessions/index.js';

export function tenantPickerPage({
  error,
  tenant = '',
  returnTo,
  ended = false,
}: {
  error?: string;
  tenant?: string;
  returnTo?: string;
  /** The browser's session had ended (expired, or ended elsewhere). */
  ended?: boolean;
}): string {
  return layout({
    title: 'Sign in',
    body: html`<section class="card narrow">
  <h1>Sign in to the admin portal</h1>
  ${ended ? html`<p class="alert alert-info" role="status" id="session-ended"><strong>Your session has ended.</strong> Sign in again to carry on where you were.</p>` : ''}
  <p class="muted">Enter the name of your tenant: your organisation's space in Plant Store. You will sign in on its sign-in page.</p>
  ${error ? html`<p class="alert alert-error" role="alert">${error}</p>` : ''}
  <form method="get" action="/login" class="stack">
    <label for="tenant">Tenant name</label>
    <input id="tenant" name="tenant" type="text" required maxlength="63"
      autocomplete="organization" autocapitalize="none" spellcheck="false" value="${tenant}" aria-describedby="tenant-help" autofocus>
    <p id="tenant-help" class="hint">Lower-case letters, digits and hyphens, for example <code>acme</code>.</p>
    ${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : ''}
    <button type="submit" class="button button-primary">Continue</button>
  </form>
</section>`,
  });
}

export function signOutPage(session: Session): string {
  return layout({
    title: 'Sign out',
    session,
    body: html`<section class="card narrow"><h1>Sign out</h1><p>Sign out of the admin portal of <strong>${session.tenant}</strong>?</p>
<p><button type="button" class="button button-primary" data-action="sign-out">Sign out</button></p></section>`,
  });
}
