/**
 * Portal sessions and sign-in: cookie flags (Secure and HSTS over https), sign-out, the
 * unknown-tenant page, return_to kept on the portal, and a callback from another browser.
 */
import { describe, expect, test } from '@jest/globals';
import { freePort, uniqueName } from '@plant/test-kit';
import { CookieJar, follow, send, signIn, signInUntilCallback } from './helpers/browser-client.js';
import { startPortal } from './helpers/platform.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

describe('sessions and sign-in', () => {
  test('When a user signs in, then the session cookie is HttpOnly and SameSite=Lax, and the CSRF cookie is readable by the page', async () => {
    const jar = new CookieJar();
    const { res: form, url } = await follow(jar, `${p.portal.url}/login?tenant=${p.acme.tenant}`);
    expect(form.status).toBe(200);
    expect(url.startsWith(`${p.ts.authUrl}/realms/${p.acme.tenant}/interaction/`)).toBe(true);
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.admin);
    const landing = await send(session.jar, `${p.portal.url}/settings/service-accounts`);
    expect(landing.status).toBe(200);

    // Re-run the callback leg to look at the Set-Cookie lines themselves.
    const jar2 = new CookieJar();
    const start = await send(jar2, `${p.portal.url}/login?tenant=${p.acme.tenant}`);
    const signinCookie = start.headers.getSetCookie().find((c) => c.startsWith('aa_signin='));
    expect(signinCookie).toMatch(/; HttpOnly/);
    expect(signinCookie).toMatch(/; SameSite=Lax/);
    expect(signinCookie).not.toMatch(/; Secure/);
  });

  test('When the callback completes, then aa_session is HttpOnly and csrf_token is not', async () => {
    const { jar, callback } = await signInUntilCallback(
      p.portal.url,
      `tenant=${p.acme.tenant}`,
      p.acme.viewer,
    );

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
    const httpsPortal = await startPortal(p.ts, {
      port: await freePort(),
      revocation: false,
      env: { PORTAL_URL: 'https://admin.example.test' },
    });
    try {
      const res = await fetch(`${httpsPortal.url}/login?tenant=${p.acme.tenant}`, {
        redirect: 'manual',
      });

      expect(res.status).toBe(303);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('aa_signin='))).toMatch(
        /; Secure/,
      );
      expect(new URL(res.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
        'https://admin.example.test/auth/callback',
      );
      expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    } finally {
      await httpsPortal.stop();
    }
  });

  test('When a user signs out, then the session no longer works', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
    expect((await p.call(session, 'GET', '/me')).status).toBe(200);

    const withoutCsrf = await fetch(`${p.portal.url}/logout`, {
      method: 'POST',
      headers: { cookie: session.cookie() },
    });
    const out = await fetch(`${p.portal.url}/logout`, {
      method: 'POST',
      headers: session.headers(),
    });

    expect(withoutCsrf.status).toBe(403);
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({
      redirect: expect.stringContaining(
        `${p.ts.authUrl}/realms/${p.acme.tenant}/protocol/openid-connect/logout`,
      ),
    });
    expect((await p.call(session, 'GET', '/me')).status).toBe(401);
  });

  test('When a user signs out and the browser follows the answer, then the realm ends its own session without asking and the next /login asks for the password', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);

    const out = await send(session.jar, `${p.portal.url}/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': session.csrf },
    });
    const { redirect } = (await out.json()) as { redirect: string };
    const realmPage = await send(session.jar, redirect);
    const text = await realmPage.text();
    const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(text)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(text)?.[1];
    const ended = await send(session.jar, new URL(action ?? '/', redirect).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf ?? '', logout: 'yes' }).toString(),
    });
    const { res: again, url: againUrl } = await follow(
      session.jar,
      `${p.portal.url}/login?tenant=${p.acme.tenant}`,
    );

    // The hint is the sign-in's ID token; the realm's page then submits its own form (no "Sign out?").
    expect(new URL(redirect).searchParams.get('id_token_hint')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect({ status: realmPage.status, heading: /<h1>([^<]+)<\/h1>/.exec(text)?.[1] }).toEqual({
      status: 200,
      heading: 'Signing you out',
    });
    expect({ status: ended.status, location: ended.headers.get('location') }).toEqual({
      status: 303,
      location: `${p.portal.url}/`,
    });
    expect(againUrl.startsWith(`${p.ts.authUrl}/realms/${p.acme.tenant}/interaction/`)).toBe(true);
    expect(await again.text()).toContain('name="password"');
  });

  test('When /login names an unknown or malformed tenant, then a friendly page says so', async () => {
    const unknown = await fetch(`${p.portal.url}/login?tenant=${uniqueName('nobody')}`, {
      redirect: 'manual',
    });
    const malformed = await fetch(
      `${p.portal.url}/login?tenant=${encodeURIComponent('<script>')}`,
      { redirect: 'manual' },
    );

    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('There is no Plant Store tenant named');
    expect(malformed.status).toBe(400);
    const text = await malformed.text();
    expect(text).toContain('Tenant names are 1 to 63 lower-case letters');
    expect(text).not.toContain('<script>');
  });

  test.each([
    ['https://evil.example/steal', '/settings/service-accounts'],
    ['//evil.example/steal', '/settings/service-accounts'],
    ['/\\evil.example', '/settings/service-accounts'],
    ['javascript:alert(1)', '/settings/service-accounts'],
    ['/activity?cursor=abc', '/activity?cursor=abc'],
  ])('When sign-in is asked to return to %s, then it lands on %s', async (returnTo, expected) => {
    const { jar, callback } = await signInUntilCallback(
      p.portal.url,
      `tenant=${p.acme.tenant}&return_to=${encodeURIComponent(returnTo)}`,
      p.acme.viewer,
    );

    const res = await send(jar, callback);

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(expected);
  });

  test('When the callback arrives in a browser that did not start the sign-in, then no session is opened', async () => {
    const { callback } = await signInUntilCallback(
      p.portal.url,
      `tenant=${p.acme.tenant}`,
      p.acme.admin,
    );

    const victim = new CookieJar();
    const res = await send(victim, callback);

    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      'This sign-in has expired or was started in another browser',
    );
    expect(victim.get('aa_session')).toBeUndefined();
  });

  test('When a signed-out visitor opens a portal page, then they are sent to the tenant picker and back afterwards', async () => {
    const res = await fetch(`${p.portal.url}/activity`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/?return_to=%2Factivity');
  });
});
