/**
 * A user's sign-in through the real token service, as a browser or a CLI tool runs it: the
 * portal client's authorization code + PKCE flow (an access token), a wrong password at the
 * sign-in form, and the portal's own sign-in (a session cookie and its CSRF token).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import { ACCOUNT_ADMIN_AUDIENCE, USER_PASSWORD } from '@plant/test-kit';
import { httpRequest, type Answer, type RequestOptions } from './http-client.js';

/** One open sign-in form (its interaction, cookies and CSRF field), to be posted any number of times. */
export interface SignInForm {
  /** The interaction's uid and the form's path at the token service. */
  uid: string;
  path: string;
  /** The Cookie header and the CSRF field the form was served with. */
  cookie: string;
  csrf: string;
  /** The form's post; `agent` chooses the connections (and so the source address, `localAddress`). */
  post(email: string, password: string, agent?: Agent): Promise<Answer>;
}

export interface SignInClient {
  /** An access token of a user, through the real sign-in (authorization code + PKCE). */
  userToken(tenant: string, email: string, resource?: string, scope?: string): Promise<string>;
  /** A sign-in at the token service's form with a wrong password: the status of the form post (401: the form again). */
  failSignIn(tenant: string, email: string, password: string): Promise<number>;
  /** The token service's sign-in form as a user reaches it: through the portal's `/login?tenant=` when account-admin runs, else the authorization request. */
  openSignInForm(tenant: string): Promise<SignInForm>;
  /** A signed-in portal session: its Cookie header, CSRF token, where sign-in landed and the browser that signed in. Needs account-admin. */
  portalSession(
    tenant: string,
    email: string,
    returnTo?: string,
  ): Promise<{ cookie: string; csrf: string; landing: string; browser: CookieJar }>;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * A minimal cookie jar: name=value pairs from Set-Cookie, sent back as one Cookie header. It
 * remembers every bearer value the browser was handed (each cookie value, each `code` a
 * redirect carried), so a test can search storage for them.
 */
export class CookieJar {
  readonly #cookies = new Map<string, string>();
  readonly seen = new Set<string>();
  /** `agent`: the connections its requests go on (default: the client's keep-alive agent). */
  constructor(private readonly agent?: Agent) {}
  take(setCookie: string[] | undefined): void {
    for (const line of setCookie ?? []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line))
        this.#cookies.delete(name);
      else {
        this.#cookies.set(name, value);
        this.seen.add(value);
      }
    }
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  /** A request with the jar's cookies, whose Set-Cookie lines go back into it. */
  async send(url: string, init: RequestOptions = {}) {
    const res = await httpRequest(url, {
      ...(this.agent === undefined ? {} : { agent: this.agent }),
      ...init,
      headers: { ...init.headers, cookie: this.header() },
    });
    this.take(res.setCookie);
    const code =
      typeof res.headers.location === 'string'
        ? URL.parse(res.headers.location, url)?.searchParams.get('code')
        : undefined;
    if (code) this.seen.add(code);
    return res;
  }
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

/** Opens the sign-in form `authorize` leads to. */
async function openForm(jar: CookieJar, authUrl: string, authorize: string): Promise<SignInForm> {
  const auth = await jar.send(authorize);
  const interaction = new URL(auth.headers.location as string, authUrl).href;
  const form = await jar.send(interaction);
  if (form.status !== 200)
    throw new Error(`sign-in form: ${form.status} ${form.text.slice(0, 300)}`);
  const csrf = csrfOf(form.text);
  const path = new URL(interaction).pathname;
  return {
    uid: path.split('/').pop()!,
    path,
    cookie: jar.header(),
    csrf,
    post: (email, password, agent) =>
      jar.send(`${interaction}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, email, password }).toString(),
        ...(agent === undefined ? {} : { agent }),
      }),
  };
}

/** Opens the sign-in form `authorize` leads to and posts it; resolves with the form post's answer. */
async function postSignInForm(
  jar: CookieJar,
  authUrl: string,
  authorize: string,
  email: string,
  password: string,
) {
  return (await openForm(jar, authUrl, authorize)).post(email, password);
}

/** `agent`: the connections every request goes on (an ingress's host names resolve through it). */
export function signInClient({
  authUrl,
  portalUrl,
  hasPortal,
  agent,
}: {
  authUrl: string;
  portalUrl: string;
  hasPortal: () => boolean;
  agent?: Agent;
}): SignInClient {
  const newJar = () => new CookieJar(agent);
  const realm = (tenant: string) => `${authUrl}/realms/${tenant}/protocol/openid-connect`;
  const redirectUri = `${portalUrl}/auth/callback`;
  /** An authorization request of the portal client that only needs to reach the form. */
  const authorizeUrl = (tenant: string) =>
    `${realm(tenant)}/auth?${new URLSearchParams({ client_id: 'portal', response_type: 'code', redirect_uri: redirectUri, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's' })}`;
  return {
    async userToken(
      tenant,
      email,
      resource = ACCOUNT_ADMIN_AUDIENCE,
      scope = 'openid email profile plants:read plants:write',
    ) {
      const jar = newJar();
      const { verifier, challenge } = pkce();
      const query = new URLSearchParams({
        client_id: 'portal',
        response_type: 'code',
        redirect_uri: redirectUri,
        scope,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: randomBytes(8).toString('hex'),
        nonce: randomBytes(8).toString('hex'),
        resource,
      });
      const login = await postSignInForm(
        jar,
        authUrl,
        `${realm(tenant)}/auth?${query}`,
        email,
        USER_PASSWORD,
      );
      if (login.status !== 303)
        throw new Error(`sign-in: ${login.status} ${login.text.slice(0, 300)}`);
      const resume = await jar.send(new URL(login.headers.location as string, authUrl).href);
      const callback = new URL(resume.headers.location as string);
      const code = callback.searchParams.get('code');
      if (code === null) throw new Error(`sign-in: no code in ${callback.href}`);
      const tokens = await httpRequest(`${realm(tenant)}/token`, {
        ...(agent === undefined ? {} : { agent }),
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          client_id: 'portal',
          code_verifier: verifier,
          resource,
        }).toString(),
      });
      if (tokens.status !== 200) throw new Error(`code exchange: ${tokens.status} ${tokens.text}`);
      return (tokens.body as { access_token: string }).access_token;
    },
    async failSignIn(tenant, email, password) {
      return (await postSignInForm(newJar(), authUrl, authorizeUrl(tenant), email, password))
        .status;
    },
    async openSignInForm(tenant) {
      const jar = newJar();
      if (!hasPortal()) return openForm(jar, authUrl, authorizeUrl(tenant));
      const start = await jar.send(`${portalUrl}/login?${new URLSearchParams({ tenant })}`);
      if (start.status !== 303)
        throw new Error(`portal login: ${start.status} ${start.text.slice(0, 300)}`);
      return openForm(jar, authUrl, start.headers.location as string);
    },
    async portalSession(tenant, email, returnTo) {
      if (!hasPortal()) throw new Error('account-admin is not running');
      const jar = newJar();
      const start = await jar.send(
        `${portalUrl}/login?${new URLSearchParams({ tenant, ...(returnTo === undefined ? {} : { return_to: returnTo }) })}`,
      );
      if (start.status !== 303)
        throw new Error(`portal login: ${start.status} ${start.text.slice(0, 300)}`);
      const login = await postSignInForm(
        jar,
        authUrl,
        start.headers.location as string,
        email,
        USER_PASSWORD,
      );
      if (login.status !== 303)
        throw new Error(`portal sign-in: ${login.status} ${login.text.slice(0, 300)}`);
      const resume = await jar.send(new URL(login.headers.location as string, authUrl).href);
      const callback = await jar.send(resume.headers.location as string);
      if (callback.status !== 303)
        throw new Error(`portal callback: ${callback.status} ${callback.text.slice(0, 300)}`);
      const token = jar.get('csrf_token');
      if (token === undefined || jar.get('aa_session') === undefined)
        throw new Error('portal sign-in set no session');
      return {
        cookie: jar.header(),
        csrf: decodeURIComponent(token),
        landing: callback.headers.location as string,
        browser: jar,
      };
    },
  };
}
