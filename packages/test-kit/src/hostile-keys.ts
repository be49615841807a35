/**
 * Public keys whose signature checks would cost too much, or prove nothing: what an attacker
 * uploads as an Account Admin, or publishes as a trusted issuer. Each is a key node:crypto
 * imports without complaint, so only the key rule (`verificationKeyProblem`) stands between it
 * and a verification. RSA moduli are random odd numbers of the right length: importing a
 * public key never checks that it has two prime factors, and generating an 8192-bit key pair
 * would cost a test seconds.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

type Jwk = Record<string, unknown>;

/** A random odd number of exactly `bits` bits, base64url: an RSA modulus as far as an import can tell. */
function modulus(bits: number): string {
  const n = randomBytes(bits / 8);
  n[0]! |= 0x80;
  n[n.length - 1]! |= 1;
  return n.toString('base64url');
}

/** A big-endian unsigned integer of `bytes` bytes, all bits set but the top one (odd), base64url. */
function hugeExponent(bytes: number): string {
  const e = Buffer.alloc(bytes, 0xff);
  e[0] = 0x7f;
  return e.toString('base64url');
}

/** An RSA public JWK with a 2048-bit modulus (unless given) and exponent `e` (base64url). */
export function rsaJwk(e = 'AQAB', bits = 2048): Jwk {
  return { kty: 'RSA', n: modulus(bits), e };
}

/** Named hostile keys as public JWKs, and the message the token service answers when one is uploaded. */
export function hostileKeys(): Array<[name: string, jwk: Jwk, refusal: string]> {
  const exponent =
    'The RSA public exponent (e) must be odd and from 3 to 2^32 - 1 (65537 in practice)';
  const unsupported =
    'This key type is not supported; use RSA (2048 to 4096 bits), EC P-256 or Ed25519';
  const publicJwk = (key: { publicKey: { export(o: { format: 'jwk' }): unknown } }) =>
    key.publicKey.export({ format: 'jwk' }) as Jwk;
  return [
    ['an RSA key whose e has 2047 bits', rsaJwk(hugeExponent(256)), exponent],
    [
      'an RSA key whose e has 4095 bits (longer than its modulus)',
      rsaJwk(hugeExponent(512)),
      exponent,
    ],
    [
      'an RSA key whose e is 2^32 + 1',
      rsaJwk(Buffer.from([1, 0, 0, 0, 1]).toString('base64url')),
      exponent,
    ],
    [
      'an RSA key whose e is even (65536)',
      rsaJwk(Buffer.from([1, 0, 0]).toString('base64url')),
      exponent,
    ],
    ['an RSA key whose e is 1 (every signature forgeable)', rsaJwk('AQ'), exponent],
    [
      'an RSA key of 8192 bits',
      rsaJwk('AQAB', 8192),
      'RSA keys must have 2048 to 4096 bits (this one has 8192)',
    ],
    [
      'an RSA key of 4104 bits',
      rsaJwk('AQAB', 4104),
      'RSA keys must have 2048 to 4096 bits (this one has 4104)',
    ],
    [
      'an EC key on P-384',
      publicJwk(generateKeyPairSync('ec', { namedCurve: 'P-384' })),
      unsupported,
    ],
    [
      'an EC key on P-521',
      publicJwk(generateKeyPairSync('ec', { namedCurve: 'P-521' })),
      unsupported,
    ],
    [
      'an EC key on secp256k1',
      publicJwk(generateKeyPairSync('ec', { namedCurve: 'secp256k1' })),
      unsupported,
    ],
    ['an Ed448 key', publicJwk(generateKeyPairSync('ed448')), unsupported],
  ];
}
