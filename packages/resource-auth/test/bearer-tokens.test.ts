/**
 * What a bearer token must be to pass: its shape, header and claims (accepted and refused, with
 * the exact invalid_token description), the checks made before any key lookup, what reaches the
 * logs, and the role a route can require of the principal.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { uniqueName } from '@plant/test-kit';
import {
  AUDIENCE,
  AUTH_URL,
  invalidToken,
  issuer,
  newRealm,
  outcome,
  resourceServer,
  useTestIssuer,
  whoami,
  type Harness,
} from './bearer-support.js';

useTestIssuer();

describe('Bearer verification: accepted tokens', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await resourceServer();
  });

  test('When a valid service-account token is sent, then req.auth carries every claim as a Principal', async () => {
    const tenant = newRealm();
    const now = Math.floor(Date.now() / 1000);
    const token = issuer.mint({
      tenant,
      claims: {
        sub: 'sa-1',
        client_id: 'sa-1',
        role: 'View',
        grants: [{ tag: 'fern', permission: 'edit' }],
        ver: 3,
        exp: now + 300,
        jti: 'j-1',
        scope: 'plants:read',
      },
    });
    const res = await whoami(h, token);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: {
        tenant,
        sub: 'sa-1',
        clientId: 'sa-1',
        principalType: 'service_account',
        role: 'View',
        grants: [{ tag: 'fern', permission: 'edit' }],
        scope: 'plants:read',
        ver: 3,
        exp: now + 300,
        jti: 'j-1',
      },
    });
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'a user with Account Admin',
      { principal_type: 'user', role: 'Account Admin', sub: 'u-1' },
      {},
    ],
    ['typ application/at+jwt', {}, { typ: 'application/at+jwt' }],
    ['typ in upper case', {}, { typ: 'AT+JWT' }],
    ['aud as an array containing the audience', { aud: ['http://other.test', AUDIENCE] }, {}],
    ['no grants claim', { grants: undefined }, {}],
  ])('When the token has %s, then it is accepted', async (_case, claims, header) => {
    const tenant = newRealm();
    const res = await whoami(h, issuer.mint({ tenant, claims, header }));
    expect(res.status).toBe(200);
    expect(res.body.tenant).toBe(tenant);
  });

  test("When a person's token carries acr and auth_time (RFC 9068 §2.2.1), then it is accepted with both in the Principal; malformed ones are dropped, never a refusal", async () => {
    const tenant = newRealm();
    const user = { principal_type: 'user', role: 'Account Admin', sub: 'u-2' };
    const signedIn = await whoami(
      h,
      issuer.mint({
        tenant,
        claims: { ...user, acr: 'urn:plantstore:acr:factor', auth_time: 1_800_000_000 },
      }),
    );
    const malformed = await whoami(
      h,
      issuer.mint({ tenant, claims: { ...user, acr: 7, auth_time: '1800000000' } }),
    );

    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({
      acr: 'urn:plantstore:acr:factor',
      authTime: 1_800_000_000,
    });
    expect(malformed.status).toBe(200);
    expect(malformed.body).not.toHaveProperty('acr');
    expect(malformed.body).not.toHaveProperty('authTime');
  });

  test('When exp passed a moment ago (within the 5 s clock tolerance), then the token is accepted', async () => {
    const tenant = newRealm();
    const res = await whoami(
      h,
      issuer.mint({ tenant, claims: { exp: Math.floor(Date.now() / 1000) - 1 } }),
    );
    expect(res.status).toBe(200);
  });

  test('When verify() is called directly, then it resolves the Principal or rejects with a 401 AppError', async () => {
    const tenant = newRealm();
    await expect(
      h.auth.verify(issuer.mint({ tenant, claims: { sub: 'direct' } })),
    ).resolves.toMatchObject({ tenant, sub: 'direct' });
    await expect(h.auth.verify(issuer.mintExpired({ tenant }))).rejects.toMatchObject({
      status: 401,
      message: 'Token has expired',
    });
  });
});

describe('Bearer verification: refused tokens', () => {
  let h: Harness;
  let tenant: string;
  beforeAll(async () => {
    h = await resourceServer();
    tenant = newRealm();
  });

  test('When there is no Authorization header, then 401 with a bare challenge and the Error body', async () => {
    const res = await request(h.url).get('/whoami');
    expect(outcome(res)).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants"',
      body: {
        error: 401,
        message: 'Authentication required: send Authorization: Bearer <access token>',
      },
    });
  });

  const now = () => Math.floor(Date.now() / 1000);
  test.each<[string, () => string, string]>([
    ['garbage', () => 'abc.def', 'Token is not a well-formed JWT'],
    ['an oversized token', () => `${'a'.repeat(9000)}.b.c`, 'Token is not a well-formed JWT'],
    [
      'a header that is not JSON',
      () => `${Buffer.from('nope').toString('base64url')}.e30.sig`,
      'Token is not a well-formed JWT',
    ],
    ['alg none', () => issuer.mintAlgNone({ tenant }), 'Token algorithm must be RS256 or ES256'],
    [
      'HS256 signed with the public key',
      () => issuer.mintHs256WithPublicKey({ tenant }),
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'RS512',
      () => issuer.mint({ tenant, header: { alg: 'RS512' } }),
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'another signing key',
      () => issuer.mintWithOtherKey({ tenant }),
      'Token signature is invalid',
    ],
    [
      'no typ',
      () => issuer.mint({ tenant, header: { typ: undefined } }),
      'Token type must be at+jwt',
    ],
    ['typ JWT', () => issuer.mint({ tenant, header: { typ: 'JWT' } }), 'Token type must be at+jwt'],
    [
      'a crit header',
      () => issuer.mint({ tenant, header: { crit: ['exp'] } }),
      'Token has unsupported critical header parameters',
    ],
    [
      'no kid',
      () => issuer.mint({ tenant, header: { kid: undefined } }),
      'Token has no valid key id',
    ],
    ['an expired exp', () => issuer.mintExpired({ tenant }), 'Token has expired'],
    [
      'no exp',
      () => issuer.mint({ tenant, claims: { exp: undefined } }),
      'Token exp claim is missing or invalid',
    ],
    [
      'a string exp',
      () => issuer.mint({ tenant, claims: { exp: String(now() + 300) } }),
      'Token exp claim is missing or invalid',
    ],
    [
      'nbf in the future',
      () => issuer.mint({ tenant, claims: { nbf: now() + 600 } }),
      'Token is not yet valid',
    ],
    [
      'iat in the future',
      () => issuer.mint({ tenant, claims: { iat: now() + 600 } }),
      'Token iat claim is missing or in the future',
    ],
    [
      'no iat',
      () => issuer.mint({ tenant, claims: { iat: undefined } }),
      'Token iat claim is missing or in the future',
    ],
    [
      'another audience',
      () => issuer.mint({ tenant, claims: { aud: 'http://account-admin.test' } }),
      'Token audience is not accepted',
    ],
    [
      'no audience',
      () => issuer.mint({ tenant, claims: { aud: undefined } }),
      'Token audience is not accepted',
    ],
    [
      'an issuer on another host',
      () => issuer.mint({ tenant, claims: { iss: `http://evil.test/realms/${tenant}` } }),
      'Token issuer is not accepted',
    ],
    [
      'an issuer with a trailing slash',
      () => issuer.mint({ tenant, claims: { iss: `${AUTH_URL}/realms/${tenant}/` } }),
      'Token issuer is not accepted',
    ],
    [
      'iss of another tenant than the tenant claim',
      () => issuer.mint({ tenant, claims: { iss: `${AUTH_URL}/realms/other` } }),
      'Token issuer is not accepted',
    ],
    [
      'no tenant claim',
      () => issuer.mint({ tenant, claims: { tenant: undefined } }),
      'Token tenant claim is missing or invalid',
    ],
    [
      'ver 0',
      () => issuer.mint({ tenant, claims: { ver: 0 } }),
      'Token ver claim must be a positive integer',
    ],
    [
      'ver 1.5',
      () => issuer.mint({ tenant, claims: { ver: 1.5 } }),
      'Token ver claim must be a positive integer',
    ],
    [
      'ver as a string',
      () => issuer.mint({ tenant, claims: { ver: '2' } }),
      'Token ver claim must be a positive integer',
    ],
    [
      'no ver',
      () => issuer.mint({ tenant, claims: { ver: undefined } }),
      'Token ver claim must be a positive integer',
    ],
    [
      'an unknown role',
      () => issuer.mint({ tenant, claims: { role: 'Owner' } }),
      'Token role claim is missing or invalid',
    ],
    [
      'no role',
      () => issuer.mint({ tenant, claims: { role: undefined } }),
      'Token role claim is missing or invalid',
    ],
    [
      'grants not an array',
      () => issuer.mint({ tenant, claims: { grants: { tag: 'x' } } }),
      'Token grants claim is invalid',
    ],
    [
      'a grant of another permission',
      () => issuer.mint({ tenant, claims: { grants: [{ tag: 'x', permission: 'admin' }] } }),
      'Token grants claim is invalid',
    ],
    [
      'an unknown principal_type',
      () => issuer.mint({ tenant, claims: { principal_type: 'robot' } }),
      'Token principal_type claim is missing or invalid',
    ],
    [
      'no sub',
      () => issuer.mint({ tenant, claims: { sub: undefined } }),
      'Token sub claim is missing or invalid',
    ],
    [
      'no client_id',
      () => issuer.mint({ tenant, claims: { client_id: undefined } }),
      'Token client_id claim is missing or invalid',
    ],
    // A forged or malformed `cred` is refused, never read as a token naming no credential.
    [
      'a numeric cred',
      () => issuer.mint({ tenant, claims: { cred: 7 } }),
      'Token cred claim is invalid',
    ],
    [
      'an empty cred',
      () => issuer.mint({ tenant, claims: { cred: '' } }),
      'Token cred claim is invalid',
    ],
    [
      'a list of creds',
      () => issuer.mint({ tenant, claims: { cred: ['secret:a', 'secret:b'] } }),
      'Token cred claim is invalid',
    ],
    [
      'an oversized cred',
      () => issuer.mint({ tenant, claims: { cred: `secret:${'a'.repeat(300)}` } }),
      'Token cred claim is invalid',
    ],
    [
      'an unknown realm',
      () => issuer.mint({ tenant: uniqueName('gone') }),
      'Token issuer is not a known realm',
    ],
  ])('When the token has %s, then 401 invalid_token', async (_case, token, description) => {
    expect(outcome(await whoami(h, token()))).toEqual(invalidToken(description));
  });

  test('When the Authorization header uses another scheme, then 401 with a bare challenge', async () => {
    const res = await request(h.url).get('/whoami').set('authorization', 'Basic dXNlcjpwYXNz');
    expect({ status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants"',
    });
  });

  test('When a token of realm A is relabelled as realm B, then it fails whichever key it names', async () => {
    const b = newRealm();
    const kidOfB = issuer.addRealm(b);
    const relabelled = issuer.mint({ tenant, claims: { tenant: b, iss: issuer.issuerOf(b) } });
    expect(outcome(await whoami(h, relabelled))).toEqual(
      invalidToken('Token signing key is not known'),
    );
    const withKidOfB = issuer.mint({
      tenant,
      header: { kid: kidOfB },
      claims: { tenant: b, iss: issuer.issuerOf(b) },
    });
    expect(outcome(await whoami(h, withKidOfB))).toEqual(
      invalidToken('Token signature is invalid'),
    );
  });

  test('When the issuer or tenant is garbage, then no JWKS request is made', async () => {
    for (const bad of ['UPPER', '-dash', 'a'.repeat(64), '../../x', 'x%2fy']) {
      const res = await whoami(h, issuer.mint({ tenant: bad }));
      expect({ bad, status: res.status }).toEqual({ bad, status: 401 });
      expect({ bad, fetches: issuer.jwksRequests(bad) }).toEqual({ bad, fetches: 0 });
    }
  });

  test('When an expired token names an unknown realm, then it is refused without a JWKS request', async () => {
    const unknown = uniqueName('old');
    expect(outcome(await whoami(h, issuer.mintExpired({ tenant: unknown })))).toEqual(
      invalidToken('Token has expired'),
    );
    expect(issuer.jwksRequests(unknown)).toBe(0);
  });

  test('When tokens are refused, then neither they nor their signatures appear in the logs', async () => {
    const tokens = [
      issuer.mintExpired({ tenant }),
      issuer.mintWithOtherKey({ tenant }),
      issuer.mint({ tenant }),
    ];
    for (const token of tokens) await whoami(h, token);
    const logs = h.logs.join('\n');
    expect(logs).toContain('bearer token rejected');
    for (const token of tokens) {
      expect(logs).not.toContain(token);
      expect(logs).not.toContain(token.split('.')[2]);
    }
  });
});

describe('Bearer authorization helpers', () => {
  test.each([
    ['View', 403],
    ['Edit', 200],
    ['Account Admin', 200],
  ])('When a %s principal calls a route that requires Edit, then %i', async (role, status) => {
    const h = await resourceServer();
    const res = await request(h.url)
      .get('/edit')
      .set('authorization', `Bearer ${issuer.mint({ tenant: newRealm(), claims: { role } })}`);
    expect(res.status).toBe(status);
    if (status === 403) {
      expect(outcome(res)).toEqual({
        status: 403,
        challenge:
          'Bearer realm="plants", error="insufficient_scope", error_description="This operation needs the Edit role or above"',
        body: { error: 403, message: 'This operation needs the Edit role or above' },
      });
    }
  });

  test.each(['plants:read', '', 'openid'])(
    "When an Edit principal's token has scope %j, then a route that requires Edit answers 403 insufficient_scope",
    async (scope) => {
      const h = await resourceServer();
      const res = await request(h.url)
        .get('/edit')
        .set(
          'authorization',
          `Bearer ${issuer.mint({ tenant: newRealm(), claims: { role: 'Edit', scope } })}`,
        );
      const message = "This operation needs the plants:write scope; the token's scope is narrower";
      expect(outcome(res)).toEqual({
        status: 403,
        challenge: `Bearer realm="plants", error="insufficient_scope", error_description="${message}"`,
        body: { error: 403, message },
      });
    },
  );
});
