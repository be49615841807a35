/**
 * The portal's view of a service account's token binding (RFC 9449 DPoP): the cell of the
 * accounts table, the edit dialog's choice, and how the audit trail says a change of it.
 */
import { html, type Html } from '@plant/shared/page-look';
import type { ServiceAccount } from '@plant/shared/token-service-client';

export function tokenBindingCell(account: ServiceAccount): Html {
  return html`<td data-label="Tokens">${account.dpop_bound_access_tokens ? html`<span class="badge" title="Tokens only with a DPoP proof, bound to the client's key">DPoP</span>` : html`<span class="muted">Bearer</span>`}</td>`;
}

export const tokenBindingFieldset = html`<fieldset>
      <legend>Tokens</legend>
      <label class="choice"><input type="checkbox" id="edit-dpop" name="dpop_bound_access_tokens" aria-describedby="edit-dpop-help"> Require sender-constrained tokens (DPoP)</label>
      <p id="edit-dpop-help" class="hint">Tokens are then issued only with a DPoP proof and bound to the client's key: a copied token is useless without that key. The client must support DPoP (RFC 9449).</p>
    </fieldset>`;

/** `DPoP required` / `DPoP not required` for an update that changed it. */
export function describeTokenBinding(details: Record<string, unknown>): string | undefined {
  const change = details.dpop_bound_access_tokens as { to?: unknown } | undefined;
  if (typeof change?.to !== 'boolean') return undefined;
  return change.to ? 'DPoP required' : 'DPoP not required';
}
