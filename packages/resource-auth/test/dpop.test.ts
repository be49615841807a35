/**
 * DPoP at a resource server (RFC 9449 §7): bound tokens with proofs accepted, every way of
 * using one without its key refused with the RFC's challenge and the Error shape, on the test
 * file's own real Redis.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import {
  call,
  dpopKey,
  invalidDpopToken,
  invalidProof,
  outcome,
  useDpopWorld,
  WHOAMI,
  type DpopServer,
} from './dpop-support.js';

const world = useDpopWorld();
let server: DpopServer;

beforeAll(async () => {
  server = await world.server();
});

const now = () => Math.floor(Date.now() / 1000);

describe('DPoP: accepted', () => {
  test.each(['ES256', 'EdDSA'] as const)(
    'When a token bound to an %s key comes with a proof for this request, then the caller is its principal, jkt included',
    async (alg) => {
      const key = dpopKey(alg);
      const token = world.boundToken(key, { sub: `sa-${alg}` });
      const res = await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }));
      expect({ status: res.status, sub: res.body.sub, jkt: res.body.jkt }).toEqual({
        status: 200,
        sub: `sa-${alg}`,
        jkt: key.thumbprint,
      });
    },
  );

  test('When each request has a proof of its own, then the same token serves many requests', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    for (let i = 0; i < 5; i += 1)
      expect(
        (await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }))).status,
      ).toBe(200);
  });

  test('When htu carries a query, a fragment, another case of scheme and host, or the default port, then it still names this URL', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    for (const htu of [
      `${WHOAMI}?limit=5`,
      `${WHOAMI}#x`,
      'HTTPS://API.EXAMPLE.TEST/v1/whoami',
      'https://api.example.test:443/v1/whoami',
      'https://api.example.test/v1/./whoami',
    ]) {
      expect({
        htu,
        status: (await call(server, token, key.proof({ htm: 'GET', htu, token }))).status,
      }).toEqual({ htu, status: 200 });
    }
  });

  test('When the scheme is written dpop in lower case, then it is the DPoP scheme', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    expect(
      (await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }), { scheme: 'dpop' }))
        .status,
    ).toBe(200);
  });

  test('When an unbound token is sent as Bearer, then it works as before (DPoP is per token)', async () => {
    const token = world.issuer.mint({ tenant: world.tenant });
    expect((await call(server, token, undefined, { scheme: 'Bearer' })).status).toBe(200);
  });
});

describe('DPoP: a bound token without its key', () => {
  test('When a DPoP-bound token is sent as a plain Bearer token (with or without a proof), then 401 invalid_token under the DPoP scheme', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const expected = invalidDpopToken(
      'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof',
    );
    expect(outcome(await call(server, token, undefined, { scheme: 'Bearer' }))).toEqual(expected);
    expect(
      outcome(
        await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }), {
          scheme: 'Bearer',
        }),
      ),
    ).toEqual(expected);
  });

  test('When a bound token verified once as DPoP is then sent as Bearer, then the verified-token cache does not let it through', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    expect((await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }))).status).toBe(
      200,
    );
    expect((await call(server, token, undefined, { scheme: 'Bearer' })).status).toBe(401);
  });

  test('When an unbound token is sent with the DPoP scheme and a proof, then 401 invalid_token', async () => {
    const key = dpopKey();
    const token = world.issuer.mint({ tenant: world.tenant });
    expect(
      outcome(await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }))),
    ).toEqual(
      invalidDpopToken('The access token is not DPoP-bound: send it with the Bearer scheme'),
    );
  });

  test('When the proof is signed (validly) by another key than the token is bound to, then 401 invalid_token', async () => {
    const [owner, thief] = [dpopKey(), dpopKey()];
    const token = world.boundToken(owner);
    expect(
      outcome(await call(server, token, thief.proof({ htm: 'GET', htu: WHOAMI, token }))),
    ).toEqual(invalidDpopToken('The DPoP proof key is not the key the access token is bound to'));
  });

  test("When the proof carries the owner's public key but is signed by another key, then 401 invalid_dpop_proof (signature)", async () => {
    const [owner, thief] = [dpopKey(), dpopKey()];
    const token = world.boundToken(owner);
    const forged = thief.proof({ htm: 'GET', htu: WHOAMI, token, header: { jwk: owner.jwk } });
    expect(outcome(await call(server, token, forged))).toEqual(
      invalidProof('DPoP proof signature is invalid'),
    );
  });

  test('When the token binds to something else than a jkt (another confirmation method, a malformed thumbprint), then 401 invalid_token before any proof is read', async () => {
    const key = dpopKey();
    for (const cnf of [
      { 'x5t#S256': key.thumbprint },
      { jkt: 'short' },
      { jkt: key.thumbprint, 'x5t#S256': 'x' },
      'jkt',
    ]) {
      const token = world.issuer.mint({ tenant: world.tenant, claims: { cnf } });
      const res = await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }));
      expect({ cnf, status: res.status, message: res.body.message }).toEqual({
        cnf,
        status: 401,
        message: 'Token cnf claim is invalid',
      });
    }
  });
});

describe('DPoP: a proof for another request', () => {
  const key = dpopKey();
  let token: string;
  beforeAll(() => {
    token = world.boundToken(key);
  });

  test.each<[string, () => string, string]>([
    ['no DPoP header', () => '', 'A DPoP proof is required: send it in the DPoP header'],
    [
      'another method',
      () => key.proof({ htm: 'POST', htu: WHOAMI, token }),
      'DPoP proof htm does not match the request method',
    ],
    [
      'the method in lower case',
      () => key.proof({ htm: 'get', htu: WHOAMI, token }),
      'DPoP proof htm does not match the request method',
    ],
    [
      'another path',
      () => key.proof({ htm: 'GET', htu: `${WHOAMI}/x`, token }),
      'DPoP proof htu does not match the request URL',
    ],
    [
      'another host',
      () => key.proof({ htm: 'GET', htu: 'https://evil.example.test/v1/whoami', token }),
      'DPoP proof htu does not match the request URL',
    ],
    [
      'another scheme',
      () => key.proof({ htm: 'GET', htu: 'http://api.example.test/v1/whoami', token }),
      'DPoP proof htu does not match the request URL',
    ],
    [
      'the address the test connects to',
      () => key.proof({ htm: 'GET', htu: 'http://127.0.0.1/v1/whoami', token }),
      'DPoP proof htu does not match the request URL',
    ],
    [
      'an htu that is no URL',
      () => key.proof({ htm: 'GET', htu: 'whoami', token }),
      'DPoP proof htu does not match the request URL',
    ],
    [
      'an iat two minutes old',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, iat: now() - 120 }),
      'DPoP proof iat is not recent enough',
    ],
    [
      'an iat two minutes ahead',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, iat: now() + 120 }),
      'DPoP proof iat is not recent enough',
    ],
    [
      'no ath',
      () => key.proof({ htm: 'GET', htu: WHOAMI }),
      'DPoP proof ath is required with an access token',
    ],
    [
      'the ath of another token',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token: `${token}x` }),
      'DPoP proof ath does not match the access token',
    ],
  ])('When the proof has %s, then 401 invalid_dpop_proof', async (_case, proof, message) => {
    expect(outcome(await call(server, token, proof() || undefined))).toEqual(invalidProof(message));
  });

  test('When a POST is sent with a proof for GET of the same URL, then 401 invalid_dpop_proof', async () => {
    expect(
      outcome(
        await call(server, token, key.proof({ htm: 'GET', htu: WHOAMI, token }), {
          method: 'post',
        }),
      ),
    ).toEqual(invalidProof('DPoP proof htm does not match the request method'));
  });
});
