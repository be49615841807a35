/**
 * Auth attacks against the real processes (token service, Plant Store, account-admin).
 * What component tests already prove in-process (resource-auth/test/bearer.test.ts with a
 * stand-in issuer, token-service/test/*) is not repeated; here every forged token meets the
 * real verification path of a running service, and tokens signed with the realm's REAL
 * key prove that claims and headers are checked, not only the signature.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  decodeJwt,
  errorShapeProblem,
  httpRequest,
  otherKey,
  realmSigningKey,
  signHs256,
  signRs256,
  startPlatform,
  TEST_SECRETS,
  unsigned,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenantA: string;
let tenantB: string;
let accountA: ServiceAccount;
let accountB: ServiceAccount;
let tokenA: string;
let tokenB: string;
let keyA: { kid: string; privateKey: KeyObject; publicPem: string };
let claimsA: Record<string, unknown>;
let headerA: Record<string, unknown>;

beforeAll(async () => {
  p = await startPlatform({ plantStores: 1, accountAdmin: true });
  [tenantA, tenantB] = [await p.createTenant('aa'), await p.createTenant('ab')];
  [accountA, accountB] = [await p.createServiceAccount(tenantA, { role: 'Edit' }), await p.createServiceAccount(tenantB, { role: 'Edit' })];
  [tokenA, tokenB] = [await p.grantToken(tenantA, accountA), await p.grantToken(tenantB, accountB)];
  expect((await p.createPlant(tokenB, { id: 1, name: 'b-plant' })).status).toBe(200);
  keyA = await realmSigningKey(p.databaseUrl, tenantA, TEST_SECRETS.KEY_ENCRYPTION_KEY);
  ({ header: headerA, payload: claimsA } = decodeJwt(tokenA));
}, 90_000);

afterAll(() => p?.close());

const now = () => Math.floor(Date.now() / 1000);

function expectInvalidToken(answer: Answer, realm: string): void {
  expect({ status: answer.status, shape: errorShapeProblem(answer) ?? 'ok', challenge: answer.headers['www-authenticate'] }).toEqual({
    status: 401,
    shape: 'ok',
    challenge: expect.stringMatching(new RegExp(`^Bearer realm="${realm}", error="invalid_token"`)),
  });
}

describe('Forged and misused tokens at the Plant Store process', () => {
  const forged = (): Array<[string, string]> => {
    const rsaPublicJwk = createPublicKey(keyA.privateKey).export({ format: 'jwk' });
    const attacker = otherKey();
    const attackerJwk = createPublicKey(attacker).export({ format: 'jwk' });
    const forgedClaims = { ...claimsA, tenant: tenantB, iss: `${p.authUrl}/realms/${tenantB}`, role: 'Account Admin', principal_type: 'user' };
    return [
      ['alg none', unsigned({ ...headerA, alg: 'none' }, claimsA)],
      ['alg None', unsigned({ ...headerA, alg: 'None' }, claimsA)],
      ['alg none with the real signature kept', `${unsigned({ ...headerA, alg: 'none' }, claimsA)}${tokenA.split('.')[2]}`],
      ['HS256 keyed with the public key PEM', signHs256({ ...headerA, alg: 'HS256' }, claimsA, keyA.publicPem)],
      ['HS256 keyed with the public JWK', signHs256({ ...headerA, alg: 'HS256' }, claimsA, JSON.stringify(rsaPublicJwk))],
      ['HS256 keyed with the modulus', signHs256({ ...headerA, alg: 'HS256' }, claimsA, Buffer.from(String(rsaPublicJwk.n), 'base64url'))],
      ['forged tenant and role, signed by another key under the real kid', signRs256(headerA, forgedClaims, attacker)],
      ['signed by another key, its public key embedded (jwk header)', signRs256({ ...headerA, jwk: attackerJwk }, claimsA, attacker)],
      ['signed by another key, fetched from a URL (jku header)', signRs256({ ...headerA, jku: 'http://127.0.0.1:1/jwks', kid: 'attacker' }, claimsA, attacker)],
      ['signed by another key, no kid', signRs256({ alg: 'RS256', typ: 'at+jwt' }, claimsA, attacker)],
      ['real key, expired an hour ago', signRs256(headerA, { ...claimsA, iat: now() - 3900, exp: now() - 3600 }, keyA.privateKey)],
      ['real key, not yet valid (iat and nbf in an hour)', signRs256(headerA, { ...claimsA, iat: now() + 3600, nbf: now() + 3600, exp: now() + 3900 }, keyA.privateKey)],
      ['real key, no exp', signRs256(headerA, { ...claimsA, exp: undefined }, keyA.privateKey)],
      ['real key, audience of account-admin', signRs256(headerA, { ...claimsA, aud: ACCOUNT_ADMIN_AUDIENCE }, keyA.privateKey)],
      ['real key, another audience', signRs256(headerA, { ...claimsA, aud: 'http://evil.example' }, keyA.privateKey)],
      ['real key, issuer of tenant B', signRs256(headerA, { ...claimsA, iss: `${p.authUrl}/realms/${tenantB}`, tenant: tenantB }, keyA.privateKey)],
      ['real key, tenant claim B under issuer A', signRs256(headerA, { ...claimsA, tenant: tenantB }, keyA.privateKey)],
      ['real key, issuer on another host', signRs256(headerA, { ...claimsA, iss: `http://evil.example/realms/${tenantA}` }, keyA.privateKey)],
      ['real key, typ JWT', signRs256({ ...headerA, typ: 'JWT' }, claimsA, keyA.privateKey)],
      ['real key, no typ', signRs256({ alg: 'RS256', kid: keyA.kid }, claimsA, keyA.privateKey)],
      ['real key, crit header', signRs256({ ...headerA, crit: ['exp'] }, claimsA, keyA.privateKey)],
      ['real key, ver 0', signRs256(headerA, { ...claimsA, ver: 0 }, keyA.privateKey)],
      ['real key, no ver', signRs256(headerA, { ...claimsA, ver: undefined }, keyA.privateKey)],
      ['real key, ver as a string', signRs256(headerA, { ...claimsA, ver: '99' }, keyA.privateKey)],
    ];
  };

  test('When a token is unsigned, HMAC-keyed with the public key, signed by another key, or signed by the real key with a wrong exp, nbf, aud, iss, tenant, typ, crit or ver, then GET and POST /plants answer 401 invalid_token and nothing is stored', async () => {
    const cases = forged();
    const store = p.plantStores[0]!;

    const answers = await Promise.all(
      cases.map(async ([name, token]) => ({ name, list: await p.listPlants(token, 'limit=10', store), create: await p.createPlant(token, { id: 4242, name: `forged ${name}` }, store) })),
    );

    for (const { name, list, create } of answers) {
      expect({ name, status: list.status }).toEqual({ name, status: 401 });
      expectInvalidToken(list, 'plants');
      expectInvalidToken(create, 'plants');
    }
    expect((await p.listPlants(tokenA)).body).toEqual([]);
    expect((await p.listPlants(tokenB)).body).toEqual([{ name: 'b-plant' }]);
  });

  test('When the same claims are signed by the real key with nothing wrong, then the token is accepted (the forgeries above fail for their flaw alone)', async () => {
    const control = signRs256(headerA, { ...claimsA, jti: 'control' }, keyA.privateKey);

    const answer = await p.listPlants(control);

    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: [] });
  });
});

describe('Service accounts and View users at the account-admin management API', () => {
  test('When a service account asks for an account-admin token, then the token service refuses with invalid_target', async () => {
    const answer = await p.requestToken(tenantA, accountA.clientId, accountA.secret, { resource: ACCOUNT_ADMIN_AUDIENCE });

    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: { error: 'invalid_target', error_description: expect.any(String) } });
  });

  test('When a service account uses its Plant Store token, or a token for account-admin signed by the real key, on every management route, then 401 and 403 respectively (reads stay readable, by design) and nothing changes', async () => {
    const adminAudienceSa = signRs256(headerA, { ...claimsA, aud: ACCOUNT_ADMIN_AUDIENCE, jti: 'sa-admin' }, keyA.privateKey);
    const before = await p.internal('GET', `/internal/v1/realms/${tenantA}/service-accounts`);
    const reads: Array<[string, string]> = [
      ['GET', '/api/v1/service-accounts'],
      ['GET', `/api/v1/service-accounts/${accountA.clientId}`],
    ];
    const changes: Array<[string, string, unknown?]> = [
      ['POST', '/api/v1/service-accounts', { name: 'by-automation' }],
      ['PATCH', `/api/v1/service-accounts/${accountA.clientId}`, { role: 'Edit', grants: [{ tag: 'x', permission: 'edit' }] }],
      ['POST', `/api/v1/service-accounts/${accountA.clientId}/reset-secret`],
      ['DELETE', `/api/v1/service-accounts/${accountA.clientId}`],
    ];
    const call = (token: string, method: string, path: string, body?: unknown) =>
      httpRequest(`${p.portalUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

    for (const [method, path, body] of [...reads, ...changes]) {
      const plantToken = await call(tokenA, method, path, body);
      expect({ route: `${method} ${path}`, status: plantToken.status, shape: errorShapeProblem(plantToken) ?? 'ok' }).toEqual({ route: `${method} ${path}`, status: 401, shape: 'ok' });
    }
    for (const [method, path] of reads) expect({ route: `${method} ${path}`, status: (await call(adminAudienceSa, method, path)).status }).toEqual({ route: `${method} ${path}`, status: 200 });
    for (const [method, path, body] of changes) {
      const answer = await call(adminAudienceSa, method, path, body);
      expect({ route: `${method} ${path}`, status: answer.status, body: answer.body, challenge: answer.headers['www-authenticate'] }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        body: { error: 403, message: 'A service account cannot manage service accounts; sign in as a user with the Account Admin role' },
        challenge: expect.stringContaining('error="insufficient_scope"'),
      });
    }
    expect((await p.internal('GET', `/internal/v1/realms/${tenantA}/service-accounts`)).body).toEqual(before.body);
    expect((await p.requestToken(tenantA, accountA.clientId, accountA.secret)).status).toBe(200);
  });

  test('When View and Edit users call the management routes, then they get 403 and nothing changes', async () => {
    const viewer = await p.createUser(tenantA, 'View');
    const editor = await p.createUser(tenantA, 'Edit');
    const viewToken = await p.userToken(tenantA, viewer, ACCOUNT_ADMIN_AUDIENCE, 'openid email profile plants:read');
    const editToken = await p.userToken(tenantA, editor);

    for (const token of [viewToken, editToken]) {
      const create = await httpRequest(`${p.portalUrl}/api/v1/service-accounts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'by-a-viewer' }) });
      const reset = await httpRequest(`${p.portalUrl}/api/v1/service-accounts/${accountA.clientId}/reset-secret`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      const remove = await httpRequest(`${p.portalUrl}/api/v1/service-accounts/${accountA.clientId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      for (const answer of [create, reset, remove]) expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: { error: 403, message: 'Managing service accounts needs the Account Admin role' } });
    }
    expect((await p.requestToken(tenantA, accountA.clientId, accountA.secret)).status).toBe(200);
    const names = ((await p.internal('GET', `/internal/v1/realms/${tenantA}/service-accounts`)).body as Array<{ name: string }>).map((a) => a.name);
    expect(names).not.toContain('by-a-viewer');
  });

  test("When tenant A's Account Admin names tenant B's service account, then every route answers 404 and B's account keeps working", async () => {
    const adminA = await p.userToken(tenantA, `admin@${tenantA}.test`);
    const base = `${p.portalUrl}/api/v1/service-accounts/${accountB.clientId}`;

    const answers = [
      await httpRequest(base, { headers: { authorization: `Bearer ${adminA}` } }),
      await httpRequest(base, { method: 'PATCH', headers: { authorization: `Bearer ${adminA}`, 'content-type': 'application/json' }, body: JSON.stringify({ role: 'View' }) }),
      await httpRequest(`${base}/reset-secret`, { method: 'POST', headers: { authorization: `Bearer ${adminA}` } }),
      await httpRequest(base, { method: 'DELETE', headers: { authorization: `Bearer ${adminA}` } }),
    ];

    for (const answer of answers) expect({ status: answer.status, shape: errorShapeProblem(answer) ?? 'ok' }).toEqual({ status: 404, shape: 'ok' });
    expect((await p.createPlant(await p.grantToken(tenantB, accountB), { id: 2, name: 'b-still-edits' })).status).toBe(200);
  });
});

describe('Portal session, CSRF and redirects', () => {
  test('When a signed-in session changes state without its CSRF token, with a wrong one, or with the header but not the cookie, then 403 and nothing is created; with the token it works', async () => {
    const session = await p.portalSession(tenantA, `admin@${tenantA}.test`);
    const withoutCsrfCookie = session.cookie.split('; ').filter((c) => !c.startsWith('csrf_token=')).join('; ');
    const post = (cookie: string, csrf?: string, name = 'csrf-probe') =>
      httpRequest(`${p.portalUrl}/api/v1/service-accounts`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });

    const refused = [
      await post(session.cookie),
      await post(session.cookie, 'x'.repeat(session.csrf.length)),
      await post(session.cookie, `${session.csrf}x`),
      await post(withoutCsrfCookie, session.csrf),
      await httpRequest(`${p.portalUrl}/api/v1/service-accounts/${accountA.clientId}`, { method: 'DELETE', headers: { cookie: session.cookie } }),
      await httpRequest(`${p.portalUrl}/api/v1/service-accounts/${accountA.clientId}/reset-secret`, { method: 'POST', headers: { cookie: session.cookie } }),
    ];
    const listed = await httpRequest(`${p.portalUrl}/api/v1/service-accounts`, { headers: { cookie: session.cookie } });
    const accepted = await post(session.cookie, session.csrf, 'csrf-ok');

    for (const answer of refused) {
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: { error: 403, message: 'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header' } });
    }
    expect(listed.status).toBe(200);
    expect((listed.body as Array<{ name: string }>).map((a) => a.name)).not.toContain('csrf-probe');
    expect(accepted.status).toBe(201);
    expect((await p.requestToken(tenantA, accountA.clientId, accountA.secret)).status).toBe(200);
  });

  test('When sign-in starts with a return_to pointing elsewhere, then it always lands on the portal itself; a same-origin path is honoured', async () => {
    const hostile = ['https://evil.example/', '//evil.example/x', '/\\evil.example', '\\\\evil.example', '/%2F%2Fevil.example', ' //evil.example', '\t/x', 'javascript:alert(1)', 'http:evil.example', '/\u2215\u2215evil.example', '/login?return_to=https://evil.example'];

    const landings = [];
    for (const returnTo of hostile) landings.push((await p.portalSession(tenantA, `admin@${tenantA}.test`, returnTo)).landing);
    const honoured = (await p.portalSession(tenantA, `admin@${tenantA}.test`, '/activity?page=2')).landing;

    for (const [i, landing] of landings.entries()) {
      expect({ returnTo: hostile[i], landing }).toEqual({ returnTo: hostile[i], landing: expect.stringMatching(/^\/(?![/\\])/) });
      expect(new URL(landing, p.portalUrl!).origin).toBe(p.portalUrl);
    }
    expect(honoured).toBe('/activity?page=2');
  });

  test('When an authorization request names a redirect_uri other than the portal callback, then the token service never redirects to it', async () => {
    const evil = ['https://evil.example/auth/callback', `${p.portalUrl}/auth/callback/../../evil`, `${p.portalUrl}.evil.example/auth/callback`, `${p.portalUrl}/auth/callback?next=https://evil.example`, `${p.portalUrl}@evil.example/auth/callback`];

    for (const redirectUri of evil) {
      const query = new URLSearchParams({ client_id: 'portal', response_type: 'code', redirect_uri: redirectUri, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', state: 's' });
      const answer = await httpRequest(`${p.authUrl}/realms/${tenantA}/protocol/openid-connect/auth?${query}`);
      expect({ redirectUri, status: answer.status, location: answer.headers.location }).toEqual({ redirectUri, status: 400, location: undefined });
    }
  });
});

describe('Client secret guessing', () => {
  test('When one address guesses a client secret again and again, then it is throttled to 429 with Retry-After in the RFC 6749 shape', async () => {
    const victim = await p.createServiceAccount(tenantA);

    const statuses = [];
    let last: Answer | undefined;
    for (let i = 0; i < 12; i += 1) {
      last = await p.requestToken(tenantA, victim.clientId, `pss_guess${i}`);
      statuses.push(last.status);
    }

    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    expect({ body: last!.body, retryAfter: Number(last!.headers['retry-after']) > 0 }).toEqual({ body: { error: expect.any(String), error_description: expect.any(String) }, retryAfter: true });
  });
});

// Realms cannot be deleted (no CLI command, no API), so a token of a deleted realm cannot arise;
// the nearest case is a validly signed token naming a realm that does not exist.
test('When a token signed by a real key names a realm that does not exist, then it is refused', async () => {
  const ghost = signRs256(headerA, { ...claimsA, iss: `${p.authUrl}/realms/no-such-realm-e2e`, tenant: 'no-such-realm-e2e' }, keyA.privateKey);

  expectInvalidToken(await p.listPlants(ghost), 'plants');
});
