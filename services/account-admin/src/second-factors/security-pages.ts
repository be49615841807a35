/**
 * Settings → Security: the signed-in person's second factors, each of which they may remove
 * (a change to how they sign in: the API asks for a recent factor first), and the ways to add
 * one, each of which runs at the realm through GET /step-up with its `action` (the realm first
 * asks an existing factor, then enrols, then comes back here).
 */
import { html, type Html } from '@plant/shared/page-look';
import type { UserFactor, UserFactors } from '@plant/shared/token-service-client';
import type { Session } from '../sessions/index.js';
import { ASSETS_PATH, confirmDialog, layout, timeOf } from '../portal/index.js';

const RETURN = encodeURIComponent('/settings/security');
const stepUp = (action: string) => `/step-up?action=${action}&return_to=${RETURN}`;

const KIND_TEXT: Record<UserFactor['kind'], string> = {
  passkey: 'Passkey',
  totp: 'Authenticator app',
};

function factorRow(f: UserFactor): Html {
  const name = `${KIND_TEXT[f.kind]} ${f.label}`;
  return html`<tr data-factor-id="${f.id}" data-factor-name="${name}">
  <th scope="row" data-label="Factor">${f.label}</th>
  <td data-label="Kind">${KIND_TEXT[f.kind]}</td>
  <td data-label="Added">${timeOf(f.created_at)}</td>
  <td data-label="Last used">${f.last_used_at === null ? html`<span class="muted">Never</span>` : timeOf(f.last_used_at)}</td>
  <td class="actions" data-label="Actions"><div class="action-buttons">
    <button type="button" class="button button-small button-danger" data-action="remove-factor" aria-label="Remove ${name}">Remove</button>
  </div></td>
</tr>`;
}

/** The ways to add a factor; new recovery codes only once there is a factor they stand in for. */
function addButtons({ factors }: UserFactors): Html {
  return html`<p class="action-buttons">
    <a class="button" href="${stepUp('enrol-passkey')}">Add a passkey</a>
    ${factors.some((f) => f.kind === 'totp') ? '' : html`<a class="button" href="${stepUp('enrol-totp')}">Set up an authenticator app</a>`}
    ${factors.length === 0 ? '' : html`<a class="button" href="${stepUp('recovery-codes')}">New recovery codes</a>`}
  </p>
  <p class="hint">${factors.length === 0 ? 'Each opens your tenant’s sign-in page. Recovery codes come with your first factor.' : 'Each opens your tenant’s sign-in page, which asks for a factor you already have first.'}</p>`;
}

function factorList({ factors, recovery_codes_left }: UserFactors): Html {
  const table =
    factors.length === 0
      ? html`<p class="muted">You have no second factor yet.</p>`
      : html`<div class="table-wrap"><table class="table">
  <caption class="sr-only">Your second factors</caption>
  <thead><tr><th scope="col">Factor</th><th scope="col">Kind</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${factors.map(factorRow)}</tbody>
</table></div>`;
  return html`${table}
<p>Recovery codes left: <strong>${String(recovery_codes_left)}</strong></p>`;
}

export function securityPage({
  session,
  factors,
}: {
  session: Session;
  factors: UserFactors;
}): string {
  return layout({
    title: 'Security',
    session,
    active: 'security',
    scripts: [`${ASSETS_PATH}/security.js`],
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Security</h1><p class="muted">A second factor keeps your sign-in safe when your password is not: sensitive actions ask for it again after 10 minutes.</p></div></div>
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
<section class="card" aria-labelledby="factors-title">
  <h2 id="factors-title">Second factors</h2>
  ${factorList(factors)}
  ${addButtons(factors)}
</section>
<section class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title">Sessions</h2>
  <p>See where you are signed in to this portal, and end any session you do not recognise.</p>
  <p><a class="button" href="/settings/sessions">Your sessions</a></p>
</section>
${confirmDialog}`,
  });
}
