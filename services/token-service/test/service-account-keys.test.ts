import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { clientKeyPair, eventually, hostileKeys, rsaJwk } from '@plant/test-kit';
import * as client from 'openid-client';
import { decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import { assertionGrant, keyedAccount } from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { listenToRevocations } from './helpers/revocation-feed.js';
import { verifyToken } from './helpers/token-client.js';

let h: Harness;
let tenant: string;
let revocations: Awaited<ReturnType<typeof listenToRevocations>>;

useHarness((started, first) => {
  h = started;
  tenant = first;
});

beforeAll(async () => {
  revocations = await listenToRevocations();
});

afterAll(() => revocations.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("a service account's keys", () => {
  const refusedKeys: Array<[string, () => object, string]> = [
    [
      'an RSA key of 1024 bits',
      () => ({
        jwk: generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
          format: 'jwk',
        }),
      }),
      'RSA keys must have 2048 to 4096 bits (this one has 1024)',
    ],
    // Keys whose every check would cost milliseconds (or prove nothing): refused before they are stored.
    ...hostileKeys().map(([name, jwk, refusal]): [string, () => object, string] => [
      name,
      () => ({ jwk }),
      refusal,
    ]),
    [
      'an RSA-PSS-only key as a PEM',
      () => ({
        pem: generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).publicKey.export({
          format: 'pem',
          type: 'spki',
        }),
      }),
      'This key type is not supported; use RSA (2048 to 4096 bits), EC P-256 or Ed25519',
    ],
    [
      'a private JWK',
      () => ({ jwk: clientKeyPair('ec').privateKey.export({ format: 'jwk' }) }),
      'This JWK holds private or symmetric key material; add the public key only',
    ],
    [
      'a symmetric JWK',
      () => ({ jwk: { kty: 'oct', k: 'c2VjcmV0' } }),
      'This JWK holds private or symmetric key material; add the public key only',
    ],
    [
      'a private PEM',
      () => ({ pem: clientKeyPair('ec').privateKey.export({ format: 'pem', type: 'pkcs8' }) }),
      'This PEM holds a private key; add the public key only',
    ],
    [
      'a certificate-looking PEM',
      () => ({ pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----' }),
      'pem must be one "-----BEGIN PUBLIC KEY-----" block',
    ],
    [
      'a PEM of garbage',
      () => ({ pem: '-----BEGIN PUBLIC KEY-----\nnot base64 at all\n-----END PUBLIC KEY-----' }),
      'pem is not a valid public key; use RSA (2048 to 4096 bits), EC P-256 or Ed25519',
    ],
    [
      'a JWK that names an algorithm of another key type',
      () => ({ jwk: { ...clientKeyPair('ec').publicJwk, alg: 'RS256' } }),
      'jwk.alg "RS256" does not fit this key',
    ],
    [
      'a JWK whose use is encryption',
      () => ({ jwk: { ...clientKeyPair('ec').publicJwk, use: 'enc' } }),
      'jwk.use must be "sig"',
    ],
    [
      'a kid with a slash',
      () => ({ jwk: { ...clientKeyPair('ec').publicJwk, kid: 'a/b' } }),
      'jwk.kid must be 1-128 characters of A-Z, a-z, 0-9, ".", "_", "~", "-"',
    ],
    [
      'both a JWK and a PEM',
      () => ({ jwk: clientKeyPair('ec').publicJwk, pem: clientKeyPair('ec').publicPem }),
      'give exactly one of jwk and pem',
    ],
    ['neither', () => ({}), 'give exactly one of jwk and pem'],
  ];
  test.each(refusedKeys)(
    'When an Account Admin adds %s, then 400 with what is wrong, and nothing is stored',
    async (_case, body, message) => {
      const account = await internal(h).createServiceAccount(tenant);

      const res = await internal(h)
        .raw.post(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/keys`)
        .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`)
        .send(body());

      expect(res.body).toEqual({ error: 400, message });
      expect(
        (await internal(h).credentials(tenant, account.client_id).expect(200)).body.keys,
      ).toEqual([]);
      await internal(h).remove(tenant, account.client_id).expect(204);
    },
  );

  test('When RSA keys at the edges of the rule are added (e = 3, e = 2^32 - 1, 4096 bits), then each is 201', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const edges = [
      rsaJwk('Aw'),
      rsaJwk(Buffer.from([0xff, 0xff, 0xff, 0xff]).toString('base64url')),
      rsaJwk('AQAB', 4096),
    ];

    const statuses = [];
    for (const jwk of edges)
      statuses.push((await internal(h).addKey(tenant, account.client_id, { jwk })).status);

    expect(statuses).toEqual([201, 201, 201]);
    await internal(h).remove(tenant, account.client_id).expect(204);
  });

  test('When ten keys are added at once, then exactly five are kept, the rest refused with the cap, and a JWK with its own kid keeps it', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        internal(h).addKey(tenant, account.client_id, {
          jwk: { ...clientKeyPair('ed25519').publicJwk, kid: `deploy-${i}` },
        }),
      ),
    );
    const credentials = await internal(h).credentials(tenant, account.client_id).expect(200);

    expect(answers.map((a) => a.status).sort()).toEqual([
      201, 201, 201, 201, 201, 409, 409, 409, 409, 409,
    ]);
    expect(answers.filter((a) => a.status === 409).map((a) => a.body.message)).toEqual(
      Array(5).fill('This service account already has the maximum of 5 keys'),
    );
    expect(credentials.body.keys).toHaveLength(5);
    expect(credentials.body.keys[0]).toEqual({
      id: expect.stringMatching(/^deploy-\d$/),
      alg: 'EdDSA',
      thumbprint: expect.any(String),
      created_at: expect.stringMatching(ISO),
      created_by: 'admin@example.test',
      last_used_at: null,
    });
    await internal(h).remove(tenant, account.client_id).expect(204);
  });

  test('When the same key is added twice, then the second is 409 and the account has one key', async () => {
    const keyed = await keyedAccount(h, tenant);

    const again = await internal(h)
      .addKey(tenant, keyed.account.client_id, { pem: keyed.key.publicPem })
      .expect(409);

    expect(again.body).toEqual({
      error: 409,
      message: 'This service account already has this key (or a key with this id)',
    });
    expect((await internal(h).credentials(tenant, keyed.account.client_id)).body.keys).toHaveLength(
      1,
    );
  });

  test("When a key is removed, then it stops working, exactly its tokens are revoked (its credential published, the version kept) and another key's tokens keep working", async () => {
    const keyed = await keyedAccount(h, tenant);
    const spare = clientKeyPair('ec');
    const spareId = (
      await internal(h)
        .addKey(tenant, keyed.account.client_id, { jwk: spare.publicJwk })
        .expect(201)
    ).body.id;
    const before = await assertionGrant(h, tenant, keyed).expect(200);
    const spareBefore = await assertionGrant(h, tenant, {
      account: keyed.account,
      key: spare,
      kid: spareId,
    }).expect(200);

    await internal(h).removeKey(tenant, keyed.account.client_id, keyed.kid).expect(204);
    const removed = await assertionGrant(h, tenant, keyed).expect(401);
    const after = await assertionGrant(h, tenant, {
      account: keyed.account,
      key: spare,
      kid: spareId,
    }).expect(200);

    expect(removed.body.error).toBe('invalid_client');
    expect(decodeJwt(before.body.access_token).payload.cred).toBe(`key:${keyed.kid}`);
    expect(decodeJwt(after.body.access_token).payload.cred).toBe(`key:${spareId}`);
    await eventually(
      () =>
        revocations.events.some(
          (e) =>
            e.sub === keyed.account.client_id &&
            e.version === 1 &&
            Array.isArray(e.credentials) &&
            e.credentials.includes(`key:${keyed.kid}`),
        ),
      'the removal published',
    );
    expect((await verifyToken(h, spareBefore.body.access_token, tenant)).ver).toBe(1);
    expect((await verifyToken(h, after.body.access_token, tenant)).ver).toBe(1);
  });

  test('When a key that does not exist is removed, then 404 and nothing is revoked', async () => {
    const keyed = await keyedAccount(h, tenant);

    const res = await internal(h)
      .removeKey(tenant, keyed.account.client_id, 'no-such-key')
      .expect(404);

    expect(res.body).toEqual({ error: 404, message: 'Key not found' });
    expect(
      (
        await verifyToken(
          h,
          (
            await assertionGrant(h, tenant, keyed).expect(200)
          ).body.access_token,
          tenant,
        )
      ).ver,
    ).toBe(1);
  });

  test('When a key is added, then the account keeps its tokens (nothing revoked) and the key works at once', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const key = clientKeyPair('ec');

    const id = (
      await internal(h).addKey(tenant, account.client_id, { jwk: key.publicJwk }).expect(201)
    ).body.id;
    const res = await assertionGrant(h, tenant, { account, key, kid: id }).expect(200);

    expect((await verifyToken(h, res.body.access_token, tenant)).ver).toBe(1);
  });

  test("When a key issues a token, then its last-used time and the account's are set, and the secret's is not", async () => {
    const keyed = await keyedAccount(h, tenant);

    await assertionGrant(h, tenant, keyed).expect(200);
    await h.service.usage.flush();
    const credentials = (await internal(h).credentials(tenant, keyed.account.client_id).expect(200))
      .body;
    const account = (
      await internal(h)
        .raw.get(`/internal/v1/realms/${tenant}/service-accounts/${keyed.account.client_id}`)
        .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`)
    ).body;

    expect(credentials.keys[0].last_used_at).toMatch(ISO);
    expect(credentials.secret).toEqual({
      created_at: expect.stringMatching(ISO),
      last_used_at: null,
      expires_at: null,
    });
    expect(account.last_used_at).toMatch(ISO);
  });

  test('When openid-client, unmodified, authenticates with PrivateKeyJwt, then it gets a token', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const { privateKey, publicKey } = (await webcrypto.subtle.generateKey(
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      ['sign', 'verify'],
    )) as webcrypto.CryptoKeyPair;
    const jwk = await webcrypto.subtle.exportKey('jwk', publicKey);
    const kid = (
      await internal(h)
        .addKey(tenant, account.client_id, {
          jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
        })
        .expect(201)
    ).body.id;

    const config = await client.discovery(
      new URL(h.issuer(tenant)),
      account.client_id,
      undefined,
      client.PrivateKeyJwt({ key: privateKey, kid }),
      { execute: [client.allowInsecureRequests] },
    );
    const tokens = await client.clientCredentialsGrant(config);
    const again = await client.clientCredentialsGrant(config);

    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain(
      'private_key_jwt',
    );
    expect(await verifyToken(h, tokens.access_token, tenant)).toMatchObject({
      sub: account.client_id,
      scope: 'plants:read',
    });
    expect(again.access_token).not.toBe(tokens.access_token);
  });
});
