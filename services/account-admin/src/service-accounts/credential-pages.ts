/** The portal's page of one service account: its credentials, their actions, and when to use which. */
import { html, type Html } from '@plant/shared/page-look';
import type { Delegation } from '@plant/shared/token-service-client';
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  MAX_TRUSTS_PER_SERVICE_ACCOUNT,
  PUBLIC_KEY_PEM_MAX,
  TRUST_FIELD_MAX,
  type GrantQuota,
  type ServiceAccount,
  type ServiceAccountCredentials,
} from '@plant/shared/token-service-client';
import type { Session } from '../sessions/index.js';
import { leaksCard, quotaCard, secretExpiryNote } from '../credential-policy/index.js';
import { timeOf, layout } from '../portal/index.js';
import { managementDialogs } from './service-accounts-page.js';
import { delegationDialog, delegationsCard } from './delegation-pages.js';

/** When to use which credential: the portal's help text (services/token-service/README.md says the same at length). */
const whichCredential = html`<details class="card help" id="which-credential">
  <summary><h2>Which credential should I use?</h2></summary>
  <dl>
    <dt>Secret</dt>
    <dd>The simplest: the client sends its client_id and secret. Whatever runs the automation must store the secret, and anyone who copies it can use it until it is reset. Use it to get started, or where nothing better is available. An account may hold two secrets at once, to rotate without downtime.</dd>
    <dt>Key (private_key_jwt)</dt>
    <dd>The automation keeps a private key (ideally in a key manager or HSM that never hands it out) and signs a short-lived assertion for each token; we hold only the public key, so nothing we store can be used to authenticate. Use it for automation you run yourself. Add the next key before removing the old one to rotate without downtime.</dd>
    <dt>Trusted workload (federation)</dt>
    <dd>No secret and no key at all: the workload presents the token its own platform already gives it (a Kubernetes service account token, a CI job's OIDC token), and we accept it when its issuer, subject and audience match a trust you added here. Use it wherever the workload runs on such a platform.</dd>
  </dl>
  <p class="muted">Once a service account uses only keys or trusts, remove its secret. Disable an account to stop all of its credentials and tokens at once without deleting it.</p>
</details>`;

/** The account's secrets (at most two live): each with its id, dates and its own Remove; Add a secret while one is live. */
function secretCard(
  account: ServiceAccount,
  credentials: ServiceAccountCredentials,
  canManage: boolean,
): Html {
  const { secrets } = credentials;
  const others = credentials.keys.length + credentials.trusts.length;
  const removable = secrets.length > 1 || others > 0;
  return html`<section class="card credential" aria-labelledby="secret-heading" id="secret-card">
  <div class="card-head"><h2 id="secret-heading">Secrets <span class="muted">(${secrets.length} of 2)</span></h2>
  ${
    canManage
      ? html`<div class="actions">
    ${secrets.length < 2 ? html`<button type="button" class="button button-small" data-action="add-secret">Add a secret</button>` : ''}
    <button type="button" class="button button-small" data-action="reset" aria-label="Reset secret">Reset secret</button>
    ${secrets.length === 1 && others > 0 ? html`<button type="button" class="button button-small button-danger" data-action="remove-secret">Remove secret</button>` : ''}
  </div>`
      : ''
  }</div>
  ${
    secrets.length === 0
      ? html`<p class="muted" id="no-secret">No secret: this account uses keys or trusted workloads only. Reset secret gives it one again.</p>`
      : html`<table class="table" id="secrets"><caption class="sr-only">Secrets</caption>
  <thead><tr><th scope="col">Secret id</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th>${canManage && secrets.length > 1 ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${secrets.map(
    (secret) =>
      html`<tr data-secret-id="${secret.id}"><th scope="row" data-label="Secret id"><code class="client-id">${secret.id}</code></th><td data-label="Created">${timeOf(secret.created_at)}${secret.created_by ? html` <span class="muted">by ${secret.created_by}</span>` : ''}</td><td data-label="Expires">${secret.expires_at === null ? html`<span class="muted">Never</span>` : timeOf(secret.expires_at)}</td><td data-label="Last used">${timeOf(secret.last_used_at)}</td>${
        canManage && secrets.length > 1 && removable
          ? html`<td class="actions"><button type="button" class="button button-small button-danger" data-action="remove-secret-id" aria-label="Remove secret ${secret.id}">Remove</button></td>`
          : ''
      }</tr>`,
  )}</tbody></table>${secretExpiryNote(account)}
  <p class="hint">To rotate without a failed call: add a secret, move the client to it, then remove the old one. Removing a secret revokes only the tokens it obtained.</p>`
  }
</section>`;
}

function keysCard(credentials: ServiceAccountCredentials, canManage: boolean): Html {
  const atCap = credentials.keys.length >= MAX_KEYS_PER_SERVICE_ACCOUNT;
  return html`<section class="card credential" aria-labelledby="keys-heading">
  <div class="card-head"><h2 id="keys-heading">Keys <span class="muted">(${credentials.keys.length} of ${MAX_KEYS_PER_SERVICE_ACCOUNT})</span></h2>
  ${canManage && !atCap ? html`<button type="button" class="button button-small" data-action="add-key">Add key</button>` : ''}</div>
  ${
    credentials.keys.length === 0
      ? html`<p class="muted">No keys.</p>`
      : html`<table class="table" id="keys"><caption class="sr-only">Keys</caption>
  <thead><tr><th scope="col">Key id (kid)</th><th scope="col">Algorithm</th><th scope="col">Added</th><th scope="col">Last used</th>${canManage ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${credentials.keys.map(
    (k) =>
      html`<tr data-key-id="${k.id}"><th scope="row" data-label="Key id"><code class="client-id">${k.id}</code></th><td data-label="Algorithm">${k.alg}</td><td data-label="Added">${timeOf(k.created_at)}${k.created_by ? html` <span class="muted">by ${k.created_by}</span>` : ''}</td><td data-label="Last used">${timeOf(k.last_used_at)}</td>${
        canManage
          ? html`<td class="actions"><button type="button" class="button button-small button-danger" data-action="remove-key" aria-label="Remove key ${k.id}">Remove</button></td>`
          : ''
      }</tr>`,
  )}</tbody></table>`
  }
</section>`;
}

function trustsCard(credentials: ServiceAccountCredentials, canManage: boolean): Html {
  const atCap = credentials.trusts.length >= MAX_TRUSTS_PER_SERVICE_ACCOUNT;
  return html`<section class="card credential" aria-labelledby="trusts-heading">
  <div class="card-head"><h2 id="trusts-heading">Trusted workloads <span class="muted">(${credentials.trusts.length} of ${MAX_TRUSTS_PER_SERVICE_ACCOUNT})</span></h2>
  ${canManage && !atCap ? html`<button type="button" class="button button-small" data-action="add-trust">Add trust</button>` : ''}</div>
  ${
    credentials.trusts.length === 0
      ? html`<p class="muted">No trusted workloads.</p>`
      : html`<table class="table" id="trusts"><caption class="sr-only">Trusted workloads</caption>
  <thead><tr><th scope="col">Issuer</th><th scope="col">Subject</th><th scope="col">Audience</th><th scope="col">Last used</th>${canManage ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${credentials.trusts.map(
    (t) =>
      html`<tr data-trust-id="${t.id}"><th scope="row" data-label="Issuer"><code class="client-id">${t.issuer}</code></th><td data-label="Subject"><code class="client-id">${t.subject}</code></td><td data-label="Audience"><code class="client-id">${t.audience}</code></td><td data-label="Last used">${timeOf(t.last_used_at)}</td>${
        canManage
          ? html`<td class="actions"><button type="button" class="button button-small button-danger" data-action="remove-trust" aria-label="Remove trust of ${t.subject}">Remove</button></td>`
          : ''
      }</tr>`,
  )}</tbody></table>`
  }
</section>`;
}

function credentialDialogs(issuer: string): Html {
  return html`<dialog id="add-secret-dialog" aria-labelledby="add-secret-title">
  <form class="stack" data-form="add-secret">
    <h2 id="add-secret-title">Add a secret</h2>
    <p>A second secret is made beside the current one, which keeps working with its tokens. The new secret is shown once.</p>
    <label for="add-secret-expires">Expires on (optional)</label>
    <input id="add-secret-expires" name="expires" type="date" aria-describedby="add-secret-help add-secret-error">
    <p id="add-secret-help" class="hint">Leave empty for no expiry of its own (the tenant's maximum secret age still applies).</p>
    <p id="add-secret-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions"><button type="button" class="button" data-close>Cancel</button><button type="submit" class="button button-primary">Add secret</button></div>
  </form>
</dialog>
<dialog id="key-dialog" aria-labelledby="key-title">
  <form class="stack" data-form="add-key">
    <h2 id="key-title">Add a public key</h2>
    <label for="key-value">Public key (JWK or PEM)</label>
    <textarea id="key-value" name="key" rows="8" required maxlength="${PUBLIC_KEY_PEM_MAX}" spellcheck="false" aria-describedby="key-help key-error"></textarea>
    <p id="key-help" class="hint">RSA (2048 to 4096 bits, e = 65537), EC P-256 or Ed25519. Paste the <strong>public</strong> key only: a JWK object (its <code>kid</code> becomes the key id) or a <code>-----BEGIN PUBLIC KEY-----</code> block. Sign assertions with <code>iss</code> = <code>sub</code> = the client ID and <code>aud</code> = <code>${issuer}</code>.</p>
    <p id="key-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions"><button type="button" class="button" data-close>Cancel</button><button type="submit" class="button button-primary">Add key</button></div>
  </form>
</dialog>
<dialog id="trust-dialog" aria-labelledby="trust-title">
  <form class="stack" data-form="add-trust">
    <h2 id="trust-title">Trust a workload</h2>
    <label for="trust-issuer">Issuer</label>
    <input id="trust-issuer" name="issuer" type="text" required maxlength="${TRUST_FIELD_MAX}" autocomplete="off" spellcheck="false" placeholder="https://token.actions.githubusercontent.com" aria-describedby="trust-issuer-help">
    <p id="trust-issuer-help" class="hint">The OIDC issuer of the workload's platform (https): a cluster's service-account issuer, or your CI provider's.</p>
    <label for="trust-subject">Subject</label>
    <input id="trust-subject" name="subject" type="text" required maxlength="${TRUST_FIELD_MAX}" autocomplete="off" spellcheck="false" placeholder="system:serviceaccount:shop:importer" aria-describedby="trust-subject-help">
    <p id="trust-subject-help" class="hint">Exactly the <code>sub</code> its tokens carry, for example <code>system:serviceaccount:&lt;namespace&gt;:&lt;name&gt;</code> or <code>repo:&lt;org&gt;/&lt;repo&gt;:ref:refs/heads/main</code>.</p>
    <label for="trust-audience">Audience</label>
    <input id="trust-audience" name="audience" type="text" required maxlength="${TRUST_FIELD_MAX}" autocomplete="off" spellcheck="false" value="${issuer}" aria-describedby="trust-audience-help">
    <p id="trust-audience-help" class="hint">The <code>aud</code> the platform puts in the token it makes for us; by default this tenant's issuer.</p>
    <p id="trust-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions"><button type="button" class="button" data-close>Cancel</button><button type="submit" class="button button-primary">Add trust</button></div>
  </form>
</dialog>`;
}

export interface CredentialsPageOptions {
  session: Session;
  account: ServiceAccount;
  credentials: ServiceAccountCredentials;
  canManage: boolean;
  /** The realm's issuer: what assertions and platform tokens name as audience. */
  issuer: string;
  /** The tenant's default quota, shown when the account has none of its own. */
  defaultQuota: GrantQuota;
  /** Where it may act for others (token exchange). */
  delegations: readonly Delegation[];
}

export function credentialsPage({
  session,
  account,
  credentials,
  canManage,
  issuer,
  defaultQuota,
  delegations,
}: CredentialsPageOptions): string {
  const state = account.disabled
    ? html`<span class="badge badge-off" id="account-state">Disabled</span>`
    : html`<span class="badge" id="account-state">Active</span>`;
  return layout({
    title: `${account.name} · Service accounts`,
    session,
    active: 'service-accounts',
    body: html`<p class="breadcrumb"><a href="/settings/service-accounts">Service accounts</a></p>
<div class="page-head" data-client-id="${account.client_id}" data-name="${account.name}" data-role="${account.role}" data-grants="${account.grants.map((g) => g.tag).join(', ')}">
  <div>
    <h1>${account.name} ${state}</h1>
    <p class="muted">Client ID <code class="client-id">${account.client_id}</code> · role <span class="badge">${account.role}</span>${account.disabled ? html` · disabled ${timeOf(account.disabled_at)}` : ''}</p>
  </div>
  ${
    canManage
      ? html`<div class="actions">
    <button type="button" class="button" data-action="edit" aria-label="Edit role and grants of ${account.name}">Edit</button>
    ${account.disabled ? html`<button type="button" class="button" data-action="enable">Enable</button>` : html`<button type="button" class="button button-danger" data-action="disable">Disable</button>`}
    <button type="button" class="button button-danger" data-action="delete" aria-label="Delete ${account.name}">Delete</button>
  </div>`
      : ''
  }
</div>
${account.disabled ? html`<p class="alert alert-warning" id="disabled-note">This service account is disabled: none of its credentials works and its tokens are refused until it is enabled.</p>` : ''}
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
${leaksCard(credentials)}
${secretCard(account, credentials, canManage)}
${keysCard(credentials, canManage)}
${trustsCard(credentials, canManage)}
${quotaCard(account, defaultQuota, canManage)}
${delegationsCard(delegations, canManage)}
${whichCredential}
${canManage ? html`${managementDialogs}${credentialDialogs(issuer)}${delegationDialog}<script src="/assets/credentials.js" defer></script><script src="/assets/delegations.js" defer></script>` : ''}`,
  });
}
