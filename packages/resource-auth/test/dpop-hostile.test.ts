/**
 * DPoP under attack: replayed proofs (one replica, two replicas, a parallel burst), forged and
 * oversized proofs, keys of the wrong type, a replay store that is down (fail closed), and
 * server nonces. Real Redis; the test issuer stands in for the token service.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import { Redis } from 'ioredis';
import { signJws, TEST_REDIS_URL } from '@plant/test-kit';
import {
  call,
  dpopKey,
  invalidProof,
  outcome,
  useDpopWorld,
  WHOAMI,
  type DpopServer,
} from './dpop-support.js';

const world = useDpopWorld();
let replicas: [DpopServer, DpopServer];

beforeAll(async () => {
  replicas = [await world.server(), await world.server()];
});

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('DPoP: replayed proofs', () => {
  test('When a proof that was accepted is sent again, to the same or another replica, then 401 invalid_dpop_proof', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'GET', htu: WHOAMI, token });
    expect((await call(replicas[0], token, proof)).status).toBe(200);
    const replayed = invalidProof('DPoP proof has already been used');
    expect(outcome(await call(replicas[0], token, proof))).toEqual(replayed);
    expect(outcome(await call(replicas[1], token, proof))).toEqual(replayed);
  });

  test('When one proof is sent 40 times at once across two replicas, then exactly one request is accepted', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'GET', htu: WHOAMI, token });
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(replicas[i % 2]!, token, proof).then((res) => res.status),
      ),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(1);
    expect(statuses.filter((s) => s === 401).length).toBe(39);
  });

  test('When a proof is refused for another reason, then its jti is not spent: the same jti in a correct proof still works', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    expect(
      (
        await call(
          replicas[0],
          token,
          key.proof({ htm: 'POST', htu: WHOAMI, token, jti: 'kept-jti' }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await call(
          replicas[0],
          token,
          key.proof({ htm: 'GET', htu: WHOAMI, token, jti: 'kept-jti' }),
        )
      ).status,
    ).toBe(200);
  });

  test('When a proof is accepted, then its jti is kept in Redis no longer than its iat keeps it acceptable (iat + 60 s window + 1 s)', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const prefix = `ttl-${process.pid}-${Date.now()}:`;
    const { createRedisReplayStore } = await import('../src/index.js');
    const server = await world.server({
      replay: createRedisReplayStore({ redis: TEST_REDIS_URL, keyPrefix: prefix }),
    });
    const iat = Math.floor(Date.now() / 1000) - 30;
    expect(
      (
        await call(
          server,
          token,
          key.proof({ htm: 'GET', htu: WHOAMI, token, iat, jti: 'ttl-jti' }),
        )
      ).status,
    ).toBe(200);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const stored = `${prefix}${createHash('sha256').update(`${key.thumbprint}:ttl-jti`).digest('base64url')}`;
      // Read before the TTL: the key's remaining life can only have shrunk since, so the bound
      // holds however long the round trip takes on a loaded machine.
      const readAt = Date.now();
      const ttl = await redis.pttl(stored);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual((iat + 61) * 1000 - readAt + 1000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('DPoP: forged and malformed proofs', () => {
  const key = dpopKey();
  let token: string;
  beforeAll(() => {
    token = world.boundToken(key);
  });
  const payload = () => ({
    jti: `j-${Math.random()}`,
    htm: 'GET',
    htu: WHOAMI,
    iat: Math.floor(Date.now() / 1000),
    ath: createHash('sha256').update(token).digest('base64url'),
  });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
    format: 'jwk',
  });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({
    format: 'jwk',
  });
  const withHeader = (header: Record<string, unknown>) =>
    signJws({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...header }, payload(), key.privateKey);

  test.each<[string, () => string | string[], string]>([
    [
      'a proof over 4096 characters',
      () => `${'a'.repeat(5000)}.b.c`,
      'DPoP proof must be one compact JWS of at most 4096 characters',
    ],
    [
      'a valid proof padded past the limit with a huge claim',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, claims: { pad: 'x'.repeat(5000) } }),
      'DPoP proof must be one compact JWS of at most 4096 characters',
    ],
    [
      'two DPoP headers',
      () => [
        key.proof({ htm: 'GET', htu: WHOAMI, token }),
        key.proof({ htm: 'GET', htu: WHOAMI, token }),
      ],
      'DPoP proof must be one compact JWS of at most 4096 characters',
    ],
    [
      'no signature',
      () => `${segment({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk })}.${segment(payload())}.`,
      'DPoP proof must be one compact JWS of at most 4096 characters',
    ],
    [
      'a header that is not JSON',
      () => `${Buffer.from('nope').toString('base64url')}.${segment(payload())}.c2ln`,
      'DPoP proof is not a well-formed JWT',
    ],
    ['typ JWT', () => withHeader({ typ: 'JWT' }), 'DPoP proof typ must be dpop+jwt'],
    [
      'alg none',
      () => `${segment({ typ: 'dpop+jwt', alg: 'none', jwk: key.jwk })}.${segment(payload())}.c2ln`,
      'DPoP proof alg must be ES256 or EdDSA',
    ],
    [
      'HS256 keyed with the public key',
      () => {
        const input = `${segment({ typ: 'dpop+jwt', alg: 'HS256', jwk: key.jwk })}.${segment(payload())}`;
        return `${input}.${createHmac('sha256', JSON.stringify(key.jwk)).update(input).digest('base64url')}`;
      },
      'DPoP proof alg must be ES256 or EdDSA',
    ],
    ['RS256', () => withHeader({ alg: 'RS256' }), 'DPoP proof alg must be ES256 or EdDSA'],
    [
      'a crit header',
      () => withHeader({ crit: ['exp'] }),
      'DPoP proof has unsupported critical header parameters',
    ],
    ['no jwk', () => withHeader({ jwk: undefined }), 'DPoP proof jwk must be a JSON object'],
    [
      'a jwk that is a string',
      () => withHeader({ jwk: 'key' }),
      'DPoP proof jwk must be a JSON object',
    ],
    [
      'a symmetric (oct) jwk',
      () => withHeader({ jwk: { kty: 'oct', k: 'c2VjcmV0' } }),
      'DPoP proof jwk must be a public key',
    ],
    [
      'the private key itself',
      () => withHeader({ jwk: key.privateKey.export({ format: 'jwk' }) }),
      'DPoP proof jwk must be a public key',
    ],
    [
      'an RSA jwk for ES256',
      () => withHeader({ jwk: rsa }),
      'DPoP proof jwk must be an EC P-256 key for ES256',
    ],
    [
      'a P-384 jwk for ES256',
      () => withHeader({ jwk: p384 }),
      'DPoP proof jwk must be an EC P-256 key for ES256',
    ],
    [
      'an EC jwk for EdDSA',
      () => withHeader({ alg: 'EdDSA' }),
      'DPoP proof jwk must be an OKP Ed25519 key for EdDSA',
    ],
    [
      'coordinates of the wrong length',
      () => withHeader({ jwk: { ...key.jwk, x: 'AAAA' } }),
      'DPoP proof jwk has invalid coordinates',
    ],
    [
      'no jti',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, claims: { jti: undefined } }),
      'DPoP proof jti must be a string of 1 to 256 characters',
    ],
    [
      'a 300-character jti',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, jti: 'j'.repeat(300) }),
      'DPoP proof jti must be a string of 1 to 256 characters',
    ],
    [
      'a string iat',
      () =>
        key.proof({
          htm: 'GET',
          htu: WHOAMI,
          token,
          claims: { iat: String(Math.floor(Date.now() / 1000)) },
        }),
      'DPoP proof iat must be a number',
    ],
    [
      'htu as an array',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, claims: { htu: [WHOAMI] } }),
      'DPoP proof htm and htu must be strings',
    ],
    [
      'a numeric nonce',
      () => key.proof({ htm: 'GET', htu: WHOAMI, token, claims: { nonce: 7 } }),
      'DPoP proof nonce must be a string',
    ],
  ])(
    'When the proof is %s, then 401 invalid_dpop_proof and nothing is claimed',
    async (_case, proof, message) => {
      expect(outcome(await call(replicas[0], token, proof()))).toEqual(invalidProof(message));
    },
  );

  test('When the key is bound and right but its coordinates are not a point of the curve, then 401 invalid_dpop_proof', async () => {
    const jwk = { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) };
    const { jwkThumbprint } = await import('@plant/test-kit');
    const bound = world.issuer.mint({
      tenant: world.tenant,
      claims: { cnf: { jkt: jwkThumbprint(jwk) } },
    });
    const proof = signJws(
      { typ: 'dpop+jwt', alg: 'ES256', jwk },
      { ...payload(), ath: createHash('sha256').update(bound).digest('base64url') },
      key.privateKey,
    );
    expect(outcome(await call(replicas[0], bound, proof))).toEqual(
      invalidProof('DPoP proof jwk is not a valid key'),
    );
  });
});

describe('DPoP: the replay store down', () => {
  test('When Redis cannot be reached, then a valid proof gets 503 with Retry-After in the Error shape (fail closed), and the next request is decided again', async () => {
    const down = await world.server({ redis: 'redis://127.0.0.1:1' });
    const key = dpopKey();
    const token = world.boundToken(key);
    const res = await call(down, token, key.proof({ htm: 'GET', htu: WHOAMI, token }));
    expect({ status: res.status, retry: res.headers['retry-after'], body: res.body }).toEqual({
      status: 503,
      retry: '1',
      body: { error: 503, message: 'DPoP proof replay check is temporarily unavailable' },
    });
    expect((await call(down, token, key.proof({ htm: 'GET', htu: WHOAMI, token }))).status).toBe(
      503,
    );
  });
});

describe('DPoP: server nonces (RFC 9449 §8)', () => {
  let nonced: DpopServer;
  beforeAll(async () => {
    nonced = await world.server({ nonceKeys: ['first-nonce-key-0123456789abcdef'] });
  });

  test('When nonces are on and the proof has none, then 401 use_dpop_nonce with a nonce in DPoP-Nonce; a proof with it is accepted', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const first = await call(nonced, token, key.proof({ htm: 'GET', htu: WHOAMI, token }));
    const nonce = first.headers['dpop-nonce'];
    expect({
      status: first.status,
      challenge: first.headers['www-authenticate'],
      body: first.body.error,
      nonce: typeof nonce,
    }).toEqual({
      status: 401,
      challenge: expect.stringMatching(/^DPoP realm="api", error="use_dpop_nonce", /),
      body: 401,
      nonce: 'string',
    });
    const second = await call(nonced, token, key.proof({ htm: 'GET', htu: WHOAMI, token, nonce }));
    expect({ status: second.status, newNonce: second.headers['dpop-nonce'] }).toEqual({
      status: 200,
      newNonce: undefined,
    });
  });

  test('When the nonce is made up, or issued under another key, then 401 use_dpop_nonce', async () => {
    const other = await world.server({ nonceKeys: ['another-nonce-key-0123456789abcd'] });
    const key = dpopKey();
    const token = world.boundToken(key);
    const foreign = (await call(other, token, key.proof({ htm: 'GET', htu: WHOAMI, token })))
      .headers['dpop-nonce'];
    for (const nonce of ['made-up', foreign]) {
      const res = await call(nonced, token, key.proof({ htm: 'GET', htu: WHOAMI, token, nonce }));
      expect({
        status: res.status,
        error: /error="use_dpop_nonce"/.test(res.headers['www-authenticate'] ?? ''),
      }).toEqual({ status: 401, error: true });
    }
  });

  test('When a replica is given the key as its second key (rotation), then it accepts the nonces the first replica issued', async () => {
    const rotated = await world.server({
      nonceKeys: ['a-newer-nonce-key-0123456789abcd', 'first-nonce-key-0123456789abcdef'],
    });
    const key = dpopKey();
    const token = world.boundToken(key);
    const nonce = (await call(nonced, token, key.proof({ htm: 'GET', htu: WHOAMI, token })))
      .headers['dpop-nonce'];
    expect(
      (await call(rotated, token, key.proof({ htm: 'GET', htu: WHOAMI, token, nonce }))).status,
    ).toBe(200);
  });
});
