/**
 * The portal's Settings → Credentials page: the tenant's credential policy (maximum secret
 * age, what a leak report does, the default grant quota), the secrets that expire within two
 * weeks, and the accounts nobody used for 90 days. Also the cards the service-account page
 * adds for the same concerns: the secret's expiry, the leaks reported, the account's quota.
 */
import { html, type Html } from '@plant/shared/page-look';
import {
  QUOTA_PER_MINUTE_MAX,
  SECRET_MAX_AGE_DAYS_MAX,
  type CredentialPolicy,
  type GrantQuota,
  type ServiceAccount,
  type ServiceAccountCredentials,
} from '@plant/shared/token-service-client';
import type { Session } from '../sessions/index.js';
import { layout, timeOf } from '../portal/index.js';

const DAY_MS = 86_400_000;
/** Secrets expiring within this many days are called out (and expired ones). */
export const EXPIRY_WARNING_DAYS = 14;
/** Accounts without a grant for this many days are listed as unused. */
export const UNUSED_DAYS = 90;
const SCRIPT = html`<script type="module" src="/assets/credential-hygiene.js"></script>`;

/** Accounts whose secret expires within EXPIRY_WARNING_DAYS (or has expired), soonest first. */
export function expiringSoon(accounts: ServiceAccount[], now = Date.now()): ServiceAccount[] {
  return accounts
    .filter(
      (a) =>
        a.secret_expires_at !== null &&
        Date.parse(a.secret_expires_at) - now <= EXPIRY_WARNING_DAYS * DAY_MS,
    )
    .sort((x, y) => Date.parse(x.secret_expires_at!) - Date.parse(y.secret_expires_at!));
}

/** Accounts with no grant for UNUSED_DAYS (never used ones count from their creation). */
export function unusedFor90Days(accounts: ServiceAccount[], now = Date.now()): ServiceAccount[] {
  return accounts.filter(
    (a) => now - Date.parse(a.last_used_at ?? a.created_at) >= UNUSED_DAYS * DAY_MS,
  );
}

const MODE_TEXT: Record<GrantQuota['mode'], string> = {
  off: 'Off (not counted)',
  log: 'Log only (a metric and an audit event, nothing refused)',
  enforce: 'Enforce (429 with Retry-After)',
};

function quotaText(quota: GrantQuota): string {
  return quota.mode === 'off' ? 'Off' : `${quota.per_minute} a minute, ${quota.mode}`;
}

function quotaFields(prefix: string, quota: GrantQuota): Html {
  return html`<label for="${prefix}-per-minute">Grants per minute</label>
    <input id="${prefix}-per-minute" name="per_minute" type="number" min="1" max="${QUOTA_PER_MINUTE_MAX}" step="1" required value="${quota.per_minute}">
    <label for="${prefix}-mode">Mode</label>
    <select id="${prefix}-mode" name="mode">${(['off', 'log', 'enforce'] as const).map(
      (mode) =>
        html`<option value="${mode}" ${quota.mode === mode ? html`selected` : ''}>${MODE_TEXT[mode]}</option>`,
    )}</select>`;
}

function policyCard(policy: CredentialPolicy, canManage: boolean): Html {
  const facts = html`<dl class="facts" id="policy-facts">
    <dt>Maximum secret age</dt><dd>${policy.secret_max_age_days === null ? 'None' : `${policy.secret_max_age_days} days`}</dd>
    <dt>Leaked secrets</dt><dd>${policy.leak_response === 'revoke' ? 'Revoked at once' : 'Reported only (the secret keeps working)'}</dd>
    <dt>Default grant quota</dt><dd>${quotaText(policy.default_quota)}</dd>
    <dt>Changed</dt><dd>${timeOf(policy.updated_at)}${policy.updated_by ? html` <span class="muted">by ${policy.updated_by}</span>` : ''}</dd>
  </dl>`;
  if (!canManage)
    return html`<section class="card" aria-labelledby="policy-heading"><h2 id="policy-heading">Credential policy</h2>${facts}</section>`;
  return html`<section class="card" aria-labelledby="policy-heading"><h2 id="policy-heading">Credential policy</h2>${facts}
  <form class="stack" data-form="credential-policy">
    <label for="max-age">Maximum secret age (days)</label>
    <input id="max-age" name="secret_max_age_days" type="number" min="1" max="${SECRET_MAX_AGE_DAYS_MAX}" step="1" value="${policy.secret_max_age_days ?? ''}" aria-describedby="max-age-help">
    <p id="max-age-help" class="hint">1 to ${SECRET_MAX_AGE_DAYS_MAX}; empty for none. Applies to existing secrets at once, counted from when each was created: an older secret stops working immediately.</p>
    <fieldset><legend>When GitHub reports a leaked secret</legend>
      <label class="choice"><input type="radio" name="leak_response" value="revoke" ${policy.leak_response === 'revoke' ? html`checked` : ''}> Revoke it at once</label>
      <label class="choice"><input type="radio" name="leak_response" value="notify" ${policy.leak_response === 'notify' ? html`checked` : ''}> Report it only</label>
    </fieldset>
    <fieldset><legend>Default grant quota</legend>${quotaFields('default-quota', policy.default_quota)}</fieldset>
    <p class="alert alert-error" role="alert" hidden></p>
    <div class="form-actions"><button type="submit" class="button button-primary">Save policy</button></div>
  </form></section>`;
}

function accountLink(a: ServiceAccount): Html {
  return html`<a href="/settings/service-accounts/${encodeURIComponent(a.client_id)}">${a.name}</a>`;
}

function expiringCard(accounts: ServiceAccount[], now: number): Html {
  const soon = expiringSoon(accounts, now);
  return html`<section class="card" aria-labelledby="expiring-heading"><h2 id="expiring-heading">Secrets expiring within ${EXPIRY_WARNING_DAYS} days</h2>
  ${
    soon.length === 0
      ? html`<p class="muted" id="no-expiring">None.</p>`
      : html`<ul id="expiring">${soon.map(
          (a) =>
            html`<li>${accountLink(a)}: ${Date.parse(a.secret_expires_at!) <= now ? html`<strong>expired</strong> ` : 'expires '}${timeOf(a.secret_expires_at)}</li>`,
        )}</ul>`
  }</section>`;
}

function unusedCard(accounts: ServiceAccount[], now: number): Html {
  const unused = unusedFor90Days(accounts, now);
  return html`<section class="card" aria-labelledby="unused-heading"><h2 id="unused-heading">Unused for ${UNUSED_DAYS} days</h2>
  ${
    unused.length === 0
      ? html`<p class="muted" id="no-unused">None.</p>`
      : html`<ul id="unused">${unused.map(
          (a) => html`<li>${accountLink(a)}: last used ${timeOf(a.last_used_at)}</li>`,
        )}</ul>
  <p class="hint">Consider disabling or deleting them: an unused credential is only a risk.</p>`
  }</section>`;
}

export function credentialPolicyPage({
  session,
  policy,
  accounts,
  canManage,
  now = Date.now(),
}: {
  session: Session;
  policy: CredentialPolicy;
  accounts: ServiceAccount[];
  canManage: boolean;
  now?: number;
}): string {
  return layout({
    title: 'Credentials · Settings',
    session,
    active: 'credentials',
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Credentials</h1>
  <p class="muted">How the service accounts of this tenant may keep and use their credentials.</p></div></div>
${policyCard(policy, canManage)}
${expiringCard(accounts, now)}
${unusedCard(accounts, now)}
${canManage ? SCRIPT : ''}`,
  });
}

/** The secret's expiry for the service-account page: a warning within EXPIRY_WARNING_DAYS. */
export function secretExpiryNote(account: ServiceAccount, now = Date.now()): Html {
  if (account.secret_expires_at === null) return html``;
  const left = Date.parse(account.secret_expires_at) - now;
  if (left <= 0)
    return html`<p class="alert alert-error" id="secret-expiry">The secret expired ${timeOf(account.secret_expires_at)} and no longer works: reset it.</p>`;
  if (left <= EXPIRY_WARNING_DAYS * DAY_MS)
    return html`<p class="alert alert-warning" id="secret-expiry">The secret expires ${timeOf(account.secret_expires_at)}: reset it before then.</p>`;
  return html`<p class="muted" id="secret-expiry">The secret expires ${timeOf(account.secret_expires_at)}.</p>`;
}

/** Where the account's secrets were reported leaked. */
export function leaksCard(credentials: ServiceAccountCredentials): Html {
  if (credentials.leaks.length === 0) return html``;
  return html`<section class="card" aria-labelledby="leaks-heading" id="leaks-card">
  <h2 id="leaks-heading">Leaked secrets</h2>
  <p class="alert alert-error" id="leak-note">A secret of this account was found in public. ${credentials.leaks.some((l) => l.secret_current) ? 'It still works: reset it now, then remove it from where it was found.' : 'It no longer works; remove it from where it was found.'}</p>
  <table class="table" id="leaks"><caption class="sr-only">Leaks</caption>
  <thead><tr><th scope="col">Found at</th><th scope="col">Where</th><th scope="col">Reported</th><th scope="col">By</th><th scope="col">Action</th></tr></thead>
  <tbody>${credentials.leaks.map(
    (l) =>
      html`<tr><th scope="row" data-label="Found at"><code class="client-id">${l.url || '(not given)'}</code></th><td data-label="Where">${l.source || '-'}</td><td data-label="Reported">${timeOf(l.reported_at)}</td><td data-label="By">${l.reporter}</td><td data-label="Action">${l.action === 'revoked' ? 'Revoked' : 'Reported only'}</td></tr>`,
  )}</tbody></table></section>`;
}

/** The account's grant quota: its own, or the tenant's default; a form to set or clear its own. */
export function quotaCard(
  account: ServiceAccount,
  defaultQuota: GrantQuota,
  canManage: boolean,
): Html {
  const effective = account.quota ?? defaultQuota;
  const text = html`<p id="quota-text">${quotaText(effective)} <span class="muted">(${account.quota === null ? "the tenant's default" : 'its own'})</span></p>`;
  if (!canManage)
    return html`<section class="card" aria-labelledby="quota-heading"><h2 id="quota-heading">Grant quota</h2>${text}</section>`;
  return html`<section class="card" aria-labelledby="quota-heading"><h2 id="quota-heading">Grant quota</h2>${text}
  <form class="stack" data-form="quota" data-client-id="${account.client_id}">
    ${quotaFields('quota', effective)}
    <p class="alert alert-error" role="alert" hidden></p>
    <div class="form-actions"><button type="submit" class="button button-primary">Save quota</button>
    ${account.quota === null ? '' : html`<button type="button" class="button" data-action="clear-quota">Use the tenant's default</button>`}</div>
  </form>${SCRIPT}</section>`;
}
