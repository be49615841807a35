import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import {
  ADMIN_PASSWORD,
  decodeJwt,
  startHarness,
  TEST_ENV,
  type Harness,
} from './helpers/harness.js';
import { SIGN_OUT_SCRIPT_HASH } from '../src/oidc/provider-pages.js';
import { AUTH } from './helpers/internal-client.js';
import { pkce, portalDriver, REDIRECT_URI, type PortalDriver } from './helpers/portal-driver.js';

let h: Harness;
let tenant: string;
let adminEmail: string;
let adminId: string;
let browser: PortalDriver['browser'];
let pathOf: PortalDriver['pathOf'];
let startSignIn: PortalDriver['startSignIn'];
let completeSignIn: PortalDriver['completeSignIn'];
let exchange: PortalDriver['exchange'];

beforeAll(async () => {
  h = await startHarness({ SIGN_IN_FAILURES_PER_ACCOUNT: '3' });
  ({ tenant, adminEmail, adminId } = await h.createTenant());
  ({ browser, pathOf, startSignIn, completeSignIn, exchange } = portalDriver(h, tenant));
});

afterAll(async () => {
  await h.close();
});

describe('portal sign-in (authorization code + PKCE)', () => {
  test('When the sign-in page is shown, then it is a form with email and password fields, autocomplete hints, a CSRF token and the passkey scripts of this origin only', async () => {
    const b = browser();

    const { form, csrf } = await startSignIn(b);

    expect(form.status).toBe(200);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.headers['cache-control']).toBe('no-store');
    expect(form.headers['x-frame-options']).toBe('DENY');
    // form-action covers the redirects after the post, which end at the portal.
    expect(form.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self' ${TEST_ENV.PORTAL_URL}; base-uri 'none'; frame-ancestors 'none'`,
    );
    expect(form.text).toContain(
      '<input id="email" name="email" type="email" autocomplete="username" required',
    );
    expect(form.text).toContain(
      '<input id="password" name="password" type="password" autocomplete="current-password" required',
    );
    expect(form.text).toMatch(
      /<form method="post" action="\/realms\/[a-z0-9-]+\/interaction\/[A-Za-z0-9_-]+\/login"/,
    );
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('When the Account Admin signs in, then the portal gets a code, then an ID token and userinfo with sub, email, role and tenant', async () => {
    const b = browser();
    const started = await startSignIn(b);

    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const tokens = await exchange(callback.searchParams.get('code')!, started.verifier);
    const userinfo = await request(h.publicUrl)
      .get(`/realms/${tenant}/protocol/openid-connect/userinfo`)
      .set('authorization', `Bearer ${tokens.body.access_token}`);

    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(started.state);
    expect(callback.searchParams.get('iss')).toBe(h.issuer(tenant));
    expect(tokens.status).toBe(200);
    expect(tokens.headers['cache-control']).toBe('no-store');
    expect(tokens.body).toEqual({
      access_token: expect.any(String),
      id_token: expect.any(String),
      expires_in: 300,
      scope: 'openid email profile',
      token_type: 'Bearer',
    });
    expect(decodeJwt(tokens.body.id_token).payload).toMatchObject({
      iss: h.issuer(tenant),
      aud: 'portal',
      sub: adminId,
      email: adminEmail,
      role: 'Account Admin',
      tenant,
      nonce: started.nonce,
    });
    expect(userinfo.status).toBe(200);
    expect(userinfo.body).toEqual({
      sub: adminId,
      email: adminEmail,
      role: 'Account Admin',
      tenant,
      factors_enrolled: false,
    });
  });

  test('When the userinfo access token has expired or is absent, then userinfo answers 401 invalid_token', async () => {
    const b = browser();
    const started = await startSignIn(b);
    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const tokens = await exchange(callback.searchParams.get('code')!, started.verifier);
    await h.service
      .db('oidc_payloads')
      .where({ realm: tenant, model: 'AccessToken' })
      .update({ expires_at: h.service.db.raw("now() - interval '1 second'") });

    const expired = await request(h.publicUrl)
      .get(`/realms/${tenant}/protocol/openid-connect/userinfo`)
      .set('authorization', `Bearer ${tokens.body.access_token}`);
    const absent = await request(h.publicUrl).get(
      `/realms/${tenant}/protocol/openid-connect/userinfo`,
    );

    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({
      error: 'invalid_token',
      error_description: 'invalid token provided',
    });
    expect(absent.status).toBe(401);
    expect(absent.body).toEqual({
      error: 'invalid_token',
      error_description: 'no access token provided',
    });
  });

  test('When the portal names the account-admin API as resource, then the access token is a JWT for it with the role, scope and version', async () => {
    const b = browser();
    const started = await startSignIn(b, {
      resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      scope: 'openid email profile plants:read plants:write',
    });

    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const tokens = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        client_id: 'portal',
        code_verifier: started.verifier,
        resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      });

    expect(tokens.status).toBe(200);
    const { header, payload } = decodeJwt(tokens.body.access_token);
    expect(header.typ).toBe('at+jwt');
    expect(payload).toMatchObject({
      iss: h.issuer(tenant),
      sub: adminId,
      aud: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      client_id: 'portal',
      scope: 'plants:read plants:write',
      tenant,
      principal_type: 'user',
      role: 'Account Admin',
      grants: [],
      ver: 1,
    });
  });

  test('When a View user asks for plants:write, then the portal gets access_denied instead of a consent screen', async () => {
    const viewer = await h.createUser(tenant, 'View');
    const b = browser();
    const started = await startSignIn(b, {
      resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      scope: 'openid plants:read plants:write',
    });
    const login = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: viewer.email, password: viewer.password });
    const resume = await b.get(pathOf(login.headers.location!));

    const consent = await b.get(pathOf(resume.headers.location!));
    const back = await b.get(pathOf(consent.headers.location!));

    expect(consent.status).toBe(303);
    const callback = new URL(back.headers.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
  });

  test('When the code verifier is wrong, then the code is refused with invalid_grant', async () => {
    const b = browser();
    const started = await startSignIn(b);
    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);

    const res = await exchange(callback.searchParams.get('code')!, pkce().verifier);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'grant request is invalid',
    });
  });

  test('When PKCE is missing, then the portal is sent back with an error', async () => {
    const b = browser();
    const query = new URLSearchParams({
      client_id: 'portal',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state: 'x',
    });

    const res = await b.get(`/realms/${tenant}/protocol/openid-connect/auth?${query}`);

    expect(res.status).toBe(303);
    const location = new URL(res.headers.location!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toBe(
      'Authorization Server policy requires PKCE to be used for this request',
    );
  });

  test("When the portal signs the user out with the sign-in's ID token as the hint, then the page posts its own form (its one script allowed by its hash), the session ends and the next sign-in asks for the password again", async () => {
    const b = browser();
    const started = await startSignIn(b);
    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const tokens = await exchange(callback.searchParams.get('code')!, started.verifier);

    const logout = await b.get(
      `/realms/${tenant}/protocol/openid-connect/logout?${new URLSearchParams({ id_token_hint: tokens.body.id_token, post_logout_redirect_uri: `${TEST_ENV.PORTAL_URL}/`, state: 'bye' })}`,
    );
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(logout.text)?.[1];
    const action = /action="([^"]+)"/.exec(logout.text)?.[1];
    const confirm = await b.post(pathOf(action!)).type('form').send({ xsrf: xsrf!, logout: 'yes' });
    const again = await startSignIn(b);

    expect(logout.status).toBe(200);
    expect(logout.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src '${SIGN_OUT_SCRIPT_HASH}'; style-src 'self'; form-action 'self' ${TEST_ENV.PORTAL_URL}; base-uri 'none'; frame-ancestors 'none'`,
    );
    expect(logout.text).toContain('<h1>Signing you out</h1>');
    expect(logout.text).toContain(
      '<button autofocus id="sign-out" type="submit" form="op.logoutForm" value="yes" name="logout" class="button button-primary">Sign out</button>',
    );
    expect(
      [...logout.text.matchAll(/<script[^>]*>([^<]*)<\/script>/g)].map(
        (m) => `sha256-${createHash('sha256').update(m[1]!).digest('base64')}`,
      ),
    ).toEqual([SIGN_OUT_SCRIPT_HASH]);
    expect(confirm.status).toBe(303);
    expect(confirm.headers.location).toBe(`${TEST_ENV.PORTAL_URL}/?state=bye`);
    expect(again.form.status).toBe(200);
    expect(again.form.text).toContain('name="password"');
  });

  test('When a sign-out link carries no hint, or the ID token of another account of the realm, then the page asks to confirm, runs no script and the session stays', async () => {
    const victim = browser();
    await completeSignIn(victim, await startSignIn(victim), adminEmail, ADMIN_PASSWORD);
    const viewer = await h.createUser(tenant, 'View');
    const attacker = browser();
    const attackerStart = await startSignIn(attacker);
    const { callback } = await completeSignIn(
      attacker,
      attackerStart,
      viewer.email,
      viewer.password,
    );
    const attackerIdToken = (
      await exchange(callback.searchParams.get('code')!, attackerStart.verifier)
    ).body.id_token as string;

    const links = [
      new URLSearchParams({
        client_id: 'portal',
        post_logout_redirect_uri: `${TEST_ENV.PORTAL_URL}/`,
      }),
      new URLSearchParams({
        id_token_hint: attackerIdToken,
        post_logout_redirect_uri: `${TEST_ENV.PORTAL_URL}/`,
      }),
    ];
    for (const query of links) {
      const page = await victim.get(`/realms/${tenant}/protocol/openid-connect/logout?${query}`);

      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toBe(
        `default-src 'none'; style-src 'self'; form-action 'self' ${TEST_ENV.PORTAL_URL}; base-uri 'none'; frame-ancestors 'none'`,
      );
      expect(page.text).toContain('<h1>Sign out?</h1>');
      expect(page.text).not.toContain('<script');
    }
    const again = await victim.get(
      `/realms/${tenant}/protocol/openid-connect/auth?${new URLSearchParams({ client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's' })}`,
    );
    expect(again.status).toBe(303);
    expect(
      new URL(again.headers.location!).origin + new URL(again.headers.location!).pathname,
    ).toBe(REDIRECT_URI);
  });

  test("When the realm changed its signing key since the sign-in, so the portal's hint no longer verifies, then the page leads to the sign-out question (not a dead end) and answering it ends the session", async () => {
    const other = await h.createTenant();
    const d = portalDriver(h, other.tenant);
    const b = d.browser();
    const started = await d.startSignIn(b);
    const { callback } = await d.completeSignIn(b, started, other.adminEmail, ADMIN_PASSWORD);
    const idToken = (await d.exchange(callback.searchParams.get('code')!, started.verifier)).body
      .id_token as string;
    await request(h.internalUrl)
      .put(`/internal/v1/realms/${other.tenant}/signing-algorithm`)
      .set('authorization', AUTH)
      .send({ alg: 'ES256' })
      .expect(200);

    const refused = await b
      .get(
        `/realms/${other.tenant}/protocol/openid-connect/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: `${TEST_ENV.PORTAL_URL}/` })}`,
      )
      .set('accept', 'text/html');
    const link = /<a class="button" href="([^"]+)">Sign out<\/a>/.exec(refused.text)?.[1];
    const question = await b.get(d.pathOf(link ?? '/'));
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.text)?.[1];
    const action = /action="([^"]+)"/.exec(question.text)?.[1];
    const confirm = await b
      .post(d.pathOf(action ?? '/'))
      .type('form')
      .send({ xsrf: xsrf ?? '', logout: 'yes' });
    const again = await d.startSignIn(b);

    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<h1>Finish signing out</h1>');
    expect(link).toBe(`${h.issuer(other.tenant)}/protocol/openid-connect/logout`);
    expect(question.text).toContain('<h1>Sign out?</h1>');
    expect(confirm.status).toBe(303);
    expect(again.form.text).toContain('name="password"');
  });

  test('When a signed-in user starts another sign-in, then no form is shown (the session is kept)', async () => {
    const b = browser();
    const started = await startSignIn(b);
    await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const { challenge } = pkce();

    const res = await b.get(
      `/realms/${tenant}/protocol/openid-connect/auth?${new URLSearchParams({ client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', state: 's' })}`,
    );

    expect(res.status).toBe(303);
    expect(new URL(res.headers.location!).origin + new URL(res.headers.location!).pathname).toBe(
      REDIRECT_URI,
    );
  });
});
