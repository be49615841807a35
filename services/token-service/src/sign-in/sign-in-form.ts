/**
 * The sign-in form and what it says after an attempt. Every refusal reads the same whichever
 * counter refused (the source address, the account from that source, the account from
 * everywhere) and whether or not the email is registered: an unknown email spends the same
 * budget and gets the same words (sign-in/authenticate-user.ts), so the page tells no more than
 * the `Retry-After` header already does.
 */
import { html, type Html } from '@plant/shared/page-look';
import { page } from '../oidc/index.js';
import { PASSWORD_MAX } from '../passwords/index.js';
import { waitWording } from '../platform/index.js';
import { PASSKEY_SCRIPTS } from '../second-factors/index.js';

/** Longest email (RFC 5321's path limit). */
export const EMAIL_MAX = 254;

export const WRONG_CREDENTIALS = 'Email or password is incorrect. Check both and try again.';

/**
 * The failure budget is spent: when to come back, from the throttle's own wait (the same as
 * `Retry-After`), as a duration and as a UTC clock time rounded up to the minute.
 */
export function pausedMessage(retryAfterSeconds: number, now = Date.now()): Html {
  const at = new Date(Math.ceil((now + retryAfterSeconds * 1000) / 60_000) * 60_000);
  const clock = `${at.toISOString().slice(11, 16)} UTC`;
  return html`Too many failed sign-ins. Signing in is paused for your protection: try again in ${waitWording(retryAfterSeconds)} (after <time datetime="${at.toISOString()}">${clock}</time>).`;
}

export interface FormState {
  /** The email as typed (shown again, so only the password is retyped). */
  email?: string;
  /** Why the last attempt did not sign in. */
  error?: string | Html;
  /** The fields themselves were wrong (not a refusal to check them). */
  invalid?: boolean;
  /** Sign in with a passkey (a form run by the passkey script), when offered. */
  passkey?: Html;
  /**
   * Without `passkey`: the sign-in's own page, linked as the way to a passkey (a refusal's
   * form, which stores no challenge; the page makes one).
   */
  passkeyPage?: string;
}

/** The whole sign-in page of an interaction, posting to its `/login` with the form's CSRF field. */
export function signInFormPage(
  tenant: string,
  uid: string,
  csrf: string,
  { email = '', error, invalid = false, passkey, passkeyPage }: FormState = {},
): string {
  // With the email shown again, the password is what is left to type.
  const focused = email === '' ? 'email' : 'password';
  const state = (field: 'email' | 'password') =>
    html`${invalid ? html` aria-invalid="true"` : ''}${error === undefined ? '' : html` aria-describedby="sign-in-error"`}${field === focused ? html` autofocus` : ''}`;
  return page(
    'Sign in',
    html`<section class="card narrow">
  <h1>Sign in</h1>
  <p class="muted">to the Plant Store tenant <strong>${tenant}</strong></p>
  ${error === undefined ? '' : html`<p id="sign-in-error" class="alert alert-error" role="alert">${error}</p>`}
  <form method="post" action="/realms/${tenant}/interaction/${uid}/login" autocomplete="on" class="stack">
    <input type="hidden" name="csrf" value="${csrf}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required maxlength="${EMAIL_MAX}" value="${email}"${state('email')}>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX}"${state('password')}>
    <button type="submit" class="button button-primary">Sign in</button>
  </form>
  ${
    passkey !== undefined
      ? html`<p class="muted">Or, without a password:</p>
  ${passkey}`
      : passkeyPage !== undefined
        ? html`<p class="muted">Or, without a password: <a href="${passkeyPage}">Use a passkey</a></p>`
        : ''
  }
</section>`,
    tenant,
    passkey === undefined ? undefined : PASSKEY_SCRIPTS,
  );
}
