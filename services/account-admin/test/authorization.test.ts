import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, startTestIssuer, uniqueName, type TestIssuer } from '@plant/test-kit';
import { CookieJar, follow, send, signIn, signInUntilCallback, userAccessToken, type PortalSession } from './helpers/browser-client.js';
import { ACCOUNT_ADMIN_AUDIENCE, createTenant, startPortal, startSignedInPortal, type Platform, type PortalHandle, type TestTenant } from './helpers/platform.js';

let ts: Platform;
let portal: PortalHandle;
let acme: TestTenant;
let globex: TestTenant;
let admin: PortalSession;
let viewer: PortalSession;
let globexAdmin: PortalSession;
/** A service account of acme, created by its admin. */
let robot: { client_id: string; secret: string; name: string };

beforeAll(async () => {
  ({ ts, portal, acme, admin } = await startSignedInPortal());
  globex = await createTenant(ts);
  // One after the other: a replica checks few passwords at once (SIGN_IN_CONCURRENT_HASHES, 1 on
  // two cores) and answers a sign-in over that 429.
  viewer = await signIn(portal.url, acme.tenant, acme.viewer);
  globexAdmin = await signIn(portal.url, globex.tenant, globex.admin);
  const res = await fetch(`${portal.url}/api/v1/service-accounts`, {
    method: 'POST',
    headers: admin.headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({ name: uniqueName('robot') }),
  });
  robot = (await res.json()) as typeof robot;
}, 60_000);

afterAll(async () => {
  await portal?.stop();
  await ts?.close();
});

function call(session: PortalSession | undefined, method: string, path: string, { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${portal.url}/api/v1${path}`, {
    method,
    headers: { ...(session ? session.headers() : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const managementCalls = (clientId: string): Array<[string, string, unknown]> => [
  ['POST', '/service-accounts', { name: uniqueName('nope') }],
  ['PATCH', `/service-accounts/${clientId}`, { role: 'Edit' }],
  ['POST', `/service-accounts/${clientId}/reset-secret`, undefined],
  ['DELETE', `/service-accounts/${clientId}`, undefined],
];

async function auditCount(): Promise<number> {
  return ((await (await call(admin, 'GET', '/audit-events?limit=100')).json()) as unknown[]).length;
}

describe('roles', () => {
  test('When a View user manages service accounts, then every management call answers 403 and nothing changes', async () => {
    const before = await auditCount();
    for (const [method, path, body] of managementCalls(robot.client_id)) {
      const res = await call(viewer, method, path, { body });
      expect({ method, path, status: res.status, body: await res.json() }).toEqual({
        method,
        path,
        status: 403,
        body: { error: 403, message: 'Managing service accounts needs the Account Admin role' },
      });
    }
    expect(await auditCount()).toBe(before);
    const still = await call(admin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(await still.json()).toMatchObject({ client_id: robot.client_id, role: 'View' });
  });

  test('When a View user reads, then the list, one account, /me and the audit trail are allowed', async () => {
    const list = await call(viewer, 'GET', '/service-accounts');
    const one = await call(viewer, 'GET', `/service-accounts/${robot.client_id}`);
    const me = await call(viewer, 'GET', '/me');
    const audit = await call(viewer, 'GET', '/audit-events');

    expect([list.status, one.status, me.status, audit.status]).toEqual([200, 200, 200, 200]);
    expect(await me.json()).toEqual({ tenant: acme.tenant, sub: expect.any(String), email: acme.viewer.email, principal_type: 'user', role: 'View', can_manage_service_accounts: false });
  });

  test('When an Edit user (bearer token) manages service accounts, then it answers 403 insufficient_scope', async () => {
    const token = await userAccessToken(ts.authUrl, portal.url, acme.tenant, acme.editor);

    const res = await call(undefined, 'POST', '/service-accounts', { body: { name: uniqueName('edit') }, headers: { authorization: `Bearer ${token}` } });

    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="account-admin", error="insufficient_scope", error_description="Managing service accounts needs the Account Admin role"');
    expect(await res.json()).toEqual({ error: 403, message: 'Managing service accounts needs the Account Admin role' });
  });
});

describe('service-account tokens', () => {
  let issuer: TestIssuer;
  let issuerPortal: PortalHandle;

  beforeAll(async () => {
    // The token service never gives a service account a token for this API; a token signed
    // by a realm key with this audience is minted here to prove the API refuses it anyway.
    issuer = await startTestIssuer({ authUrl: ts.authUrl, audience: ACCOUNT_ADMIN_AUDIENCE });
    issuer.addRealm(acme.tenant);
    issuerPortal = await startPortal(ts, { port: await freePort(), jwksBaseUrl: issuer.url, revocation: false });
  });

  afterAll(async () => {
    await issuerPortal?.stop();
    await issuer?.close();
  });

  test.each(['View', 'Edit', 'Account Admin'])('When a service-account token with role %s manages service accounts, then every management call answers 403', async (role) => {
    const token = issuer.mint({ tenant: acme.tenant, claims: { sub: robot.client_id, client_id: robot.client_id, principal_type: 'service_account', role } });
    for (const [method, path, body] of managementCalls(robot.client_id)) {
      const res = await fetch(`${issuerPortal.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const message = 'A service account cannot manage service accounts; sign in as a user with the Account Admin role';
      expect({ method, status: res.status, body: await res.json(), challenge: res.headers.get('www-authenticate') }).toEqual({
        method,
        status: 403,
        body: { error: 403, message },
        challenge: `Bearer realm="account-admin", error="insufficient_scope", error_description="${message}"`,
      });
    }
    const still = await call(admin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(still.status).toBe(200);
  });

  test('When a service-account token reads, then the read routes answer 200', async () => {
    const token = issuer.mint({ tenant: acme.tenant, claims: { sub: robot.client_id, client_id: robot.client_id, principal_type: 'service_account', role: 'View' } });
    const headers = { authorization: `Bearer ${token}` };

    const list = await fetch(`${issuerPortal.url}/api/v1/service-accounts`, { headers });
    const me = await fetch(`${issuerPortal.url}/api/v1/me`, { headers });

    expect(list.status).toBe(200);
    expect(((await list.json()) as Array<{ client_id: string }>).map((a) => a.client_id)).toContain(robot.client_id);
    expect(await me.json()).toEqual({ tenant: acme.tenant, sub: robot.client_id, email: null, principal_type: 'service_account', role: 'View', can_manage_service_accounts: false });
  });
});

describe('tenant isolation', () => {
  test("When an admin of another tenant reads, changes, resets or deletes acme's account, then each answers 404 and acme's account is untouched", async () => {
    const read = await call(globexAdmin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(read.status).toBe(404);
    expect(await read.json()).toEqual({ error: 404, message: 'Service account not found' });
    for (const [method, path, body] of managementCalls(robot.client_id).slice(1)) {
      const res = await call(globexAdmin, method, path, { body });
      expect({ method, status: res.status, body: await res.json() }).toEqual({ method, status: 404, body: { error: 404, message: 'Service account not found' } });
    }
    const list = (await (await call(globexAdmin, 'GET', '/service-accounts')).json()) as Array<{ client_id: string }>;
    expect(list.map((a) => a.client_id)).not.toContain(robot.client_id);
    const events = (await (await call(globexAdmin, 'GET', '/audit-events')).json()) as unknown[];
    expect(events).toEqual([]);
    const still = await call(admin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(await still.json()).toMatchObject({ client_id: robot.client_id, role: 'View' });
  });
});

describe('CSRF', () => {
  test('When a session request changes state without X-CSRF-Token, then it answers 403 and nothing is created', async () => {
    const name = uniqueName('csrf');
    const res = await fetch(`${portal.url}/api/v1/service-accounts`, {
      method: 'POST',
      headers: { cookie: admin.cookie(), 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });

    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 403, message: 'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header' });
    const list = (await (await call(admin, 'GET', '/service-accounts')).json()) as Array<{ name: string }>;
    expect(list.map((a) => a.name)).not.toContain(name);
  });

  test('When the header does not match the cookie, or both carry a value not minted for this session, then it answers 403', async () => {
    const mismatch = await call(admin, 'DELETE', `/service-accounts/${robot.client_id}`, { headers: { 'x-csrf-token': 'forged' } });
    expect(mismatch.status).toBe(403);
    const jar = new CookieJar();
    jar.set('aa_session', admin.jar.get('aa_session')!);
    jar.set('csrf_token', 'attacker-chosen');
    const planted = await fetch(`${portal.url}/api/v1/service-accounts/${robot.client_id}`, {
      method: 'DELETE',
      headers: { cookie: jar.header(`${portal.url}/`), 'x-csrf-token': 'attacker-chosen' },
    });
    expect(planted.status).toBe(403);
    // Another session's token does not fit this session either.
    const crossed = await call(admin, 'DELETE', `/service-accounts/${robot.client_id}`, { headers: { 'x-csrf-token': viewer.csrf } });
    expect(crossed.status).toBe(403);
    expect((await call(admin, 'GET', `/service-accounts/${robot.client_id}`)).status).toBe(200);
  });

  test('When a session reads, then no CSRF token is needed', async () => {
    const res = await fetch(`${portal.url}/api/v1/service-accounts`, { headers: { cookie: admin.cookie() } });
    expect(res.status).toBe(200);
  });
});

describe('sessions and sign-in', () => {
  test('When a user signs in, then the session cookie is HttpOnly and SameSite=Lax, and the CSRF cookie is readable by the page', async () => {
    const jar = new CookieJar();
    const { res: form, url } = await follow(jar, `${portal.url}/login?tenant=${acme.tenant}`);
    expect(form.status).toBe(200);
    expect(url.startsWith(`${ts.authUrl}/realms/${acme.tenant}/interaction/`)).toBe(true);
    const session = await signIn(portal.url, acme.tenant, acme.admin);
    const landing = await send(session.jar, `${portal.url}/settings/service-accounts`);
    expect(landing.status).toBe(200);

    // Re-run the callback leg to look at the Set-Cookie lines themselves.
    const jar2 = new CookieJar();
    const start = await send(jar2, `${portal.url}/login?tenant=${acme.tenant}`);
    const signinCookie = start.headers.getSetCookie().find((c) => c.startsWith('aa_signin='));
    expect(signinCookie).toMatch(/; HttpOnly/);
    expect(signinCookie).toMatch(/; SameSite=Lax/);
    expect(signinCookie).not.toMatch(/; Secure/);
  });

  test('When the callback completes, then aa_session is HttpOnly and csrf_token is not', async () => {
    const { jar, callback } = await signInUntilCallback(portal.url, `tenant=${acme.tenant}`, acme.viewer);

    const res = await send(jar, callback);

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings/service-accounts');
    const cookies = res.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith('aa_session='))!;
    const csrf = cookies.find((c) => c.startsWith('csrf_token='))!;
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(csrf).not.toMatch(/HttpOnly/);
    expect(csrf).toMatch(/; SameSite=Lax/);
  });

  test('When the portal is served over https, then its cookies are Secure and it sends HSTS', async () => {
    const httpsPortal = await startPortal(ts, { port: await freePort(), revocation: false, env: { PORTAL_URL: 'https://admin.example.test' } });
    try {
      const res = await fetch(`${httpsPortal.url}/login?tenant=${acme.tenant}`, { redirect: 'manual' });

      expect(res.status).toBe(303);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('aa_signin='))).toMatch(/; Secure/);
      expect(new URL(res.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://admin.example.test/auth/callback');
      expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    } finally {
      await httpsPortal.stop();
    }
  });

  test('When a user signs out, then the session no longer works', async () => {
    const session = await signIn(portal.url, acme.tenant, acme.viewer);
    expect((await call(session, 'GET', '/me')).status).toBe(200);

    const withoutCsrf = await fetch(`${portal.url}/logout`, { method: 'POST', headers: { cookie: session.cookie() } });
    const out = await fetch(`${portal.url}/logout`, { method: 'POST', headers: session.headers() });

    expect(withoutCsrf.status).toBe(403);
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ redirect: expect.stringContaining(`${ts.authUrl}/realms/${acme.tenant}/protocol/openid-connect/logout`) });
    expect((await call(session, 'GET', '/me')).status).toBe(401);
  });

  test('When /login names an unknown or malformed tenant, then a friendly page says so', async () => {
    const unknown = await fetch(`${portal.url}/login?tenant=${uniqueName('nobody')}`, { redirect: 'manual' });
    const malformed = await fetch(`${portal.url}/login?tenant=${encodeURIComponent('<script>')}`, { redirect: 'manual' });

    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('There is no Plant Store account named');
    expect(malformed.status).toBe(400);
    const text = await malformed.text();
    expect(text).toContain('Account names are 1 to 63 lower-case letters');
    expect(text).not.toContain('<script>');
  });

  test.each([
    ['https://evil.example/steal', '/settings/service-accounts'],
    ['//evil.example/steal', '/settings/service-accounts'],
    ['/\\evil.example', '/settings/service-accounts'],
    ['javascript:alert(1)', '/settings/service-accounts'],
    ['/activity?cursor=abc', '/activity?cursor=abc'],
  ])('When sign-in is asked to return to %s, then it lands on %s', async (returnTo, expected) => {
    const { jar, callback } = await signInUntilCallback(portal.url, `tenant=${acme.tenant}&return_to=${encodeURIComponent(returnTo)}`, acme.viewer);

    const res = await send(jar, callback);

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(expected);
  });

  test('When the callback arrives in a browser that did not start the sign-in, then no session is opened', async () => {
    const { callback } = await signInUntilCallback(portal.url, `tenant=${acme.tenant}`, acme.admin);

    const victim = new CookieJar();
    const res = await send(victim, callback);

    expect(res.status).toBe(400);
    expect(await res.text()).toContain('This sign-in has expired or was started in another browser');
    expect(victim.get('aa_session')).toBeUndefined();
  });

  test('When a signed-out visitor opens a portal page, then they are sent to the tenant picker and back afterwards', async () => {
    const res = await fetch(`${portal.url}/activity`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/?return_to=%2Factivity');
  });
});
