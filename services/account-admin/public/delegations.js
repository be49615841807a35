// A service account's "Acts for others" card (CSP: script-src 'self'). Builds on portal.js
// (loaded first): its API call with the CSRF header, dialogs and confirmations. The API takes
// the whole set, so each change sends what the table shows, with one entry added or left out.

(function delegations() {
  const portal = window.plantPortal;
  const head = document.querySelector('[data-client-id]');
  const dialog = document.getElementById('delegation-dialog');
  if (!portal || !head || !dialog) return;
  const path = `/api/v1/service-accounts/${encodeURIComponent(head.dataset.clientId)}/delegations`;
  const name = head.dataset.name;
  const current = () =>
    Array.from(document.querySelectorAll('#delegations tr[data-audience]')).map((row) => ({
      audience: row.dataset.audience,
      scope: row.dataset.scope,
    }));
  const put = async (list) => {
    const result = await portal.api('PUT', path, { delegations: list });
    if (result.status === 200) {
      window.location.reload();
      return null;
    }
    return portal.messageOf(result);
  };

  const form = dialog.querySelector('form');
  const error = dialog.querySelector('[role="alert"]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    portal.clearError(error);
    portal.busy(form, true);
    const audience = form.querySelector('#delegation-audience').value.trim();
    const scope = form.querySelector('#delegation-scope').value;
    const message = await put([
      ...current().filter((d) => d.audience !== audience),
      { audience, scope },
    ]);
    portal.busy(form, false);
    if (message) portal.showError(error, message);
  });

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    if (button.dataset.action === 'add-delegation') {
      form.reset();
      portal.clearError(error);
      portal.openDialog(dialog, 'input');
      return;
    }
    if (button.dataset.action !== 'remove-delegation') return;
    const audience = button.closest('tr').dataset.audience;
    portal.confirm({
      title: `Stop “${name}” acting for others at ${audience}?`,
      message: `Every token “${name}” holds now is revoked, the ones it obtained for its callers among them.`,
      button: 'Remove',
      danger: true,
      action: () => put(current().filter((d) => d.audience !== audience)),
    });
  });
})();
