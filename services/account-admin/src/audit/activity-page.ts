/** The Activity page: the tenant's audit trail merged with the realm's people trail (factors, sign-ins), newest first. */
import { html, token } from '@plant/shared/page-look';
import { SIGN_IN_EVENT_RETENTION } from '@plant/shared/token-service-client';
import { layout, timeOf, type PageViewer } from '../portal/index.js';
import {
  CREDENTIAL_ACTION_TEXT,
  describeCredentialDetails,
  describeTokenBinding,
} from './credential-activity.js';
import type { AuditEvent } from './list-audit-events.js';
import { describeSignIn, PEOPLE_ACTION_TEXT, SIGN_IN_ACTION } from './people-activity.js';

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
  'tenant.policy_change': 'Changed the sign-in policy of',
};

const TARGET_TEXT: Record<string, string> = {
  user: 'person',
  invitation: 'invitation',
  session: 'session',
  tenant: 'tenant',
};

/** The token service's command line records itself as `cli`: an operator, outside the portal. */
const OPERATOR = 'cli';

function who(e: AuditEvent) {
  if (e.actor_email === OPERATOR) return html`Operator <span class="badge">command line</span>`;
  const name = e.actor_email ?? e.actor_sub;
  return html`${name === '' ? html`<span class="muted">Not recorded</span>` : token(name)}${e.actor_type === 'service_account' ? html` <span class="badge">service account</span>` : ''}`;
}

function target(e: AuditEvent) {
  if (e.target_type === 'service_account')
    return html`${e.name ?? ''} <code class="client-id nowrap">${e.client_id}</code>`;
  if (e.target_type === 'tenant') return html`<span class="badge">tenant</span>`;
  return html`${e.name === null ? '' : token(e.name)} <span class="badge">${TARGET_TEXT[e.target_type] ?? e.target_type}</span>`;
}

const legend = html`<dl class="facts hint" id="activity-legend">
  <dt>Operator</dt><dd>A change made with the token service's command line (creating a tenant, resetting factors), outside the portal.</dd>
  <dt>Signed in</dt><dd>A successful sign-in and the factor it used; "confirmed" when a signed-in person showed a second factor again for a sensitive action. Failed sign-ins are never listed: anyone can try any email.</dd>
  <dt>Not recorded</dt><dd>The event came from no network address (the command line), or from before addresses were kept.</dd>
</dl>`;

function describeDetails(event: AuditEvent): string {
  if (event.action === SIGN_IN_ACTION) return describeSignIn(event.details);
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
  session: PageViewer;
  events: AuditEvent[];
  nextHref?: string | undefined;
  firstHref?: string | undefined;
}): string {
  return layout({
    title: 'Activity',
    session,
    active: 'activity',
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Activity</h1><p class="muted">Every change to service accounts, people and the tenant's policies, the second factors people enrolled, and each successful sign-in (a person's last ${SIGN_IN_EVENT_RETENTION.perPerson}, for ${SIGN_IN_EVENT_RETENTION.days} days), newest first. Failed sign-ins are not listed.</p></div></div>
${
  events.length === 0
    ? html`<div class="card empty"><h2>No activity yet</h2><p class="muted">Changes to service accounts and people appear here.</p></div>`
    : html`<div class="table-wrap"><table class="table" id="activity">
  <caption class="sr-only">Audit trail</caption>
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
  <tbody>${events.map(
    (e) => html`<tr>
    <td data-label="When">${timeOf(e.occurred_at)}</td>
    <td data-label="Who">${who(e)}</td>
    <td data-label="What">${ACTION_TEXT[e.action] ?? e.action}${describeDetails(e) ? html` <span class="muted">(${describeDetails(e)})</span>` : ''}</td>
    <td data-label="Target">${target(e)}</td>
    <td data-label="From">${e.address === null ? html`<span class="muted">Not recorded</span>` : html`<span class="token" title="Request ${e.request_id ?? ''}">${e.address}</span>`}</td>
  </tr>`,
  )}</tbody>
</table></div>
${legend}`
}
<nav class="pager" aria-label="Pages">
  ${firstHref ? html`<a class="button" href="${firstHref}">Newest</a>` : ''}
  ${nextHref ? html`<a class="button" href="${nextHref}" rel="next">Older</a>` : ''}
</nav>`,
  });
}
