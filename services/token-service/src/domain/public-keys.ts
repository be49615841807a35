import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { algFits } from './jws.js';
import { InvalidPublicKey } from './errors.js';

/** A service account's public key as it is stored: normalised public JWK, its id and algorithm. */
export interface ImportedPublicKey {
  id: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  thumbprint: string;
}

export const MIN_RSA_BITS = 2048;
/** Above this an RSA check costs milliseconds per grant for no gain. */
export const MAX_RSA_BITS = 8192;
const KEY_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const DEFAULT_ALG: Record<string, string> = { rsa: 'RS256', ec: 'ES256', ed25519: 'EdDSA' };
/** RFC 7638 §3.2: the required members of each key type, in lexicographic order. */
export const THUMBPRINT_MEMBERS: Record<string, string[]> = { RSA: ['e', 'kty', 'n'], EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'] };
const SUPPORTED = 'use RSA (2048 bits or more), EC P-256 or Ed25519';

/** RFC 7638 JWK thumbprint (SHA-256, base64url). */
export function thumbprintOf(jwk: Record<string, unknown>): string {
  const members = THUMBPRINT_MEMBERS[String(jwk.kty)] ?? [];
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

function fromJwk(jwk: Record<string, unknown>): KeyObject {
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new InvalidPublicKey('This JWK holds private or symmetric key material; add the public key only');
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new InvalidPublicKey('jwk.use must be "sig"');
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new InvalidPublicKey(`jwk is not a valid public key; ${SUPPORTED}`);
  }
}

function fromPem(pem: string): KeyObject {
  // A private key would be accepted by createPublicKey (it derives the public half): refuse it instead of quietly keeping nothing of it.
  if (/PRIVATE KEY/.test(pem)) throw new InvalidPublicKey('This PEM holds a private key; add the public key only');
  if (!/^\s*-----BEGIN (RSA )?PUBLIC KEY-----[\s\S]+-----END (RSA )?PUBLIC KEY-----\s*$/.test(pem)) {
    throw new InvalidPublicKey('pem must be one "-----BEGIN PUBLIC KEY-----" block');
  }
  try {
    return createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new InvalidPublicKey(`pem is not a valid public key; ${SUPPORTED}`);
  }
}

function assertSupported(key: KeyObject): void {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS) throw new InvalidPublicKey(`RSA keys must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits (this one has ${bits})`);
    return;
  }
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return;
  if (type === 'ed25519') return;
  throw new InvalidPublicKey(`This key type is not supported; ${SUPPORTED}`);
}

/**
 * A key an Account Admin uploads, as a JWK or a PEM (SPKI or PKCS#1): public only, of a
 * supported type and size. Its id is the JWK's `kid` when it has one (what a client library
 * puts in the assertion header), else its thumbprint; its algorithm the JWK's `alg` when it
 * names one that fits, else the type's usual one (RS256, ES256, EdDSA).
 */
export function importPublicKey(input: { jwk?: Record<string, unknown> | undefined; pem?: string | undefined }): ImportedPublicKey {
  const jwk = input.jwk;
  const key = jwk !== undefined ? fromJwk(jwk) : fromPem(input.pem ?? '');
  assertSupported(key);
  const publicJwk = key.export({ format: 'jwk' }) as Record<string, unknown>;
  const thumbprint = thumbprintOf(publicJwk);
  const alg = jwk?.alg ?? DEFAULT_ALG[key.asymmetricKeyType!]!;
  if (!algFits(alg, key)) throw new InvalidPublicKey(`jwk.alg ${JSON.stringify(alg)} does not fit this key`);
  const kid = jwk?.kid;
  if (kid !== undefined && (typeof kid !== 'string' || !KEY_ID.test(kid))) throw new InvalidPublicKey('jwk.kid must be 1-128 characters of A-Z, a-z, 0-9, ".", "_", "~", "-"');
  return { id: kid ?? thumbprint, alg: alg as string, publicJwk, thumbprint };
}

const keyObjects = new WeakMap<object, KeyObject>();

/** The KeyObject of a stored public JWK, built once per row object (rows stay the same until the account changes). */
export function keyObjectOf(row: { public_jwk: Record<string, unknown> }): KeyObject {
  let key = keyObjects.get(row);
  if (key === undefined) {
    key = createPublicKey({ key: row.public_jwk as JsonWebKey, format: 'jwk' });
    keyObjects.set(row, key);
  }
  return key;
}
