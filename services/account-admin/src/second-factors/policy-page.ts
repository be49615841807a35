import { html } from '@plant/shared/page-look';
import type { PeopleSettings } from './managed-factors.js';
import type { Session } from '../sessions/index.js';
import { ASSETS_PATH, layout } from '../portal/index.js';

/**
 * Settings → Sign-in policy: whether the tenant's Account Admins must hold a second factor. The change
 * goes through the API (people-policy.js, portal-api.js), so it asks for a recent second factor
 * as every other change does.
 */
export function policyPage({
  session,
  settings,
}: {
  session: Session;
  settings: PeopleSettings;
}): string {
  return layout({
    title: 'Sign-in policy',
    session,
    active: 'policy',
    scripts: [`${ASSETS_PATH}/people-policy.js`],
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Sign-in policy</h1><p class="muted">How the people of this tenant sign in.</p></div></div>
<section class="card">
  <form id="people-policy" class="stack">
    <h2>Second factor for Account Admins</h2>
    <p class="muted">When required, an Account Admin without a passkey or an authenticator app adds one at their next sign-in, before it completes.</p>
    <label class="check"><input type="checkbox" id="require-admin-second-factor" name="require_admin_second_factor"${settings.require_admin_second_factor ? html` checked` : ''}> Require a second factor for Account Admins</label>
    <p id="policy-error" class="alert alert-error" role="alert" hidden></p>
    <div class="form-actions"><button type="submit" class="button button-primary">Save policy</button></div>
  </form>
  <div id="policy-status" role="status" aria-live="polite"></div>
</section>`,
  });
}
