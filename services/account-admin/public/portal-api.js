// The portal's calls to its REST API (same origin, the session cookie). Every state-changing
// call sends the csrf_token cookie value in X-CSRF-Token; a 401 goes back to sign-in.

function csrfToken() {
  const match = document.cookie
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith('csrf_token='));
  return match ? decodeURIComponent(match.slice('csrf_token='.length)) : '';
}

export async function api(method, path, body) {
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
  if (res.status === 401) {
    window.location.assign(`/?return_to=${encodeURIComponent(window.location.pathname)}`);
  }
  return { status: res.status, body: parsed };
}

export function messageOf(result) {
  if (result.body && typeof result.body.message === 'string') return result.body.message;
  return `Something went wrong (${result.status}). Try again.`;
}
