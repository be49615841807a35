/** Where to land after sign-in when nothing (valid) was asked for. */
export const DEFAULT_LANDING = '/settings/service-accounts';

const BASE = 'http://portal.invalid';

/**
 * Accepts only a same-origin relative path (`/x?y`): never a scheme, a host, `//host`,
 * `/\host` (browsers read backslashes as slashes) or control characters, so a crafted
 * link can never send a signed-in user to another site (no open redirect). The check runs
 * on the normalised path, the one a browser would follow: dot segments (`/.//x`,
 * `/%2e//x`, `/a/..//x`) can collapse into a protocol-relative `//x`.
 */
export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 512) return DEFAULT_LANDING;
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || /[\p{Cc}\s]/u.test(raw))
    return DEFAULT_LANDING;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return DEFAULT_LANDING;
  }
  if (url.origin !== BASE) return DEFAULT_LANDING;
  const path = `${url.pathname}${url.search}`;
  if (!isSameOriginPath(path)) return DEFAULT_LANDING;
  // Sign-in and sign-out routes as a landing page would loop.
  if (path.startsWith('/login') || path.startsWith('/auth/') || path.startsWith('/logout'))
    return DEFAULT_LANDING;
  return path;
}

/** A path a browser resolves against our own origin: one leading slash, then no slash or backslash. */
function isSameOriginPath(path: string): boolean {
  return path.startsWith('/') && path[1] !== '/' && path[1] !== '\\';
}
