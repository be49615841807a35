// A service account's page: its keys, trusted workloads, secret and state (CSP: script-src 'self').
// Builds on portal.js (loaded first): its API call with the CSRF header, dialogs and confirmations.

(function credentials() {
  const portal = window.plantPortal;
  const $ = (selector, root = document) => root.querySelector(selector);
  const head = $('[data-client-id]');
  if (!portal || !head) return;
  const base = `/api/v1/service-accounts/${encodeURIComponent(head.dataset.clientId)}`;
  const name = head.dataset.name;

  // A JWK (a JSON object) or a PEM, as pasted.
  function keyBody(text) {
    const trimmed = text.trim();
    if (trimmed.startsWith('{')) {
      try {
        return { jwk: JSON.parse(trimmed) };
      } catch {
        return null;
      }
    }
    return { pem: trimmed };
  }

  function formDialog(id, submit) {
    const dialog = document.getElementById(id);
    const form = $('form', dialog);
    const error = $('[role="alert"]', dialog);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      portal.clearError(error);
      portal.busy(form, true);
      const message = await submit(form);
      portal.busy(form, false);
      if (message) portal.showError(error, message);
    });
    return {
      open() {
        form.reset();
        portal.clearError(error);
        portal.openDialog(dialog, 'textarea, input');
      },
    };
  }

  const reloadOr = (result, status) => {
    if (result.status === status) {
      window.location.reload();
      return null;
    }
    return portal.messageOf(result);
  };

  const addKey = formDialog('key-dialog', async (form) => {
    const body = keyBody($('#key-value', form).value);
    if (!body) return 'That is not valid JSON. Paste a JWK object or a PEM block.';
    return reloadOr(await portal.api('POST', `${base}/keys`, body), 201);
  });
  const addTrust = formDialog('trust-dialog', async (form) => {
    const value = (field) => $(`#trust-${field}`, form).value.trim();
    return reloadOr(
      await portal.api('POST', `${base}/trusts`, {
        issuer: value('issuer'),
        subject: value('subject'),
        audience: value('audience'),
      }),
      201,
    );
  });

  // "Add a secret": the new secret is shown once, in the page's secret dialog (portal.js).
  const addSecret = formDialog('add-secret-dialog', async (form) => {
    const day = $('#add-secret-expires', form).value;
    const body = day ? { expires_at: new Date(`${day}T23:59:59`).toISOString() } : {};
    const result = await portal.api('POST', `${base}/secrets`, body);
    if (result.status !== 201) return portal.messageOf(result);
    form.closest('dialog').close();
    portal.showSecret(
      { client_id: head.dataset.clientId, secret: result.body.secret },
      `New secret for “${name}”`,
      `A second secret was added to “${name}”.`,
    );
    return null;
  });

  const confirmations = {
    'remove-secret-id': (id) => ({
      title: `Remove secret “${id}”?`,
      message:
        'This secret stops working and exactly the tokens obtained with it are revoked. The other secret, keys and trusted workloads, and their tokens, keep working.',
      button: 'Remove secret',
      path: `${base}/secrets/${encodeURIComponent(id)}`,
    }),
    'remove-key': (id) => ({
      title: `Remove key “${id}”?`,
      message:
        'Assertions signed with this key stop working, and the tokens “' +
        name +
        '” obtained with it are revoked; its other credentials keep working.',
      button: 'Remove key',
      path: `${base}/keys/${encodeURIComponent(id)}`,
    }),
    'remove-trust': (id, row) => ({
      title: 'Remove this trusted workload?',
      message:
        'Tokens of “' +
        row.querySelector('th').textContent.trim() +
        '” stop authenticating “' +
        name +
        '”, and the tokens obtained through it are revoked; its other credentials keep working.',
      button: 'Remove trust',
      path: `${base}/trusts/${encodeURIComponent(id)}`,
    }),
    'remove-secret': () => ({
      title: `Remove the secret of “${name}”?`,
      message:
        'The secret stops working and the tokens obtained with it are revoked. Keys and trusted workloads keep working. Reset secret gives it one again.',
      button: 'Remove secret',
      path: `${base}/secret`,
    }),
    disable: () => ({
      title: `Disable “${name}”?`,
      message:
        'Every token it holds is refused at once, and none of its credentials works until it is enabled again.',
      button: 'Disable',
      path: `${base}/disable`,
      method: 'POST',
      status: 200,
    }),
    enable: () => ({
      title: `Enable “${name}”?`,
      message: 'Its credentials work again.',
      button: 'Enable',
      path: `${base}/enable`,
      method: 'POST',
      status: 200,
      safe: true,
    }),
  };

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const action = button.dataset.action;
    if (action === 'add-key') return addKey.open();
    if (action === 'add-trust') return addTrust.open();
    if (action === 'add-secret') return addSecret.open();
    const describe = confirmations[action];
    if (!describe) return;
    const row = button.closest('tr');
    const id = row ? row.dataset.keyId || row.dataset.trustId || row.dataset.secretId : undefined;
    const step = describe(id, row);
    portal.confirm({
      title: step.title,
      message: step.message,
      button: step.button,
      danger: !step.safe,
      action: async () =>
        reloadOr(await portal.api(step.method || 'DELETE', step.path), step.status || 204),
    });
  });
})();
