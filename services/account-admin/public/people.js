// Settings → People (CSP: script-src 'self'). Every change goes through portal-api.js (the CSRF
// header, and whatever it does for a 401), then the page reloads with what happened announced
// and focus back where it was. The invitation link lives only in this page's memory while its
// dialog shows it: never stored.
import { api, messageOf } from './portal-api.js';

const $ = (selector, root = document) => root.querySelector(selector);
const AFTER_RELOAD = 'plant-portal:people-after-reload';

// The shared form helpers of portal.js (loaded first, as every page's own script assumes), read
// when the page starts.
let showError;
let clearError;
let busy;

// The dialogs the steps below share (found when the page starts), and what each is in the middle of.
let roleDialog = null;
let roleForm = null;
let roleRow = null;
let confirmDialog = null;
let confirmForm = null;
let confirmAction = null;
let invited = '';

/** Reloads; afterwards focus returns to the same action of the same row (or Invite) and the message is announced. */
function reloadAfter(row, action, message) {
  const focus = row ? { id: row.dataset.personId || row.dataset.invitationId, action } : null;
  try {
    sessionStorage.setItem(AFTER_RELOAD, JSON.stringify({ focus, message }));
  } catch {
    // Storage refused: the reload starts at the top of the page.
  }
  window.location.reload();
}

function restoreAfterReload() {
  let saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(AFTER_RELOAD) || 'null');
    sessionStorage.removeItem(AFTER_RELOAD);
  } catch {
    saved = null;
  }
  if (!saved || typeof saved !== 'object') return;
  const rows = [...document.querySelectorAll('tr[data-person-id], tr[data-invitation-id]')];
  const row = saved.focus
    ? rows.find((r) => (r.dataset.personId || r.dataset.invitationId) === saved.focus.id)
    : null;
  const action = row && saved.focus ? row.querySelector('[data-action]') : null;
  const same =
    row && saved.focus
      ? [...row.querySelectorAll('[data-action]')].find(
          (b) => b.dataset.action === saved.focus.action,
        )
      : null;
  const target = same || action || $('[data-action="invite"]');
  if (target) target.focus();
  if (typeof saved.message === 'string') $('#page-status').textContent = saved.message;
}

function wireCloseButtons() {
  for (const button of document.querySelectorAll('dialog [data-close]')) {
    button.addEventListener('click', () => button.closest('dialog').close());
  }
}

const EMAIL_WORDS = {
  sent: (to) => `The invitation was e-mailed to ${to}. You can also send the link yourself.`,
  failed: (to) => `The e-mail to ${to} could not be sent. Copy the link and send it yourself.`,
  not_configured: () => 'E-mail is not set up for this portal. Copy the link and send it yourself.',
};

// Invite, and the link shown once.
function wireInvite() {
  const inviteDialog = $('#invite-dialog');
  const inviteForm = $('form', inviteDialog);
  const linkDialog = $('#link-dialog');
  $('[data-action="invite"]').addEventListener('click', () => {
    inviteForm.reset();
    clearError($('#invite-error'));
    inviteDialog.showModal();
    $('#invite-email').focus();
  });
  inviteForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError($('#invite-error'));
    const email = $('#invite-email').value.trim();
    const role = inviteForm.querySelector('input[name="invite-role"]:checked')?.value || 'View';
    busy(inviteForm, true);
    const result = await api('POST', '/api/v1/users', { email, role });
    busy(inviteForm, false);
    if (result.status !== 201) {
      showError($('#invite-error'), messageOf(result));
      $('#invite-email').focus();
      return;
    }
    inviteDialog.close();
    invited = result.body.invitation.email;
    $('#link-value').value = result.body.invitation.url;
    const words = EMAIL_WORDS[result.body.email] || EMAIL_WORDS.not_configured;
    $('#link-email-status').textContent = words(invited);
    $('#link-copy-status').textContent = '';
    linkDialog.showModal();
    $('[data-copy="link-value"]').focus();
  });
  $('[data-copy="link-value"]').addEventListener('click', async (event) => {
    const input = $('#link-value');
    let copied = false;
    try {
      await navigator.clipboard.writeText(input.value);
      copied = true;
    } catch {
      input.select();
      copied = document.execCommand?.('copy');
    }
    $('#link-copy-status').textContent = copied
      ? 'Link copied to the clipboard.'
      : 'Select the link and copy it.';
    event.currentTarget.textContent = copied ? 'Copied' : 'Copy';
  });
  $('[data-action="link-done"]').addEventListener('click', () => linkDialog.close());
  linkDialog.addEventListener('close', () => {
    $('#link-value').value = '';
    reloadAfter(null, 'invite', `${invited} invited.`);
  });
}

// Change role.
function wireRoleDialog() {
  roleDialog = $('#role-dialog');
  roleForm = $('form', roleDialog);
  roleForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const role = roleForm.querySelector('input[name="role"]:checked')?.value;
    clearError($('#role-error'));
    busy(roleForm, true);
    const result = await api(
      'PATCH',
      `/api/v1/users/${encodeURIComponent(roleRow.dataset.personId)}`,
      {
        role,
      },
    );
    busy(roleForm, false);
    if (result.status === 200) {
      roleDialog.close();
      reloadAfter(roleRow, 'role', `${roleRow.dataset.email} is now ${role}.`);
    } else showError($('#role-error'), messageOf(result));
  });
}

// Confirmations: disable, enable, remove, reset factors, revoke.
function confirm({ title, message, button, danger, action }) {
  $('#people-confirm-title').textContent = title;
  $('#people-confirm-message').textContent = message;
  const confirmButton = $('#people-confirm-button');
  confirmButton.textContent = button;
  confirmButton.className = danger ? 'button button-danger-solid' : 'button button-primary';
  clearError($('#people-confirm-error'));
  confirmAction = action;
  confirmDialog.showModal();
  $('[data-close]', confirmDialog).focus();
}
function wireConfirmDialog() {
  confirmDialog = $('#people-confirm-dialog');
  confirmForm = $('form', confirmDialog);
  confirmForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!confirmAction) return;
    busy(confirmForm, true);
    const error = await confirmAction();
    busy(confirmForm, false);
    if (error) showError($('#people-confirm-error'), error);
  });
}

/** Runs the call; on success reloads announcing `done`, else answers the error for the dialog. */
async function change(row, action, method, path, body, done) {
  const result = await api(method, path, body);
  if (result.status >= 200 && result.status < 300) {
    reloadAfter(row, action, done);
    return null;
  }
  return messageOf(result);
}

// What each row button asks (`path`: the person's, empty for an invitation).
function askRole(row) {
  roleRow = row;
  clearError($('#role-error'));
  for (const input of roleForm.querySelectorAll('input[name="role"]'))
    input.checked = input.value === row.dataset.role;
  roleDialog.showModal();
  roleForm.querySelector('input[name="role"]:checked')?.focus();
}
function askDisable(row, path) {
  confirm({
    title: `Disable ${row.dataset.email}?`,
    message: 'They are signed out and cannot sign in until enabled again. Nothing is deleted.',
    button: 'Disable',
    danger: true,
    action: () =>
      change(
        row,
        'enable',
        'PATCH',
        path,
        { status: 'disabled' },
        `${row.dataset.email} disabled.`,
      ),
  });
}
function askEnable(row, path) {
  confirm({
    title: `Enable ${row.dataset.email}?`,
    message: 'They can sign in again with their password and second factors.',
    button: 'Enable',
    action: () =>
      change(row, 'disable', 'PATCH', path, { status: 'active' }, `${row.dataset.email} enabled.`),
  });
}
function askRemove(row, path) {
  confirm({
    title: `Remove ${row.dataset.email}?`,
    message:
      'They lose access at once; their second factors are deleted. To let them back in, invite them again.',
    button: 'Remove',
    danger: true,
    action: () => change(row, 'remove', 'DELETE', path, undefined, `${row.dataset.email} removed.`),
  });
}
function askResetFactors(row, path) {
  confirm({
    title: `Reset the second factors of ${row.dataset.email}?`,
    message:
      'Their passkeys, authenticator app and recovery codes are deleted; they set up a new factor at their next sign-in.',
    button: 'Reset second factors',
    danger: true,
    action: () =>
      change(
        row,
        'reset-factors',
        'DELETE',
        `${path}/factors`,
        undefined,
        `Second factors of ${row.dataset.email} reset.`,
      ),
  });
}
function askRevoke(row) {
  const path = `/api/v1/invitations/${encodeURIComponent(row.dataset.invitationId)}`;
  confirm({
    title: `Revoke the invitation of ${row.dataset.email}?`,
    message: 'Its link stops working at once.',
    button: 'Revoke',
    danger: true,
    action: () => change(null, 'invite', 'DELETE', path, undefined, 'Invitation revoked.'),
  });
}

const ACTIONS = {
  role: askRole,
  disable: askDisable,
  enable: askEnable,
  remove: askRemove,
  'reset-factors': askResetFactors,
  revoke: askRevoke,
};

function onRowAction(event) {
  const button = event.target.closest('tr [data-action]');
  if (!button) return;
  const row = button.closest('tr');
  const run = ACTIONS[button.dataset.action];
  if (!run) return;
  const path = row.dataset.personId
    ? `/api/v1/users/${encodeURIComponent(row.dataset.personId)}`
    : '';
  run(row, path);
}

// The page: each step wires one part, in the order their listeners must be added.
function people() {
  const table = $('#people');
  if (!table) return;
  ({ showError, clearError, busy } = window.plantPortal);
  wireCloseButtons();
  restoreAfterReload();
  wireInvite();
  wireRoleDialog();
  wireConfirmDialog();
  document.addEventListener('click', onRowAction);
}

people();
