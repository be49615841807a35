/** The Service accounts page: the tenant's accounts and the dialogs that create, edit, reset and delete them. */
import { html, type Html } from '@plant/shared/page-look';
import {
  MAX_SERVICE_ACCOUNTS,
  SERVICE_ACCOUNT_NAME_MAX,
  type ServiceAccount,
} from '@plant/shared/token-service-client';
import { confirmDialog, layout, timeOf } from '../portal/index.js';
import type { Session } from '../sessions/index.js';
import { tokenBindingCell, tokenBindingFieldset } from './token-binding.js';

function grantsOf(account: ServiceAccount): Html {
  if (account.grants.length === 0) return html`<span class="muted">None</span>`;
  return html`<ul class="tags">${account.grants.map((g) => html`<li class="tag">${g.tag}</li>`)}</ul>`;
}

function accountRow(account: ServiceAccount, canManage: boolean): Html {
  return html`<tr data-client-id="${account.client_id}" data-name="${account.name}" data-role="${account.role}" data-grants="${account.grants.map((g) => g.tag).join(', ')}" data-dpop="${String(account.dpop_bound_access_tokens)}" data-signals="${String(account.receive_signals)}">
  <th scope="row" data-label="Name"><a href="/settings/service-accounts/${account.client_id}">${account.name}</a>${account.disabled ? html` <span class="badge badge-off">Disabled</span>` : ''}<br><code class="client-id nowrap" title="Client ID">${account.client_id}</code></th>
  <td data-label="Role"><span class="badge">${account.role}</span></td>
  <td data-label="Grants">${grantsOf(account)}</td>
  ${tokenBindingCell(account)}
  <td data-label="Created">${timeOf(account.created_at)}</td>
  <td data-label="Created by">${account.created_by !== null && account.created_by !== undefined ? html`<span class="token">${account.created_by}</span>` : html`<span class="muted">Unknown</span>`}</td>
  <td data-label="Last used">${timeOf(account.last_used_at)}</td>
  ${
    canManage
      ? html`<td class="actions" data-label="Actions"><div class="action-buttons">
    <button type="button" class="button button-small" data-action="edit" aria-label="Edit role and grants of ${account.name}">Edit</button>
    <button type="button" class="button button-small" data-action="reset" aria-label="Reset secret of ${account.name}">Reset secret</button>
    <button type="button" class="button button-small button-danger" data-action="delete" aria-label="Delete ${account.name}">Delete</button>
  </div></td>`
      : ''
  }
</tr>`;
}

export const managementDialogs = html`
<dialog id="create-dialog" aria-labelledby="create-title">
  <form class="stack" data-form="create">
    <h2 id="create-title">Create service account</h2>
    <p class="muted">A new service account has the View role. You can change its role and grants afterwards.</p>
    <label for="create-name">Name</label>
    <input id="create-name" name="name" type="text" required maxlength="${SERVICE_ACCOUNT_NAME_MAX}" autocomplete="off" aria-describedby="create-help create-error" autofocus>
    <p id="create-help" class="hint">Unique in this tenant (names that look alike count as one), up to ${SERVICE_ACCOUNT_NAME_MAX} characters, for example <code>nightly-import</code>; no invisible or bidi characters.</p>
    <p id="create-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close>Cancel</button>
      <button type="submit" class="button button-primary">Confirm</button>
    </div>
  </form>
</dialog>

<dialog id="secret-dialog" aria-labelledby="secret-title" aria-describedby="secret-warning">
  <div class="stack">
    <h2 id="secret-title">Save these credentials</h2>
    <p id="secret-warning" class="alert alert-warning"><strong>You will not see this secret again.</strong> Copy it now and store it in your secret manager. If it is lost, reset the secret.</p>
    <label for="secret-client-id">Client ID</label>
    <div class="copy-row"><input id="secret-client-id" type="text" readonly><button type="button" class="button" data-copy="secret-client-id">Copy</button></div>
    <label for="secret-value">Client secret</label>
    <div class="copy-row"><input id="secret-value" type="text" readonly spellcheck="false"><button type="button" class="button" data-copy="secret-value">Copy</button></div>
    <p class="hint" id="copy-status" role="status" aria-live="polite"></p>
    <div class="dialog-actions"><button type="button" class="button button-primary" data-action="secret-done">I have saved the secret</button></div>
  </div>
</dialog>

${confirmDialog}

<dialog id="edit-dialog" aria-labelledby="edit-title">
  <form class="stack" data-form="edit">
    <h2 id="edit-title">Edit role and grants</h2>
    <fieldset>
      <legend>Role</legend>
      <label class="choice"><input type="radio" name="role" value="View"> View <span class="hint">read plants</span></label>
      <label class="choice"><input type="radio" name="role" value="Edit"> Edit <span class="hint">read and create plants</span></label>
    </fieldset>
    <label for="edit-grants">Edit grants (plant tags)</label>
    <input id="edit-grants" name="grants" type="text" autocomplete="off" aria-describedby="edit-grants-help">
    <p id="edit-grants-help" class="hint">Tags this service account may create plants with even as View, separated by commas, for example <code>roses, tulips</code>. Leave empty for none.</p>
    ${tokenBindingFieldset}
    <p class="hint">Saving revokes the account's current tokens; it gets new ones with the new rights.</p>
    <p id="edit-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions">
      <button type="button" class="button" data-close>Cancel</button>
      <button type="submit" class="button button-primary">Save</button>
    </div>
  </form>
</dialog>`;

export function serviceAccountsPage({
  session,
  accounts,
  canManage,
}: {
  session: Session;
  accounts: ServiceAccount[];
  canManage: boolean;
}): string {
  const atCap = accounts.length >= MAX_SERVICE_ACCOUNTS;
  return layout({
    title: 'Service accounts',
    session,
    active: 'service-accounts',
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head">
  <div>
    <h1>Service accounts</h1>
    <p class="muted">Automation uses service accounts to call the Plant Store API with the client credentials grant. ${accounts.length} of ${MAX_SERVICE_ACCOUNTS} used.</p>
  </div>
  ${canManage ? html`<button type="button" class="button button-primary" data-action="create" ${atCap ? html`aria-describedby="cap-note"` : ''}>Create service account</button>` : ''}
</div>
${canManage && atCap ? html`<p id="cap-note" class="alert alert-info">This tenant has the maximum of ${MAX_SERVICE_ACCOUNTS} service accounts. Delete one before creating another.</p>` : ''}
${canManage ? '' : html`<p class="alert alert-info" id="read-only-note">You have read-only access. Ask an Account Admin to create, change or delete service accounts.</p>`}
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
${
  accounts.length === 0
    ? html`<div class="card empty"><h2>No service accounts yet</h2><p class="muted">${canManage ? 'Create one to let automation call the Plant Store API.' : 'An Account Admin can create one.'}</p></div>`
    : html`<div class="table-wrap"><table class="table" id="service-accounts">
  <caption class="sr-only">Service accounts</caption>
  <thead><tr><th scope="col">Name and client ID</th><th scope="col">Role</th><th scope="col">Grants</th><th scope="col">Tokens</th><th scope="col">Created</th><th scope="col">Created by</th><th scope="col">Last used</th>${canManage ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${accounts.map((a) => accountRow(a, canManage))}</tbody>
</table></div>`
}
${canManage ? managementDialogs : ''}`,
  });
}
