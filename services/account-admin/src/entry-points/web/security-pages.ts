/**
 * Settings → Security: the signed-in person's second factors (as the token service's user view
 * counts them) and the ways to add one, each of which runs at the realm through GET /step-up
 * with its `action` (the realm first asks an existing factor, then enrols, then comes back here).
 */
import { html, type Html } from '@plant/shared/page-look';
import type { Session } from '../../domain/portal-sessions.js';
import { layout } from './pages.js';

/** What the user view says of the person's factors; undefined when it does not say (an older token service). */
export interface FactorSummary {
  passkeys: number;
  totp: boolean;
  recovery_codes_left: number;
}

const RETURN = encodeURIComponent('/settings/security');
const stepUp = (action: string) => `/step-up?action=${action}&return_to=${RETURN}`;

function factorList(factors: FactorSummary | undefined): Html {
  if (factors === undefined)
    return html`<p class="muted">Your second factors cannot be listed here yet.</p>`;
  return html`<dl class="facts">
  <dt>Passkeys</dt><dd>${factors.passkeys === 0 ? 'None' : String(factors.passkeys)}</dd>
  <dt>Authenticator app</dt><dd>${factors.totp ? 'Set up' : 'Not set up'}</dd>
  <dt>Recovery codes left</dt><dd>${String(factors.recovery_codes_left)}</dd>
</dl>`;
}

export function securityPage({
  session,
  factors,
}: {
  session: Session;
  factors: FactorSummary | undefined;
}): string {
  return layout({
    title: 'Security',
    session,
    active: 'security',
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Security</h1><p class="muted">A second factor keeps your account safe when your password is not: sensitive actions ask for it again after 10 minutes.</p></div></div>
<section class="card" aria-labelledby="factors-title">
  <h2 id="factors-title">Second factors</h2>
  ${factorList(factors)}
  <p class="action-buttons">
    <a class="button" href="${stepUp('enrol-passkey')}">Add a passkey</a>
    <a class="button" href="${stepUp('enrol-totp')}">Set up an authenticator app</a>
    <a class="button" href="${stepUp('recovery-codes')}">New recovery codes</a>
  </p>
  <p class="hint">Each opens your account's sign-in page, which asks for a factor you already have first.</p>
</section>
<section class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title">Sessions</h2>
  <p>See where you are signed in to this portal, and end any session you do not recognise.</p>
  <p><a class="button" href="/settings/sessions">Your sessions</a></p>
</section>`,
  });
}

/** The factor counts of a user view, when it carries them in the expected shape. */
export function factorSummaryOf(user: object): FactorSummary | undefined {
  const factors = (user as { factors?: Partial<FactorSummary> }).factors;
  if (
    factors === undefined ||
    typeof factors.passkeys !== 'number' ||
    typeof factors.totp !== 'boolean' ||
    typeof factors.recovery_codes_left !== 'number'
  )
    return undefined;
  return {
    passkeys: factors.passkeys,
    totp: factors.totp,
    recovery_codes_left: factors.recovery_codes_left,
  };
}
