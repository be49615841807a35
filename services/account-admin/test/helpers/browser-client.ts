/**
 * HTTP clients of the portal and the token service that behave as a browser does (cookies by
 * name and path, redirects followed by hand, the sign-in form filled in), and as a CLI tool
 * does (authorization code + PKCE, client credentials).
 */
import { createHash, randomBytes } from 'node:crypto';
import { ACCOUNT_ADMIN_AUDIENCE } from '@plant/test-kit';

export interface TestUser {
  email: string;
  password: string;
}

/** A tiny cookie jar: cookies by name and path (all test services share 127.0.0.1, as a browser would). */
export class CookieJar {
  private cookies = new Map<string, { name: string; value: string; path: string }>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k = '', v = ''] = attr.split('=');
        if (k.toLowerCase() === 'path') path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
        if (k.toLowerCase() === 'expires' && Date.parse(v) < Date.now()) expired = true;
      }
      const key = `${name};${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path });
    }
  }

  header(url: string): string {
    const path = new URL(url).pathname;
    return [...this.cookies.values()]
      .filter(
        (c) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`),
      )
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  get(name: string): string | undefined {
    for (const c of this.cookies.values()) if (c.name === name) return decodeURIComponent(c.value);
    return undefined;
  }

  set(name: string, value: string, path = '/'): void {
    this.cookies.set(`${name};${path}`, { name, value, path });
  }
}

/** fetch with the jar, without following redirects. */
export async function send(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set('cookie', cookie);
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.store(res);
  return res;
}

/** Follows redirects (GET) until `stop(url)` says so or a non-redirect answer; returns the last response and URL. */
export async function follow(
  jar: CookieJar,
  start: string,
  stop: (url: string) => boolean = () => false,
): Promise<{ res: Response; url: string }> {
  let url = start;
  for (let hops = 0; hops < 15; hops += 1) {
    if (stop(url)) return { res: new Response(null, { status: 204 }), url };
    const res = await send(jar, url);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || location === null) return { res, url };
    await res.arrayBuffer();
    url = new URL(location, url).href;
  }
  throw new Error(`too many redirects from ${start}`);
}

/** Fills in the token service's sign-in form; returns where it redirects to. */
export async function submitSignInForm(
  jar: CookieJar,
  formPageUrl: string,
  page: string,
  user: TestUser,
): Promise<string> {
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!action || !csrf)
    throw new Error(`no sign-in form at ${formPageUrl}:\n${page.slice(0, 500)}`);
  const res = await send(jar, new URL(action.replace(/&amp;/g, '&'), formPageUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      csrf: csrf.replace(/&amp;/g, '&'),
      email: user.email,
      password: user.password,
    }).toString(),
  });
  const location = res.headers.get('location');
  if (res.status !== 303 && res.status !== 302)
    throw new Error(`sign-in form answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return new URL(location!, formPageUrl).href;
}

export interface PortalSession {
  jar: CookieJar;
  csrf: string;
  /** Headers for an API call from this session (cookie + CSRF token). */
  headers(extra?: Record<string, string>): Record<string, string>;
  cookie(): string;
}

/** Signs in to the portal as a browser does: /login → realm sign-in form → /auth/callback. */
export async function signIn(
  portalUrl: string,
  tenant: string,
  user: TestUser,
): Promise<PortalSession> {
  const jar = new CookieJar();
  const { res: formRes, url: formUrl } = await follow(jar, `${portalUrl}/login?tenant=${tenant}`);
  if (formRes.status !== 200) throw new Error(`sign-in form: ${formRes.status} at ${formUrl}`);
  const next = await submitSignInForm(jar, formUrl, await formRes.text(), user);
  const { res: landing, url: landingUrl } = await follow(jar, next);
  if (landing.status !== 200 || !landingUrl.startsWith(portalUrl))
    throw new Error(
      `sign-in ended at ${landingUrl} with ${landing.status}: ${(await landing.text()).slice(0, 300)}`,
    );
  await landing.arrayBuffer().catch(() => undefined);
  return sessionOf(jar, portalUrl);
}

/** The portal session of a browser that reached the portal (its cookies and CSRF token). */
export function sessionOf(jar: CookieJar, portalUrl: string): PortalSession {
  const csrf = jar.get('csrf_token');
  if (!csrf) throw new Error('no csrf_token cookie: not signed in');
  return {
    jar,
    csrf,
    cookie: () => jar.header(`${portalUrl}/`),
    headers: (extra = {}) => ({
      cookie: jar.header(`${portalUrl}/`),
      'x-csrf-token': csrf,
      ...extra,
    }),
  };
}

/**
 * What a person does on a realm page that follows the password (a factor, an enrolment, the
 * recovery codes): given the page, the realm's answer to its form (`postRealmForm`).
 */
export type RealmStep = (jar: CookieJar, pageUrl: string, page: string) => Promise<Response>;

/** Posts the form of a realm page whose action ends with `/<action>`, its CSRF field included. */
export async function postRealmForm(
  jar: CookieJar,
  pageUrl: string,
  page: string,
  action: string,
  fields: Record<string, string> = {},
): Promise<Response> {
  const target = [...page.matchAll(/<form method="post" action="([^"]+)"/g)]
    .map((m) => m[1]!.replace(/&amp;/g, '&'))
    .find((a) => a.endsWith(`/${action}`));
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (target === undefined || csrf === undefined)
    throw new Error(`no ${action} form at ${pageUrl}:\n${page.slice(0, 500)}`);
  return send(jar, new URL(target, pageUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrf.replace(/&amp;/g, '&'), ...fields }).toString(),
  });
}

export interface UserTokenOptions {
  /** More parameters of the authorization request (`plant_action`, `acr_values`…). */
  extra?: Record<string, string>;
  /** What to do on each realm page between the password and the redirect to the portal. */
  step?: RealmStep;
}

/**
 * A user's access token for the account-admin API (aud ACCOUNT_ADMIN_AUDIENCE): the
 * portal client's authorization code + PKCE flow with `resource`, as a CLI tool would run it.
 */
export async function userAccessToken(
  authUrl: string,
  portalUrl: string,
  tenant: string,
  user: TestUser,
  { extra = {}, step }: UserTokenOptions = {},
): Promise<string> {
  const jar = new CookieJar();
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const redirectUri = `${portalUrl}/auth/callback`;
  const realm = `${authUrl}/realms/${tenant}`;
  const authorize = new URL(`${realm}/protocol/openid-connect/auth`);
  authorize.search = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    resource: ACCOUNT_ADMIN_AUDIENCE,
    ...extra,
  }).toString();
  const { res: formRes, url: formUrl } = await follow(jar, authorize.href);
  const next = await submitSignInForm(jar, formUrl, await formRes.text(), user);
  const atCallback = (url: string) => url.startsWith(redirectUri);
  let { res: pageRes, url: callback } = await follow(jar, next, atCallback);
  while (!atCallback(callback)) {
    if (step === undefined || pageRes.status !== 200)
      throw new Error(`sign-in stopped at ${callback} with ${pageRes.status}`);
    // A step answers with the next page itself (200) or sends the browser on (303).
    pageRes = await step(jar, callback, await pageRes.text());
    const location = pageRes.headers.get('location');
    if (location !== null)
      ({ res: pageRes, url: callback } = await follow(
        jar,
        new URL(location, callback).href,
        atCallback,
      ));
  }
  const code = new URL(callback).searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback}`);
  const res = await fetch(`${realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: 'portal',
      code_verifier: verifier,
      resource: ACCOUNT_ADMIN_AUDIENCE,
    }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`token exchange: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A service account's Plant Store token with the client credentials grant. */
export async function clientCredentialsToken(
  authUrl: string,
  tenant: string,
  clientId: string,
  secret: string,
): Promise<Response> {
  return fetch(`${authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  });
}

/**
 * The portal's sign-in up to its callback, not following it: the jar of the browser that
 * started it and the callback URL the token service sent that browser to.
 */
export async function signInUntilCallback(
  portalUrl: string,
  loginQuery: string,
  user: TestUser,
): Promise<{ jar: CookieJar; callback: string }> {
  const jar = new CookieJar();
  const { res: formRes, url: formUrl } = await follow(jar, `${portalUrl}/login?${loginQuery}`);
  const next = await submitSignInForm(jar, formUrl, await formRes.text(), user);
  const { url: callback } = await follow(jar, next, (url) =>
    url.startsWith(`${portalUrl}/auth/callback`),
  );
  return { jar, callback };
}
