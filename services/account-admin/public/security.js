// Settings → Security (CSP: script-src 'self'): removing one of your second factors, with a
// confirmation. Builds on portal.js (loaded first): its API call (CSRF header, step-up), dialogs.
import { reloadAfter } from './portal-reload.js';

(function security() {
  const portal = window.plantPortal;
  if (!portal) return;

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action="remove-factor"]');
    if (!button) return;
    const row = button.closest('tr[data-factor-id]');
    const name = row.dataset.factorName;
    portal.confirm({
      title: `Remove ${name}?`,
      message:
        'It no longer signs you in or confirms a sensitive action. Every session of yours ends, this one too: sign in again.',
      button: 'Remove',
      danger: true,
      action: async () => {
        const result = await portal.api(
          'DELETE',
          `/api/v1/me/factors/${encodeURIComponent(row.dataset.factorId)}`,
        );
        if (result.status !== 204) return portal.messageOf(result);
        reloadAfter(null, `${name} was removed.`);
        return null;
      },
    });
  });
})();
