/**
 * Auth attacks on tokens against the real processes: forged tokens at the Plant Store, a token
 * for a realm that does not exist, and client secrets guessed at the token endpoint. What
 * component tests already prove in-process (resource-auth/test/bearer-*.test.ts with a stand-in
 * issuer, token-service/test/*) is not repeated; here every forged token meets the real
 * verification path of a running service, and tokens signed with the realm's REAL key prove
 * that claims and headers are checked, not only the signature.
 */
import { describe, expect, test } from '@jest/globals';
import { createPublicKey } from 'node:crypto';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  otherKey,
  signHs256,
  signRs256,
  unsigned,
  type Answer,
} from '../src/index.js';
import { expectInvalidToken, now, useTwoTenants } from './helpers/two-tenants.js';

const t = useTwoTenants();

describe('Forged and misused tokens at the Plant Store process', () => {
  const forged = (): Array<[string, string]> => {
    const rsaPublicJwk = createPublicKey(t.keyA.privateKey).export({ format: 'jwk' });
    const attacker = otherKey();
    const attackerJwk = createPublicKey(attacker).export({ format: 'jwk' });
    const forgedClaims = {
      ...t.claimsA,
      tenant: t.tenantB,
      iss: `${t.p.authUrl}/realms/${t.tenantB}`,
      role: 'Account Admin',
      principal_type: 'user',
    };
    return [
      ['alg none', unsigned({ ...t.headerA, alg: 'none' }, t.claimsA)],
      ['alg None', unsigned({ ...t.headerA, alg: 'None' }, t.claimsA)],
      [
        'alg none with the real signature kept',
        `${unsigned({ ...t.headerA, alg: 'none' }, t.claimsA)}${t.tokenA.split('.')[2]}`,
      ],
      [
        'HS256 keyed with the public key PEM',
        signHs256({ ...t.headerA, alg: 'HS256' }, t.claimsA, t.keyA.publicPem),
      ],
      [
        'HS256 keyed with the public JWK',
        signHs256({ ...t.headerA, alg: 'HS256' }, t.claimsA, JSON.stringify(rsaPublicJwk)),
      ],
      [
        'HS256 keyed with the modulus',
        signHs256(
          { ...t.headerA, alg: 'HS256' },
          t.claimsA,
          Buffer.from(String(rsaPublicJwk.n), 'base64url'),
        ),
      ],
      [
        'forged tenant and role, signed by another key under the real kid',
        signRs256(t.headerA, forgedClaims, attacker),
      ],
      [
        'signed by another key, its public key embedded (jwk header)',
        signRs256({ ...t.headerA, jwk: attackerJwk }, t.claimsA, attacker),
      ],
      [
        'signed by another key, fetched from a URL (jku header)',
        signRs256(
          { ...t.headerA, jku: 'http://127.0.0.1:1/jwks', kid: 'attacker' },
          t.claimsA,
          attacker,
        ),
      ],
      [
        'signed by another key, no kid',
        signRs256({ alg: 'RS256', typ: 'at+jwt' }, t.claimsA, attacker),
      ],
      [
        'real key, expired an hour ago',
        signRs256(
          t.headerA,
          { ...t.claimsA, iat: now() - 3900, exp: now() - 3600 },
          t.keyA.privateKey,
        ),
      ],
      [
        'real key, not yet valid (iat and nbf in an hour)',
        signRs256(
          t.headerA,
          { ...t.claimsA, iat: now() + 3600, nbf: now() + 3600, exp: now() + 3900 },
          t.keyA.privateKey,
        ),
      ],
      [
        'real key, no exp',
        signRs256(t.headerA, { ...t.claimsA, exp: undefined }, t.keyA.privateKey),
      ],
      [
        'real key, audience of account-admin',
        signRs256(t.headerA, { ...t.claimsA, aud: ACCOUNT_ADMIN_AUDIENCE }, t.keyA.privateKey),
      ],
      [
        'real key, another audience',
        signRs256(t.headerA, { ...t.claimsA, aud: 'http://evil.example' }, t.keyA.privateKey),
      ],
      [
        'real key, issuer of tenant B',
        signRs256(
          t.headerA,
          { ...t.claimsA, iss: `${t.p.authUrl}/realms/${t.tenantB}`, tenant: t.tenantB },
          t.keyA.privateKey,
        ),
      ],
      [
        'real key, tenant claim B under issuer A',
        signRs256(t.headerA, { ...t.claimsA, tenant: t.tenantB }, t.keyA.privateKey),
      ],
      [
        'real key, issuer on another host',
        signRs256(
          t.headerA,
          { ...t.claimsA, iss: `http://evil.example/realms/${t.tenantA}` },
          t.keyA.privateKey,
        ),
      ],
      ['real key, typ JWT', signRs256({ ...t.headerA, typ: 'JWT' }, t.claimsA, t.keyA.privateKey)],
      [
        'real key, no typ',
        signRs256({ alg: 'RS256', kid: t.keyA.kid }, t.claimsA, t.keyA.privateKey),
      ],
      [
        'real key, crit header',
        signRs256({ ...t.headerA, crit: ['exp'] }, t.claimsA, t.keyA.privateKey),
      ],
      ['real key, ver 0', signRs256(t.headerA, { ...t.claimsA, ver: 0 }, t.keyA.privateKey)],
      [
        'real key, no ver',
        signRs256(t.headerA, { ...t.claimsA, ver: undefined }, t.keyA.privateKey),
      ],
      [
        'real key, ver as a string',
        signRs256(t.headerA, { ...t.claimsA, ver: '99' }, t.keyA.privateKey),
      ],
    ];
  };

  test('When a token is unsigned, HMAC-keyed with the public key, signed by another key, or signed by the real key with a wrong exp, nbf, aud, iss, tenant, typ, crit or ver, then GET and POST /plants answer 401 invalid_token and nothing is stored', async () => {
    const cases = forged();
    const store = t.p.plantStores[0]!;

    const answers = await Promise.all(
      cases.map(async ([name, token]) => ({
        name,
        list: await t.p.listPlants(token, 'limit=10', store),
        create: await t.p.createPlant(token, { id: 4242, name: `forged ${name}` }, store),
      })),
    );

    for (const { name, list, create } of answers) {
      expect({ name, status: list.status }).toEqual({ name, status: 401 });
      expectInvalidToken(list, 'plants');
      expectInvalidToken(create, 'plants');
    }
    expect((await t.p.listPlants(t.tokenA)).body).toEqual([]);
    expect((await t.p.listPlants(t.tokenB)).body).toEqual([{ name: 'b-plant' }]);
  });

  test('When the same claims are signed by the real key with nothing wrong, then the token is accepted (the forgeries above fail for their flaw alone)', async () => {
    const control = signRs256(t.headerA, { ...t.claimsA, jti: 'control' }, t.keyA.privateKey);

    const answer = await t.p.listPlants(control);

    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: [] });
  });
});

describe('Client secret guessing', () => {
  test('When one address guesses a client secret again and again, then it is throttled to 429 with Retry-After in the RFC 6749 shape', async () => {
    const victim = await t.p.createServiceAccount(t.tenantA);

    const statuses = [];
    let last: Answer | undefined;
    for (let i = 0; i < 12; i += 1) {
      last = await t.p.requestToken(t.tenantA, victim.clientId, `pss_guess${i}`);
      statuses.push(last.status);
    }

    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    expect({ body: last!.body, retryAfter: Number(last!.headers['retry-after']) > 0 }).toEqual({
      body: { error: expect.any(String), error_description: expect.any(String) },
      retryAfter: true,
    });
  });
});

// Realms cannot be deleted (no CLI command, no API), so a token of a deleted realm cannot arise;
// the nearest case is a validly signed token naming a realm that does not exist.
test('When a token signed by a real key names a realm that does not exist, then it is refused', async () => {
  const ghost = signRs256(
    t.headerA,
    { ...t.claimsA, iss: `${t.p.authUrl}/realms/no-such-realm-e2e`, tenant: 'no-such-realm-e2e' },
    t.keyA.privateKey,
  );

  expectInvalidToken(await t.p.listPlants(ghost), 'plants');
});
