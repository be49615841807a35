// The portal's calls to its REST API (same origin, the session cookie). Every state-changing
// call sends the csrf_token cookie value in X-CSRF-Token; a 401 goes back to sign-in.
//
// Step-up: a 401 whose WWW-Authenticate says `insufficient_user_authentication` (RFC 9470) means
// the action needs the person's second factor again. The call is kept in sessionStorage (method,
// path, body: never a secret, and an answer is never kept), the browser goes to
// /step-up?return_to=<this page>, and when the page loads again its script calls
// `replayPendingCall()`, which sends the call once more (once: a second refusal is shown, never
// another round trip) and hands the answer to the page to show as the original would have.

const PENDING_CALL = 'plant-portal:pending-call';
/** A kept call older than this is dropped rather than replayed (the step-up took too long). */
const PENDING_MAX_AGE_MS = 15 * 60_000;

function csrfToken() {
  const match = document.cookie
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith('csrf_token='));
  return match ? decodeURIComponent(match.slice('csrf_token='.length)) : '';
}

const thisPage = () => window.location.pathname + window.location.search;

async function send(method, path, body) {
  const headers = { 'X-CSRF-Token': csrfToken(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return {
      status: 0,
      body: { message: 'The portal could not be reached. Check your connection and try again.' },
    };
  }
  let parsed = null;
  if (res.status !== 204) {
    try {
      parsed = await res.json();
    } catch {
      parsed = null;
    }
  }
  const challenge = res.headers.get('WWW-Authenticate') || '';
  const stepUp = res.status === 401 && challenge.includes('insufficient_user_authentication');
  return { status: res.status, body: parsed, stepUp };
}

function signInAgain() {
  window.location.assign(`/?return_to=${encodeURIComponent(thisPage())}`);
}

/** A promise that never settles: the page is being left, nothing must react to the call. */
const leaving = () => new Promise(() => {});

export async function api(method, path, body) {
  const result = await send(method, path, body);
  if (result.stepUp) {
    try {
      sessionStorage.setItem(
        PENDING_CALL,
        JSON.stringify({ method, path, body, page: thisPage(), at: Date.now() }),
      );
    } catch {
      // Storage refused: after the step-up the person repeats the action themselves.
    }
    window.location.assign(`/step-up?return_to=${encodeURIComponent(thisPage())}`);
    return leaving();
  }
  if (result.status === 401) {
    signInAgain();
    return leaving();
  }
  return { status: result.status, body: result.body };
}

/**
 * On load: the call a step-up interrupted on this page, sent again once. Resolves to
 * `{method, path, body, result}`, or null when there is none (or it is stale or of another page).
 */
export async function replayPendingCall() {
  let pending = null;
  try {
    pending = JSON.parse(sessionStorage.getItem(PENDING_CALL) || 'null');
    sessionStorage.removeItem(PENDING_CALL);
  } catch {
    pending = null;
  }
  if (
    !pending ||
    typeof pending.method !== 'string' ||
    typeof pending.path !== 'string' ||
    !pending.path.startsWith('/api/v1/') ||
    pending.page !== thisPage() ||
    !(Date.now() - pending.at < PENDING_MAX_AGE_MS)
  )
    return null;
  const result = await send(pending.method, pending.path, pending.body);
  if (result.status === 401 && !result.stepUp) {
    signInAgain();
    return leaving();
  }
  return {
    method: pending.method,
    path: pending.path,
    body: pending.body,
    result: { status: result.status, body: result.body },
  };
}

export function messageOf(result) {
  if (result.body && typeof result.body.message === 'string') return result.body.message;
  return `Something went wrong (${result.status}). Try again.`;
}
