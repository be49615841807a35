/**
 * The second-factor pages of a sign-in: the factor a person holds (passkey, authenticator
 * code or recovery code), the enrolment the realm's policy or the person asks for, and the
 * recovery codes, shown once. Every form posts to its interaction with the form's CSRF field;
 * the passkey forms are run by the service's own script (passkey-script.ts).
 */
import { html, type Html } from '@plant/shared/page-look';
import { page } from '../oidc/index.js';
import { PASSKEY_SCRIPTS } from './passkey-script.js';

/** Longest code read (a recovery code with its hyphens and some spaces). */
export const CODE_MAX = 32;
/** Longest passkey answer read (attestation `none`: well under it). */
export const PASSKEY_RESPONSE_MAX = 12 * 1024;

export const WRONG_CODE = 'That code is not right, or was already used. Check it and try again.';
export const PASSKEY_REFUSED =
  'That passkey could not be verified for this account. Try again, or use another way.';

export interface FormTarget {
  tenant: string;
  uid: string;
  csrf: string;
}

const action = (t: FormTarget, step: string) => `/realms/${t.tenant}/interaction/${t.uid}/${step}`;

function errorLine(error: string | Html | undefined): Html | string {
  return error === undefined
    ? ''
    : html`<p id="factor-error" class="alert alert-error" role="alert">${error}</p>`;
}

/** A form that runs a passkey ceremony in the browser and posts its answer. */
export function passkeyForm(
  t: FormTarget,
  kind: 'register' | 'authenticate',
  step: string,
  options: unknown,
  label: string,
  primary = true,
): Html {
  return html`<form method="post" action="${action(t, step)}" class="stack" data-passkey="${kind}" data-options="${JSON.stringify(options)}">
    <input type="hidden" name="csrf" value="${t.csrf}">
    <input type="hidden" name="response" value="">
    <p class="alert alert-error" role="alert" data-passkey-status hidden></p>
    <button type="submit" class="button${primary ? ' button-primary' : ''}">${label}</button>
  </form>`;
}

export interface FactorPageState {
  /** The passkey options when the person has a passkey. */
  passkeyOptions?: unknown;
  /** The person has an authenticator app or recovery codes. */
  codes: boolean;
  error?: string | Html;
}

/** The second step of a sign-in (or the whole of a step-up): one of the person's factors. */
export function factorPage(t: FormTarget, state: FactorPageState): string {
  const code = state.codes
    ? html`<form method="post" action="${action(t, 'factor')}" class="stack" autocomplete="off">
    <input type="hidden" name="csrf" value="${t.csrf}">
    <label for="code">Code from your authenticator app, or a recovery code</label>
    <input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" required maxlength="${CODE_MAX}" autofocus${state.error === undefined ? '' : html` aria-invalid="true" aria-describedby="factor-error"`}>
    <button type="submit" class="button${state.passkeyOptions === undefined ? ' button-primary' : ''}">Verify</button>
  </form>`
    : '';
  const passkey =
    state.passkeyOptions === undefined
      ? ''
      : passkeyForm(t, 'authenticate', 'passkey', state.passkeyOptions, 'Use a passkey');
  return page(
    'Confirm it is you',
    html`<section class="card narrow">
  <h1>Confirm it is you</h1>
  <p class="muted">Use your second factor for the Plant Store tenant <strong>${t.tenant}</strong>.</p>
  ${errorLine(state.error)}
  ${passkey}
  ${passkey !== '' && code !== '' ? html`<p class="muted">Or</p>` : ''}
  ${code}
</section>`,
    t.tenant,
    state.passkeyOptions === undefined ? undefined : PASSKEY_SCRIPTS,
  );
}

export interface EnrolPageState {
  /** Why: the realm's policy, or the person's own request. */
  required: boolean;
  passkeyOptions?: unknown;
  totp?: { secret: string; uri: string };
  error?: string | Html;
}

/** Adds a second factor: a passkey, or an authenticator app confirmed by its first code. */
export function enrolPage(t: FormTarget, state: EnrolPageState): string {
  const passkey =
    state.passkeyOptions === undefined
      ? ''
      : html`<h2>A passkey</h2>
  <p class="muted">Your device's screen lock, a security key or your password manager: nothing to type.</p>
  ${passkeyForm(t, 'register', 'enrol-passkey', state.passkeyOptions, 'Add a passkey')}`;
  const totp =
    state.totp === undefined
      ? ''
      : html`<h2>An authenticator app</h2>
  <p class="muted">Add this account in your app (open the link on your phone, or type the key), then enter the code the app shows.</p>
  <form method="post" action="${action(t, 'enrol-totp')}" class="stack" autocomplete="off">
    <input type="hidden" name="csrf" value="${t.csrf}">
    <label for="totp-secret">Key</label>
    <input id="totp-secret" type="text" readonly value="${state.totp.secret}">
    <p><a href="${state.totp.uri}">Open in an authenticator app</a></p>
    <label for="code">Code from the app</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="${CODE_MAX}"${state.passkeyOptions === undefined ? html` autofocus` : ''}${state.error === undefined ? '' : html` aria-invalid="true" aria-describedby="factor-error"`}>
    <button type="submit" class="button${state.passkeyOptions === undefined ? ' button-primary' : ''}">Set up the app</button>
  </form>`;
  return page(
    'Add a second factor',
    html`<section class="card narrow">
  <h1>Add a second factor</h1>
  <p class="muted">${
    state.required
      ? html`The account <strong>${t.tenant}</strong> requires a second factor for Account Admins. Add one to finish signing in.`
      : 'Add a second factor to your sign-in.'
  }</p>
  ${errorLine(state.error)}
  ${passkey}
  ${totp}
</section>`,
    t.tenant,
    state.passkeyOptions === undefined ? undefined : PASSKEY_SCRIPTS,
  );
}

/** The recovery codes, shown once, and the way on. */
export function recoveryCodesPage(t: FormTarget, codes: string[]): string {
  return page(
    'Your recovery codes',
    html`<section class="card narrow">
  <h1>Your recovery codes</h1>
  <p>Each code signs you in once if you lose your authenticator. Keep them somewhere safe: they are shown only now, and any earlier codes no longer work.</p>
  <ol class="stack" aria-label="Recovery codes">
    ${codes.map((c) => html`<li><code>${c}</code></li>`)}
  </ol>
  <form method="post" action="${action(t, 'continue')}" class="stack">
    <input type="hidden" name="csrf" value="${t.csrf}">
    <button type="submit" class="button button-primary" autofocus>I have saved them: continue</button>
  </form>
</section>`,
    t.tenant,
  );
}

/** After the codes were shown (a reload): only the way on. */
export function continuePage(t: FormTarget, message: string): string {
  return page(
    'Continue',
    html`<section class="card narrow">
  <h1>Continue</h1>
  <p>${message}</p>
  <form method="post" action="${action(t, 'continue')}" class="stack">
    <input type="hidden" name="csrf" value="${t.csrf}">
    <button type="submit" class="button button-primary" autofocus>Continue</button>
  </form>
</section>`,
    t.tenant,
  );
}
