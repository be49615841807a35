/**
 * Settings → People: the tenant's people (email, role, second factors, status, last sign-in),
 * the invitation form and the pending invitations. Server-rendered; people.js (CSP: a module of
 * this origin) opens the dialogs and makes every change through portal-api.js.
 */
import { html, type Html } from '@plant/shared/page-look';
import { EMAIL_MAX, type Invitation } from '@plant/shared/token-service-client';
import type { Person } from './people.js';
import type { Session } from '../sessions/index.js';
import { ASSETS_PATH, layout, timeOf } from '../portal/index.js';

const ROLES = ['View', 'Edit', 'Account Admin'] as const;

function factorsOf(person: Person): Html {
  const parts: string[] = [];
  const { passkeys, totp, recovery_codes_left: codes } = person.factors;
  if (passkeys > 0) parts.push(passkeys === 1 ? '1 passkey' : `${passkeys} passkeys`);
  if (totp) parts.push('authenticator app');
  if (codes > 0) parts.push(`${codes} recovery codes`);
  return parts.length === 0 ? html`<span class="muted">None</span>` : html`${parts.join(', ')}`;
}

const hasFactors = ({ factors }: Person) =>
  factors.passkeys > 0 || factors.totp || factors.recovery_codes_left > 0;

/** Active Account Admins: the last of them cannot be demoted, disabled or removed (the API refuses it too). */
const activeAdmins = (people: Person[]) =>
  people.filter((p) => p.role === 'Account Admin' && p.status !== 'disabled').length;

/**
 * A person's row. What cannot be done is not offered: the last active Account Admin keeps their
 * role and access (the API answers 409), and a person without factors has none to reset.
 */
function personRow(person: Person, self: boolean, lastAdmin: boolean): Html {
  const disabled = person.status === 'disabled';
  const who = person.email;
  const locked = lastAdmin && person.role === 'Account Admin' && !disabled;
  return html`<tr data-person-id="${person.id}" data-email="${who}" data-role="${person.role}" data-status="${person.status}">
  <th scope="row" data-label="Email"><span class="token">${who}</span>${self ? html` <span class="badge">you</span>` : ''}${locked ? html`<p class="hint" id="last-admin-note">The only Account Admin: invite or promote another before changing this role or access.</p>` : ''}</th>
  <td data-label="Role"><span class="badge">${person.role}</span></td>
  <td data-label="Second factors">${factorsOf(person)}</td>
  <td data-label="Status">${disabled ? html`<span class="badge badge-off">Disabled</span>` : 'Active'}</td>
  <td data-label="Last sign-in">${timeOf(person.last_sign_in_at)}</td>
  <td class="actions" data-label="Actions"><div class="action-buttons">
    ${
      locked
        ? ''
        : html`<button type="button" class="button button-small" data-action="role" aria-label="Change role of ${who}">Change role</button>
    <button type="button" class="button button-small${disabled ? '' : ' button-danger'}" data-action="${disabled ? 'enable' : 'disable'}" aria-label="${disabled ? 'Enable' : 'Disable'} ${who}">${disabled ? 'Enable' : 'Disable'}</button>`
    }
    ${hasFactors(person) ? html`<button type="button" class="button button-small button-danger" data-action="reset-factors" aria-label="Reset second factors of ${who}">Reset second factors</button>` : ''}
    ${locked ? '' : html`<button type="button" class="button button-small button-danger" data-action="remove" aria-label="Remove ${who}">Remove</button>`}
  </div></td>
</tr>`;
}

function invitationRow(invitation: Invitation): Html {
  return html`<tr data-invitation-id="${invitation.id}" data-email="${invitation.email}">
  <th scope="row" data-label="Email"><span class="token">${invitation.email}</span></th>
  <td data-label="Role"><span class="badge">${invitation.role}</span></td>
  <td data-label="Invited by">${invitation.created_by !== null && invitation.created_by !== undefined ? html`<span class="token">${invitation.created_by}</span>` : html`<span class="muted">Unknown</span>`}</td>
  <td data-label="Expires">${timeOf(invitation.expires_at)}</td>
  <td class="actions" data-label="Actions"><div class="action-buttons">
    <button type="button" class="button button-small button-danger" data-action="revoke" aria-label="Revoke the invitation of ${invitation.email}">Revoke</button>
  </div></td>
</tr>`;
}

const roleChoices = (name: string) =>
  ROLES.map(
    (role) =>
      html`<label class="choice"><input type="radio" name="${name}" value="${role}"${role === 'View' ? html` checked` : ''}> ${role}</label>`,
  );

const peopleDialogs = html`
<dialog id="invite-dialog" aria-labelledby="invite-title">
  <form class="stack" data-form="invite">
    <h2 id="invite-title">Invite a person</h2>
    <label for="invite-email">Email</label>
    <input id="invite-email" name="email" type="email" required maxlength="${String(EMAIL_MAX)}" autocomplete="off" aria-describedby="invite-error">
    <fieldset><legend>Role</legend>${roleChoices('invite-role')}</fieldset>
    <p class="hint">The invitation link works once and expires after a few days. Inviting the same email again replaces the link.</p>
    <p id="invite-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close>Cancel</button>
      <button type="submit" class="button button-primary">Invite</button>
    </div>
  </form>
</dialog>

<dialog id="link-dialog" aria-labelledby="link-title" aria-describedby="link-warning">
  <div class="stack">
    <h2 id="link-title">Invitation created</h2>
    <p id="link-warning" class="alert alert-warning"><strong>You will not see this link again.</strong> Send it to the person you invited; whoever opens it can join with the role you chose.</p>
    <p id="link-email-status" role="status"></p>
    <label for="link-value">Invitation link</label>
    <div class="copy-row"><input id="link-value" type="text" readonly spellcheck="false"><button type="button" class="button" data-copy="link-value">Copy</button></div>
    <p class="hint" id="link-copy-status" role="status" aria-live="polite"></p>
    <div class="dialog-actions"><button type="button" class="button button-primary" data-action="link-done">Done</button></div>
  </div>
</dialog>

<dialog id="role-dialog" aria-labelledby="role-title">
  <form class="stack" data-form="role">
    <h2 id="role-title">Change role</h2>
    <fieldset><legend>Role</legend>${roleChoices('role')}</fieldset>
    <p class="hint">The person's current sessions and tokens are re-checked at once.</p>
    <p id="role-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close>Cancel</button>
      <button type="submit" class="button button-primary">Save</button>
    </div>
  </form>
</dialog>

<dialog id="people-confirm-dialog" aria-labelledby="people-confirm-title" aria-describedby="people-confirm-message">
  <form class="stack" data-form="people-confirm">
    <h2 id="people-confirm-title"></h2>
    <p id="people-confirm-message"></p>
    <p id="people-confirm-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close autofocus>Cancel</button>
      <button type="submit" class="button" id="people-confirm-button"></button>
    </div>
  </form>
</dialog>`;

export function peoplePage({
  session,
  people,
  invitations,
}: {
  session: Session;
  people: Person[];
  invitations: Invitation[];
}): string {
  return layout({
    title: 'People',
    session,
    active: 'people',
    scripts: [`${ASSETS_PATH}/people.js`],
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head">
  <div>
    <h1>People</h1>
    <p class="muted">The people who sign in to this tenant, their roles and second factors. A tenant always keeps at least one active Account Admin.</p>
  </div>
  <button type="button" class="button button-primary" data-action="invite">Invite a person</button>
</div>
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
<div class="table-wrap"><table class="table" id="people">
  <caption class="sr-only">People</caption>
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Second factors</th><th scope="col">Status</th><th scope="col">Last sign-in</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${people.map((p) => personRow(p, p.id === session.sub, activeAdmins(people) === 1))}</tbody>
</table></div>
<h2 class="section">Pending invitations</h2>
${
  invitations.length === 0
    ? html`<p class="muted" id="no-invitations">No pending invitations.</p>`
    : html`<div class="table-wrap"><table class="table" id="invitations">
  <caption class="sr-only">Pending invitations</caption>
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${invitations.map(invitationRow)}</tbody>
</table></div>`
}
${peopleDialogs}`,
  });
}
