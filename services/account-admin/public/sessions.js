// Settings → Sessions (CSP: script-src 'self'): ending a session, with a confirmation. Builds on
// portal.js (loaded first): its API call (CSRF header, step-up), dialogs and confirmations.
import { reloadAfter } from './portal-reload.js';

(function sessions() {
  const portal = window.plantPortal;
  if (!portal) return;

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action="end-session"]');
    if (!button) return;
    const row = button.closest('tr[data-session-id]');
    const current = row.dataset.current === 'true';
    const browser = row.querySelector('th').firstChild.textContent.trim();
    portal.confirm({
      title: current ? 'Sign out of this session?' : `End the session of ${browser}?`,
      message: current
        ? 'You are signed out here and go back to the sign-in page.'
        : 'Whoever uses that session is signed out at their next request.',
      button: current ? 'Sign out' : 'End session',
      danger: true,
      action: async () => {
        if (current) {
          // This browser's own session: the full sign-out, which ends the realm's session too.
          const out = await portal.api('POST', '/logout');
          window.location.assign(out.body?.redirect ? out.body.redirect : '/');
          return null;
        }
        const result = await portal.api(
          'DELETE',
          `/api/v1/me/sessions/${encodeURIComponent(row.dataset.sessionId)}`,
        );
        if (result.status !== 204) return portal.messageOf(result);
        reloadAfter(null, `The session of ${browser} was ended.`);
        return null;
      },
    });
  });
})();
