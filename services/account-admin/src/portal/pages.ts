import type { AuditEvent } from '../audit/list-audit-events.js';
import type { Session } from '../sessions/portal-sessions.js';
import { html, renderPage, type Html } from '@plant/shared/page-look';
import {
  MAX_SERVICE_ACCOUNTS,
  SERVICE_ACCOUNT_NAME_MAX,
  type ServiceAccount,
} from '@plant/shared/token-service-client';
import { CREDENTIAL_ACTION_TEXT, describeCredentialDetails } from '../audit/credential-activity.js';
import { PEOPLE_ACTION_TEXT } from '../audit/people-activity.js';
import { timeOf } from './time-of.js';
import { describeTokenBinding, tokenBindingCell, tokenBindingFieldset } from '../service-accounts/token-binding.js';

/** Where the portal serves its stylesheet (`stylesheetRoute`) and its script. */
export const ASSETS_PATH = '/assets';

interface LayoutOptions {
  title: string;
  session?: Session | undefined;
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
        ${session.role === 'Account Admin' ? html`<a href="/settings/policy" ${current('policy')}>Policy</a>` : ''}
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

export function tenantPickerPage({
  error,
  tenant = '',
  returnTo,
}: {
  error?: string;
  tenant?: string;
  returnTo?: string;
}): string {
  return layout({
    title: 'Sign in',
    body: html`<section class="card narrow">
  <h1>Sign in to the admin portal</h1>
  <p class="muted">Enter the name of your Plant Store account (tenant). You will sign in on its sign-in page.</p>
  ${error ? html`<p class="alert alert-error" role="alert">${error}</p>` : ''}
  <form method="get" action="/login" class="stack">
    <label for="tenant">Account name</label>
    <input id="tenant" name="tenant" type="text" required maxlength="63"
      autocomplete="organization" autocapitalize="none" spellcheck="false" value="${tenant}" aria-describedby="tenant-help" autofocus>
    <p id="tenant-help" class="hint">Lower-case letters, digits and hyphens, for example <code>acme</code>.</p>
    ${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : ''}
    <button type="submit" class="button button-primary">Continue</button>
  </form>
</section>`,
  });
}

export function messagePage(
  title: string,
  message: string,
  {
    session,
    link = { href: '/', text: 'Back to sign-in' },
  }: { session?: Session; link?: { href: string; text: string } } = {},
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

function grantsOf(account: ServiceAccount): Html {
  if (account.grants.length === 0) return html`<span class="muted">None</span>`;
  return html`<ul class="tags">${account.grants.map((g) => html`<li class="tag">${g.tag}</li>`)}</ul>`;
}

function accountRow(account: ServiceAccount, canManage: boolean): Html {
  return html`<tr data-client-id="${account.client_id}" data-name="${account.name}" data-role="${account.role}" data-grants="${account.grants.map((g) => g.tag).join(', ')}" data-dpop="${String(account.dpop_bound_access_tokens)}" data-signals="${String(account.receive_signals)}">
  <th scope="row" data-label="Name"><a href="/settings/service-accounts/${account.client_id}">${account.name}</a>${account.disabled ? html` <span class="badge badge-off">Disabled</span>` : ''}</th>
  <td data-label="Client ID"><code class="client-id">${account.client_id}</code></td>
  <td data-label="Role"><span class="badge">${account.role}</span></td>
  <td data-label="Grants">${grantsOf(account)}</td>
  ${tokenBindingCell(account)}
  <td data-label="Created">${timeOf(account.created_at)}</td>
  <td data-label="Created by">${account.created_by ?? html`<span class="muted">Unknown</span>`}</td>
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

export const managementDialogs = html`
<dialog id="create-dialog" aria-labelledby="create-title">
  <form class="stack" data-form="create">
    <h2 id="create-title">Create service account</h2>
    <p class="muted">A new service account has the View role. You can change its role and grants afterwards.</p>
    <label for="create-name">Name</label>
    <input id="create-name" name="name" type="text" required maxlength="${SERVICE_ACCOUNT_NAME_MAX}" autocomplete="off" aria-describedby="create-help create-error" autofocus>
    <p id="create-help" class="hint">Unique in this account (names that look alike count as one), up to ${SERVICE_ACCOUNT_NAME_MAX} characters, for example <code>nightly-import</code>; no invisible or bidi characters.</p>
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
    <p id="edit-grants-help" class="hint">Tags this account may create plants with even as View, separated by commas, for example <code>roses, tulips</code>. Leave empty for none.</p>
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
${canManage && atCap ? html`<p id="cap-note" class="alert alert-info">This account has the maximum of ${MAX_SERVICE_ACCOUNTS} service accounts. Delete one before creating another.</p>` : ''}
${canManage ? '' : html`<p class="alert alert-info" id="read-only-note">You have read-only access. Ask an Account Admin to create, change or delete service accounts.</p>`}
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
${
  accounts.length === 0
    ? html`<div class="card empty"><h2>No service accounts yet</h2><p class="muted">${canManage ? 'Create one to let automation call the Plant Store API.' : 'An Account Admin can create one.'}</p></div>`
    : html`<div class="table-wrap"><table class="table" id="service-accounts">
  <caption class="sr-only">Service accounts</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Client ID</th><th scope="col">Role</th><th scope="col">Grants</th><th scope="col">Tokens</th><th scope="col">Created</th><th scope="col">Created by</th><th scope="col">Last used</th>${canManage ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${accounts.map((a) => accountRow(a, canManage))}</tbody>
</table></div>`
}
${canManage ? managementDialogs : ''}`,
  });
}

const ACTION_TEXT: Record<string, string> = {
  ...PEOPLE_ACTION_TEXT,
  'service_account.create': 'Created',
  'service_account.update': 'Changed role or grants of',
  'service_account.reset_secret': 'Reset the secret of',
  'service_account.delete': 'Deleted',
  'session.end': 'Ended a portal session of',
  'user.sign_out_everywhere': 'Signed out everywhere',
  ...CREDENTIAL_ACTION_TEXT,
  'factor.remove': 'Removed a second factor of',
  'user.factors_reset': 'Reset the second factors of',
  'tenant.policy_change': 'Changed the people policy',
};

const TARGET_TEXT: Record<string, string> = {
  user: 'person',
  invitation: 'invitation',
  session: 'session',
};

function describeDetails(event: AuditEvent): string {
  const parts: string[] = [];
  const role = event.details.role as { from?: string; to?: string } | string | undefined;
  if (typeof role === 'object' && role !== null) parts.push(`role ${role.from} → ${role.to}`);
  const grants = event.details.grants as { from?: string[]; to?: string[] } | undefined;
  if (grants && Array.isArray(grants.to))
    parts.push(`grants: ${grants.to.length === 0 ? 'none' : grants.to.join(', ')}`);
  const binding = describeTokenBinding(event.details);
  if (binding !== undefined) parts.push(binding);
  return [...parts, ...describeCredentialDetails(event.details)].join('; ');
}

export function activityPage({
  session,
  events,
  nextHref,
  firstHref,
}: {
  session: Session;
  events: AuditEvent[];
  nextHref?: string | undefined;
  firstHref?: string | undefined;
}): string {
  return layout({
    title: 'Activity',
    session,
    active: 'activity',
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Activity</h1><p class="muted">Every change to service accounts and people, and what happened at sign-in, newest first.</p></div></div>
${
  events.length === 0
    ? html`<div class="card empty"><h2>No activity yet</h2><p class="muted">Changes to service accounts and people appear here.</p></div>`
    : html`<div class="table-wrap"><table class="table" id="activity">
  <caption class="sr-only">Audit trail</caption>
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
  <tbody>${events.map(
    (e) => html`<tr>
    <td data-label="When">${timeOf(e.occurred_at)}</td>
    <td data-label="Who">${e.actor_email ?? e.actor_sub}${e.actor_type === 'service_account' ? html` <span class="badge">service account</span>` : ''}</td>
    <td data-label="What">${ACTION_TEXT[e.action] ?? e.action}${describeDetails(e) ? html` <span class="muted">(${describeDetails(e)})</span>` : ''}</td>
    <td data-label="Target">${e.name ?? ''} ${e.target_type === 'service_account' ? html`<code class="client-id">${e.client_id}</code>` : html`<span class="badge">${TARGET_TEXT[e.target_type] ?? e.target_type}</span>`}</td>
    <td data-label="From"><span title="Request ${e.request_id ?? ''}">${e.address ?? 'Unknown'}</span></td>
  </tr>`,
  )}</tbody>
</table></div>`
}
<nav class="pager" aria-label="Pages">
  ${firstHref ? html`<a class="button" href="${firstHref}">Newest</a>` : ''}
  ${nextHref ? html`<a class="button" href="${nextHref}" rel="next">Older</a>` : ''}
</nav>`,
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
