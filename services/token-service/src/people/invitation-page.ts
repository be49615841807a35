/** The realm's "Set your password" page of an invitation, and the plain pages of a link that no longer works. */
import { html, type Html } from '@plant/shared/page-look';
import { messageCard, page } from '../oidc/index.js';
import { PASSWORD_MAX } from '../passwords/index.js';

export const PASSWORD_MIN = 8;

export interface InvitationFormState {
  error?: string;
}

/** The form: the invitee's email shown, password and confirmation; the token travels in a hidden field, never in the action URL. */
export function invitationFormPage(
  tenant: string,
  email: string,
  fields: { token: string; csrf: string },
  { error }: InvitationFormState = {},
): string {
  const described =
    error === undefined ? '' : html` aria-describedby="invitation-error" aria-invalid="true"`;
  return page(
    'Set your password',
    html`<section class="card narrow">
  <h1>Set your password</h1>
  <p class="muted">You are invited to the Plant Store tenant <strong>${tenant}</strong> as <strong>${email}</strong>.</p>
  ${error === undefined ? '' : html`<p id="invitation-error" class="alert alert-error" role="alert">${error}</p>`}
  <form method="post" action="/realms/${tenant}/invitation" autocomplete="on" class="stack">
    <input type="hidden" name="token" value="${fields.token}">
    <input type="hidden" name="csrf" value="${fields.csrf}">
    <input type="hidden" name="username" value="${email}" autocomplete="username">
    <label for="password">New password (at least ${String(PASSWORD_MIN)} characters)</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${String(PASSWORD_MIN)}" maxlength="${String(PASSWORD_MAX)}" autofocus${described}>
    <label for="confirm">Repeat the password</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="${String(PASSWORD_MIN)}" maxlength="${String(PASSWORD_MAX)}"${described}>
    <button type="submit" class="button button-primary">Set password and continue</button>
  </form>
</section>`,
    tenant,
  );
}

/** Why a link does not work: each state its own words; unknown and malformed links read the same. */
export const LINK_STATES = {
  unknown: {
    heading: 'This invitation link is not valid',
    message:
      'The link is incomplete or was never issued. Copy the whole link from the invitation, or ask an Account Admin for a new one.',
  },
  expired: {
    heading: 'This invitation has expired',
    message: 'Invitation links work for a limited time. Ask an Account Admin to invite you again.',
  },
  revoked: {
    heading: 'This invitation was revoked',
    message:
      'An Account Admin withdrew it (or invited this email again: use the newest link). Ask them for a new invitation.',
  },
  'accepted-before': {
    heading: 'This invitation was already used',
    message: 'Each invitation link works once. If you set your password, sign in to the portal.',
  },
  'email-taken': {
    heading: 'This email already has an account',
    message: 'Someone with this email is already a member of the account. Sign in to the portal.',
  },
} as const;

export type LinkState = keyof typeof LINK_STATES;

export function linkStatePage(tenant: string, state: LinkState, signIn: { href: string }): string {
  const { heading, message } = LINK_STATES[state];
  const link = { href: signIn.href, text: 'Go to the sign-in page' };
  const body: Html = messageCard(heading, message, link);
  return page(heading, body, tenant);
}
