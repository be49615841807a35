/**
 * Auth attacks on account-admin against the real processes: service accounts, View and Edit
 * users and another tenant's admin at the management API, and the portal's session (CSRF) and
 * sign-in redirects (return_to, redirect_uri).
 */
import { describe, expect, test } from '@jest/globals';
import { ACCOUNT_ADMIN_AUDIENCE, errorShapeProblem, httpRequest, signRs256 } from '../src/index.js';
import { useTwoTenants } from './helpers/two-tenants.js';

const t = useTwoTenants();

describe('Service accounts and View users at the account-admin management API', () => {
  test('When a service account asks for an account-admin token, then the token service refuses with invalid_target', async () => {
    const answer = await t.p.requestToken(t.tenantA, t.accountA.clientId, t.accountA.secret, {
      resource: ACCOUNT_ADMIN_AUDIENCE,
    });

    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: { error: 'invalid_target', error_description: expect.any(String) },
    });
  });

  test('When a service account uses its Plant Store token, or a token for account-admin signed by the real key, on every management route, then 401 and 403 respectively (reads stay readable, by design) and nothing changes', async () => {
    const adminAudienceSa = signRs256(
      t.headerA,
      { ...t.claimsA, aud: ACCOUNT_ADMIN_AUDIENCE, jti: 'sa-admin' },
      t.keyA.privateKey,
    );
    const before = await t.p.internal('GET', `/internal/v1/realms/${t.tenantA}/service-accounts`);
    const reads: Array<[string, string]> = [
      ['GET', '/api/v1/service-accounts'],
      ['GET', `/api/v1/service-accounts/${t.accountA.clientId}`],
    ];
    const changes: Array<[string, string, unknown?]> = [
      ['POST', '/api/v1/service-accounts', { name: 'by-automation' }],
      [
        'PATCH',
        `/api/v1/service-accounts/${t.accountA.clientId}`,
        { role: 'Edit', grants: [{ tag: 'x', permission: 'edit' }] },
      ],
      ['POST', `/api/v1/service-accounts/${t.accountA.clientId}/reset-secret`],
      ['DELETE', `/api/v1/service-accounts/${t.accountA.clientId}`],
    ];
    const call = (token: string, method: string, path: string, body?: unknown) =>
      httpRequest(`${t.p.portalUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    for (const [method, path, body] of [...reads, ...changes]) {
      const plantToken = await call(t.tokenA, method, path, body);
      expect({
        route: `${method} ${path}`,
        status: plantToken.status,
        shape: errorShapeProblem(plantToken) ?? 'ok',
      }).toEqual({ route: `${method} ${path}`, status: 401, shape: 'ok' });
    }
    for (const [method, path] of reads)
      expect({
        route: `${method} ${path}`,
        status: (await call(adminAudienceSa, method, path)).status,
      }).toEqual({ route: `${method} ${path}`, status: 200 });
    for (const [method, path, body] of changes) {
      const answer = await call(adminAudienceSa, method, path, body);
      expect({
        route: `${method} ${path}`,
        status: answer.status,
        body: answer.body,
        challenge: answer.headers['www-authenticate'],
      }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        body: {
          error: 403,
          message:
            'A service account cannot manage service accounts; sign in as a user with the Account Admin role',
        },
        challenge: expect.stringContaining('error="insufficient_scope"'),
      });
    }
    expect(
      (await t.p.internal('GET', `/internal/v1/realms/${t.tenantA}/service-accounts`)).body,
    ).toEqual(before.body);
    expect((await t.p.requestToken(t.tenantA, t.accountA.clientId, t.accountA.secret)).status).toBe(
      200,
    );
  });

  test('When View and Edit users call the management routes, then they get 403 and nothing changes', async () => {
    const viewer = await t.p.createUser(t.tenantA, 'View');
    const editor = await t.p.createUser(t.tenantA, 'Edit');
    const viewToken = await t.p.userToken(
      t.tenantA,
      viewer,
      ACCOUNT_ADMIN_AUDIENCE,
      'openid email profile plants:read',
    );
    const editToken = await t.p.userToken(t.tenantA, editor);

    for (const token of [viewToken, editToken]) {
      const create = await httpRequest(`${t.p.portalUrl}/api/v1/service-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'by-a-viewer' }),
      });
      const reset = await httpRequest(
        `${t.p.portalUrl}/api/v1/service-accounts/${t.accountA.clientId}/reset-secret`,
        { method: 'POST', headers: { authorization: `Bearer ${token}` } },
      );
      const remove = await httpRequest(
        `${t.p.portalUrl}/api/v1/service-accounts/${t.accountA.clientId}`,
        { method: 'DELETE', headers: { authorization: `Bearer ${token}` } },
      );
      for (const answer of [create, reset, remove])
        expect({ status: answer.status, body: answer.body }).toEqual({
          status: 403,
          body: { error: 403, message: 'Managing service accounts needs the Account Admin role' },
        });
    }
    expect((await t.p.requestToken(t.tenantA, t.accountA.clientId, t.accountA.secret)).status).toBe(
      200,
    );
    const names = (
      (await t.p.internal('GET', `/internal/v1/realms/${t.tenantA}/service-accounts`))
        .body as Array<{ name: string }>
    ).map((a) => a.name);
    expect(names).not.toContain('by-a-viewer');
  });

  test("When tenant A's Account Admin names tenant B's service account, then every route answers 404 and B's account keeps working", async () => {
    const adminA = await t.p.userToken(t.tenantA, `admin@${t.tenantA}.test`);
    const base = `${t.p.portalUrl}/api/v1/service-accounts/${t.accountB.clientId}`;

    const answers = [
      await httpRequest(base, { headers: { authorization: `Bearer ${adminA}` } }),
      await httpRequest(base, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminA}`, 'content-type': 'application/json' },
        body: JSON.stringify({ role: 'View' }),
      }),
      await httpRequest(`${base}/reset-secret`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminA}` },
      }),
      await httpRequest(base, { method: 'DELETE', headers: { authorization: `Bearer ${adminA}` } }),
    ];

    for (const answer of answers)
      expect({ status: answer.status, shape: errorShapeProblem(answer) ?? 'ok' }).toEqual({
        status: 404,
        shape: 'ok',
      });
    expect(
      (
        await t.p.createPlant(await t.p.grantToken(t.tenantB, t.accountB), {
          id: 2,
          name: 'b-still-edits',
        })
      ).status,
    ).toBe(200);
  });
});

describe('Portal session, CSRF and redirects', () => {
  test('When a signed-in session changes state without its CSRF token, with a wrong one, or with the header but not the cookie, then 403 and nothing is created; with the token it works', async () => {
    const session = await t.p.portalSession(t.tenantA, `admin@${t.tenantA}.test`);
    const withoutCsrfCookie = session.cookie
      .split('; ')
      .filter((c) => !c.startsWith('csrf_token='))
      .join('; ');
    const post = (cookie: string, csrf?: string, name = 'csrf-probe') =>
      httpRequest(`${t.p.portalUrl}/api/v1/service-accounts`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });

    const refused = [
      await post(session.cookie),
      await post(session.cookie, 'x'.repeat(session.csrf.length)),
      await post(session.cookie, `${session.csrf}x`),
      await post(withoutCsrfCookie, session.csrf),
      await httpRequest(`${t.p.portalUrl}/api/v1/service-accounts/${t.accountA.clientId}`, {
        method: 'DELETE',
        headers: { cookie: session.cookie },
      }),
      await httpRequest(
        `${t.p.portalUrl}/api/v1/service-accounts/${t.accountA.clientId}/reset-secret`,
        { method: 'POST', headers: { cookie: session.cookie } },
      ),
    ];
    const listed = await httpRequest(`${t.p.portalUrl}/api/v1/service-accounts`, {
      headers: { cookie: session.cookie },
    });
    const accepted = await post(session.cookie, session.csrf, 'csrf-ok');

    for (const answer of refused) {
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 403,
        body: {
          error: 403,
          message:
            'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header',
        },
      });
    }
    expect(listed.status).toBe(200);
    expect((listed.body as Array<{ name: string }>).map((a) => a.name)).not.toContain('csrf-probe');
    expect(accepted.status).toBe(201);
    expect((await t.p.requestToken(t.tenantA, t.accountA.clientId, t.accountA.secret)).status).toBe(
      200,
    );
  });

  test('When sign-in starts with a return_to pointing elsewhere, then it always lands on the portal itself; a same-origin path is honoured', async () => {
    const hostile = [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      '/%2F%2Fevil.example',
      ' //evil.example',
      '\t/x',
      'javascript:alert(1)',
      'http:evil.example',
      '/\u2215\u2215evil.example',
      '/login?return_to=https://evil.example',
    ];

    const landings = [];
    for (const returnTo of hostile)
      landings.push(
        (await t.p.portalSession(t.tenantA, `admin@${t.tenantA}.test`, returnTo)).landing,
      );
    const honoured = (
      await t.p.portalSession(t.tenantA, `admin@${t.tenantA}.test`, '/activity?page=2')
    ).landing;

    for (const [i, landing] of landings.entries()) {
      expect({ returnTo: hostile[i], landing }).toEqual({
        returnTo: hostile[i],
        landing: expect.stringMatching(/^\/(?![/\\])/),
      });
      expect(new URL(landing, t.p.portalUrl!).origin).toBe(t.p.portalUrl);
    }
    expect(honoured).toBe('/activity?page=2');
  });

  test('When an authorization request names a redirect_uri other than the portal callback, then the token service never redirects to it', async () => {
    const evil = [
      'https://evil.example/auth/callback',
      `${t.p.portalUrl}/auth/callback/../../evil`,
      `${t.p.portalUrl}.evil.example/auth/callback`,
      `${t.p.portalUrl}/auth/callback?next=https://evil.example`,
      `${t.p.portalUrl}@evil.example/auth/callback`,
    ];

    for (const redirectUri of evil) {
      const query = new URLSearchParams({
        client_id: 'portal',
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
        state: 's',
      });
      const answer = await httpRequest(
        `${t.p.authUrl}/realms/${t.tenantA}/protocol/openid-connect/auth?${query}`,
      );
      expect({ redirectUri, status: answer.status, location: answer.headers.location }).toEqual({
        redirectUri,
        status: 400,
        location: undefined,
      });
    }
  });
});
