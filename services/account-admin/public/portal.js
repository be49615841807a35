// Plant Store admin portal: the page's script, an ES module with its two helpers (CSP:
// script-src 'self'). Secrets live only in this page's memory while the dialog shows them:
// never stored.
import { api, messageOf, replayPendingCall } from './portal-api.js';
import { reloadAfter, restoreAfterReload } from './portal-reload.js';

const $ = (selector, root = document) => root.querySelector(selector);

function showError(element, message) {
  element.textContent = message;
  element.hidden = false;
}

function clearError(element) {
  element.textContent = '';
  element.hidden = true;
}

function busy(form, on) {
  for (const button of form.querySelectorAll('button')) button.disabled = on;
}

function openDialog(dialog, focusSelector) {
  dialog.showModal();
  const target = focusSelector ? $(focusSelector, dialog) : null;
  if (target) target.focus();
}

const onAccountPage = () => window.location.pathname.startsWith('/settings/service-accounts/');
// A row of the list, or the head of an account's own page.
const rowOf = (element) => element.closest('[data-client-id]');
// What opened the last dialog: focus returns there when it closes.
let lastTrigger = null;

// The dialogs the steps below share, and what each is in the middle of.
const secretDialog = $('#secret-dialog');
let secretOutcome = '';
const confirmDialog = $('#confirm-dialog');
let confirmAction = null;
const editDialog = $('#edit-dialog');
let editPath = null;
let editName = '';

// Closing buttons, and Escape (native) for every dialog.
function wireCloseButtons() {
  for (const button of document.querySelectorAll('dialog [data-close]')) {
    button.addEventListener('click', () => button.closest('dialog').close());
  }
}

// Create
function wireCreate() {
  const createDialog = $('#create-dialog');
  const createForm = createDialog && $('form', createDialog);
  const createButton = $('[data-action="create"]');
  if (createButton && createDialog) {
    createButton.addEventListener('click', () => {
      lastTrigger = createButton;
      createForm.reset();
      clearError($('#create-error'));
      openDialog(createDialog, '#create-name');
    });
    createForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      const name = $('#create-name').value;
      clearError($('#create-error'));
      busy(createForm, true);
      const result = await api('POST', '/api/v1/service-accounts', { name });
      busy(createForm, false);
      if (result.status === 201) {
        createDialog.close();
        showSecret(
          result.body,
          `Service account “${result.body.name}” created`,
          `Service account “${result.body.name}” created.`,
        );
      } else {
        showError($('#create-error'), messageOf(result));
        $('#create-name').focus();
      }
    });
  }
}

// The secret, shown once.
function showSecret(account, title, outcome) {
  secretOutcome = outcome;
  $('#secret-title').textContent = title;
  $('#secret-client-id').value = account.client_id;
  $('#secret-value').value = account.secret;
  $('#copy-status').textContent = '';
  openDialog(secretDialog, '[data-copy="secret-value"]');
}
function wireSecretDialog() {
  if (secretDialog) {
    const forget = () => {
      $('#secret-value').value = '';
      reloadAfter(lastTrigger, secretOutcome);
    };
    $('[data-action="secret-done"]', secretDialog).addEventListener('click', () =>
      secretDialog.close(),
    );
    secretDialog.addEventListener('close', forget);
    for (const button of secretDialog.querySelectorAll('[data-copy]')) {
      button.addEventListener('click', async () => {
        const input = document.getElementById(button.dataset.copy);
        let copied = false;
        try {
          await navigator.clipboard.writeText(input.value);
          copied = true;
        } catch {
          input.select();
          copied = document.execCommand?.('copy');
        }
        const what = button.dataset.copy === 'secret-value' ? 'Secret' : 'Client ID';
        $('#copy-status').textContent = copied
          ? `${what} copied to the clipboard.`
          : 'Select the text and copy it.';
        button.textContent = copied ? 'Copied' : 'Copy';
        setTimeout(() => {
          button.textContent = 'Copy';
        }, 2000);
      });
    }
  }
}

// Confirmations: reset secret and delete.
function confirm({ title, message, button, danger, action }) {
  $('#confirm-title').textContent = title;
  $('#confirm-message').textContent = message;
  const confirmButton = $('#confirm-button');
  confirmButton.textContent = button;
  confirmButton.className = danger ? 'button button-danger-solid' : 'button button-primary';
  clearError($('#confirm-error'));
  confirmAction = action;
  openDialog(confirmDialog, '[data-close]');
}
function wireConfirmDialog() {
  if (confirmDialog) {
    const form = $('form', confirmDialog);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!confirmAction) return;
      busy(form, true);
      const error = await confirmAction();
      busy(form, false);
      if (error) showError($('#confirm-error'), error);
    });
  }
}

// A row's buttons (edit, reset secret, delete) and the account's sign-out button.
function onActionClick(event) {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const row = rowOf(button);
  const action = button.dataset.action;
  if (action === 'sign-out') {
    signOut();
    return;
  }
  if (!row) return;
  lastTrigger = button;
  const clientId = row.dataset.clientId;
  const name = row.dataset.name;
  const path = `/api/v1/service-accounts/${encodeURIComponent(clientId)}`;
  if (action === 'reset') {
    confirm({
      title: `Reset secret of “${name}”?`,
      message:
        'A new secret is generated. The current secret and every token obtained with it stop working immediately.',
      button: 'Reset secret',
      danger: true,
      action: async () => {
        const result = await api('POST', `${path}/reset-secret`);
        if (result.status !== 200) return messageOf(result);
        confirmDialog.close();
        showSecret(
          result.body,
          `New secret for “${result.body.name}”`,
          `The secret of “${result.body.name}” was reset.`,
        );
        return null;
      },
    });
  } else if (action === 'delete') {
    confirm({
      title: `Delete “${name}”?`,
      message:
        'Automation using this service account stops working immediately. This cannot be undone.',
      button: 'Delete',
      danger: true,
      action: async () => {
        const result = await api('DELETE', path);
        if (result.status !== 204) return messageOf(result);
        // The account's own page is gone with it: back to the list.
        if (onAccountPage()) window.location.assign('/settings/service-accounts');
        else reloadAfter(lastTrigger, `Service account “${name}” deleted.`);
        return null;
      },
    });
  } else if (action === 'edit') {
    openEdit(row, path);
  }
}

// Role and grants.
function openEdit(row, path) {
  editPath = path;
  editName = row.dataset.name;
  $('#edit-title').textContent = `Edit “${row.dataset.name}”`;
  for (const radio of editDialog.querySelectorAll('input[name="role"]'))
    radio.checked = radio.value === row.dataset.role;
  $('#edit-grants').value = row.dataset.grants || '';
  $('#edit-dpop').checked = row.dataset.dpop === 'true';
  $('#edit-signals').checked = row.dataset.signals === 'true';
  clearError($('#edit-error'));
  openDialog(editDialog, 'input[name="role"]:checked');
}
function wireEditDialog() {
  if (editDialog) {
    const form = $('form', editDialog);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const role = editDialog.querySelector('input[name="role"]:checked')?.value;
      const tags = $('#edit-grants')
        .value.split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      const grants = [...new Set(tags)].map((tag) => ({ tag, permission: 'edit' }));
      busy(form, true);
      const result = await api('PATCH', editPath, {
        role,
        grants,
        dpop_bound_access_tokens: $('#edit-dpop').checked,
        receive_signals: $('#edit-signals').checked,
      });
      busy(form, false);
      if (result.status === 200)
        reloadAfter(lastTrigger, `Role and grants of “${editName}” saved.`);
      else showError($('#edit-error'), messageOf(result));
    });
  }
}

// Return focus to what opened a dialog.
function returnFocusOnClose() {
  for (const dialog of document.querySelectorAll('dialog')) {
    dialog.addEventListener('close', () => {
      if (lastTrigger && document.contains(lastTrigger)) lastTrigger.focus();
    });
  }
}

// Back from a step-up: the interrupted call, sent again, its answer shown as the original's.
function showPageError(message) {
  const main = $('#main');
  if (!main) return;
  let alert = $('#replay-error');
  if (!alert) {
    alert = document.createElement('p');
    alert.id = 'replay-error';
    alert.className = 'alert alert-error';
    alert.setAttribute('role', 'alert');
    main.prepend(alert);
  }
  alert.textContent = message;
}
function showReplayed({ method, path, result }) {
  const ok = result.status >= 200 && result.status < 300;
  if (!ok) {
    showPageError(messageOf(result));
    return;
  }
  const account = result.body;
  if (method === 'POST' && path === '/api/v1/service-accounts') {
    showSecret(
      account,
      `Service account “${account.name}” created`,
      `Service account “${account.name}” created.`,
    );
  } else if (method === 'POST' && path.endsWith('/reset-secret')) {
    showSecret(
      account,
      `New secret for “${account.name}”`,
      `The secret of “${account.name}” was reset.`,
    );
  } else if (method === 'DELETE' && /^\/api\/v1\/service-accounts\/[^/]+$/.test(path)) {
    // The account's own page is gone with it: back to the list.
    if (onAccountPage()) window.location.assign('/settings/service-accounts');
    else reloadAfter(null, 'Service account deleted.');
  } else {
    reloadAfter(null, 'Done.');
  }
}

async function signOut() {
  const result = await api('POST', '/logout');
  const target =
    result.body && typeof result.body.redirect === 'string' ? result.body.redirect : '/';
  window.location.assign(target);
}

// The page: each step wires one part, in the order their listeners must be added.
function portal() {
  wireCloseButtons();
  restoreAfterReload();
  wireCreate();
  wireSecretDialog();
  wireConfirmDialog();
  document.addEventListener('click', onActionClick);
  wireEditDialog();
  returnFocusOnClose();
  // What credentials.js (an account's page) builds on.
  window.plantPortal = {
    api,
    messageOf,
    showError,
    clearError,
    busy,
    openDialog,
    confirm,
    showSecret,
  };
  replayPendingCall().then((replayed) => {
    if (replayed) showReplayed(replayed);
  });
}

portal();
