/**
 * The "Acts for others" card of a service account's page: where it may call an API on behalf of
 * its callers (token exchange, RFC 8693), and the dialog that allows one more (public/delegations.js
 * puts the whole set through `PUT …/delegations`).
 */
import type { Delegation } from '@plant/shared/token-service-client';
import { html, type Html } from '@plant/shared/page-look';
import { timeOf } from '../portal/index.js';

export function delegationsCard(delegations: readonly Delegation[], canManage: boolean): Html {
  return html`<section class="card credential" aria-labelledby="delegations-heading" id="delegations-card">
  <div class="card-head"><h2 id="delegations-heading">Acts for others</h2>
  ${canManage ? html`<button type="button" class="button button-small" data-action="add-delegation">Allow an API</button>` : ''}</div>
  <p class="hint">It may exchange the token a caller sent it for one to call this API on the caller's behalf: the caller's grants, narrowed to the scope below, and both named in the token.</p>
  ${
    delegations.length === 0
      ? html`<p class="muted">It acts for no one.</p>`
      : html`<table class="table" id="delegations"><caption class="sr-only">APIs it may call for others</caption>
  <thead><tr><th scope="col">API</th><th scope="col">At most</th><th scope="col">Allowed</th>${canManage ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${delegations.map(
    (d) =>
      html`<tr data-audience="${d.audience}" data-scope="${d.scope}"><th scope="row" data-label="API"><code class="client-id">${d.audience}</code></th><td data-label="At most">${d.scope}</td><td data-label="Allowed">${timeOf(d.created_at)}</td>${
        canManage
          ? html`<td class="actions"><button type="button" class="button button-small button-danger" data-action="remove-delegation" aria-label="Stop acting for others at ${d.audience}">Remove</button></td>`
          : ''
      }</tr>`,
  )}</tbody></table>`
  }
</section>`;
}

export const delegationDialog: Html = html`<dialog id="delegation-dialog" aria-labelledby="delegation-title">
  <form class="stack" data-form="add-delegation">
    <h2 id="delegation-title">Allow it to act for others</h2>
    <label for="delegation-audience">API</label>
    <input id="delegation-audience" name="audience" type="url" required maxlength="2048" autocomplete="off" spellcheck="false" placeholder="https://plants.example.com" aria-describedby="delegation-audience-help">
    <p id="delegation-audience-help" class="hint">The audience of the API it calls for its callers: the Plant Store's, or another team's API the platform issues tokens for.</p>
    <label for="delegation-scope">At most</label>
    <select id="delegation-scope" name="scope">
      <option value="plants:read">Read (plants:read)</option>
      <option value="plants:read plants:write">Read and change (plants:read plants:write)</option>
    </select>
    <p id="delegation-error" class="alert alert-error" role="alert" hidden></p>
    <div class="dialog-actions"><button type="button" class="button" data-close>Cancel</button><button type="submit" class="button button-primary">Allow</button></div>
  </form>
</dialog>`;
