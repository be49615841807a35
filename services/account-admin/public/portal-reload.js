// A change reloads the page (the list is rendered by the server). What had focus, and what
// happened, survive the reload in sessionStorage (a client_id and a sentence, never a secret),
// so a keyboard or screen-reader user carries on where they were rather than at the top.

const $ = (selector, root = document) => root.querySelector(selector);
const rowOf = (element) => element.closest('tr[data-client-id]');

const AFTER_RELOAD = 'plant-portal:after-reload';
const FOCUSABLE_ACTIONS = ['create', 'edit', 'reset', 'delete'];

/** Reloads the page; after it, focus goes back to `trigger` (or its row's same action) and `message` is announced. */
export function reloadAfter(trigger, message) {
  const row = trigger ? rowOf(trigger) : null;
  const focus = row
    ? { clientId: row.dataset.clientId, action: trigger.dataset.action }
    : { action: 'create' };
  try {
    sessionStorage.setItem(AFTER_RELOAD, JSON.stringify({ focus, message }));
  } catch {
    // Storage refused: the reload starts at the top of the page.
  }
  window.location.reload();
}

/** On load: applies what `reloadAfter` saved, once. */
export function restoreAfterReload() {
  let saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(AFTER_RELOAD) || 'null');
    sessionStorage.removeItem(AFTER_RELOAD);
  } catch {
    saved = null;
  }
  if (!saved || typeof saved !== 'object' || !saved.focus) return;
  const action = FOCUSABLE_ACTIONS.includes(saved.focus.action) ? saved.focus.action : 'create';
  const row = [...document.querySelectorAll('tr[data-client-id]')].find(
    (r) => r.dataset.clientId === saved.focus.clientId,
  );
  // A deleted row is gone: focus goes to the page's next thing to do.
  const target =
    (row && $(`[data-action="${action}"]`, row)) || $('[data-action="create"]') || $('#main');
  if (target) target.focus();
  const status = $('#page-status');
  if (status && typeof saved.message === 'string') status.textContent = saved.message;
}
