/**
 * The portal's view of a service account's token binding (RFC 9449 DPoP) and of whether it
 * may receive Shared Signals (the `ssf.*` scopes its tokens may carry): the cell of the
 * accounts table and the edit dialog's choice (audit/credential-activity.ts says a change of it).
 */
import { html, type Html } from '@plant/shared/page-look';
import type { ServiceAccount } from '@plant/shared/token-service-client';

export function tokenBindingCell(account: ServiceAccount): Html {
  const signals = account.receive_signals
    ? html` <span class="badge" title="May receive Shared Signals (scopes ssf.manage, ssf.read)">Signals</span>`
    : html``;
  return html`<td data-label="Tokens">${account.dpop_bound_access_tokens ? html`<span class="badge" title="Tokens only with a DPoP proof, bound to the client's key">DPoP</span>` : html`<span class="muted">Bearer</span>`}${signals}</td>`;
}

export const tokenBindingFieldset = html`<fieldset>
      <legend>Tokens</legend>
      <label class="choice"><input type="checkbox" id="edit-dpop" name="dpop_bound_access_tokens" aria-describedby="edit-dpop-help"> Require sender-constrained tokens (DPoP)</label>
      <p id="edit-dpop-help" class="hint">Tokens are then issued only with a DPoP proof and bound to the client's key: a copied token is useless without that key. The client must support DPoP (RFC 9449).</p>
      <label class="choice"><input type="checkbox" id="edit-signals" name="receive_signals" aria-describedby="edit-signals-help"> Receive Shared Signals</label>
      <p id="edit-signals-help" class="hint">The account may then subscribe to this tenant's security events (OpenID Shared Signals: CAEP and RISC) with tokens of scope ssf.manage or ssf.read.</p>
    </fieldset>`;
