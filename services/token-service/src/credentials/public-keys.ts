import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { SUPPORTED_VERIFICATION_KEYS, verificationKeyProblem } from '@plant/shared/security';
import { algFits } from '../client-auth/index.js';
import { InvalidPublicKey } from '../platform/index.js';

/** A service account's public key as it is stored: normalised public JWK, its id and algorithm. */
export interface ImportedPublicKey {
  id: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  thumbprint: string;
}

const KEY_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const DEFAULT_ALG: Record<string, string> = { rsa: 'RS256', ec: 'ES256', ed25519: 'EdDSA' };
/** RFC 7638 §3.2: the required members of each key type, in lexicographic order. */
export const THUMBPRINT_MEMBERS: Record<string, string[]> = {
  RSA: ['e', 'kty', 'n'],
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
};

/** RFC 7638 JWK thumbprint (SHA-256, base64url). */
export function thumbprintOf(jwk: Record<string, unknown>): string {
  const members = THUMBPRINT_MEMBERS[String(jwk.kty)] ?? [];
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

function fromJwk(jwk: Record<string, unknown>): KeyObject {
  if (PRIVATE_MEMBERS.some((m) => m in jwk))
    throw new InvalidPublicKey(
      'This JWK holds private or symmetric key material; add the public key only',
    );
  if (jwk.use !== undefined && jwk.use !== 'sig')
    throw new InvalidPublicKey('jwk.use must be "sig"');
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new InvalidPublicKey(`jwk is not a valid public key; ${SUPPORTED_VERIFICATION_KEYS}`);
  }
}

function fromPem(pem: string): KeyObject {
  // A private key would be accepted by createPublicKey (it derives the public half): refuse it instead of quietly keeping nothing of it.
  if (/PRIVATE KEY/.test(pem))
    throw new InvalidPublicKey('This PEM holds a private key; add the public key only');
  if (
    !/^\s*-----BEGIN (RSA )?PUBLIC KEY-----[\s\S]+-----END (RSA )?PUBLIC KEY-----\s*$/.test(pem)
  ) {
    throw new InvalidPublicKey('pem must be one "-----BEGIN PUBLIC KEY-----" block');
  }
  try {
    return createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new InvalidPublicKey(`pem is not a valid public key; ${SUPPORTED_VERIFICATION_KEYS}`);
  }
}

/** The shared rule (`verificationKeyProblem`): a key whose checks would cost too much is refused here, before it is stored. */
function assertSupported(key: KeyObject): void {
  const problem = verificationKeyProblem(key);
  if (problem !== undefined) throw new InvalidPublicKey(problem);
}

/**
 * A key an Account Admin uploads, as a JWK or a PEM (SPKI or PKCS#1): public only, of a
 * supported type and size. Its id is the JWK's `kid` when it has one (what a client library
 * puts in the assertion header), else its thumbprint; its algorithm the JWK's `alg` when it
 * names one that fits, else the type's usual one (RS256, ES256, EdDSA).
 */
export function importPublicKey(input: {
  jwk?: Record<string, unknown> | undefined;
  pem?: string | undefined;
}): ImportedPublicKey {
  const jwk = input.jwk;
  const key = jwk !== undefined ? fromJwk(jwk) : fromPem(input.pem ?? '');
  assertSupported(key);
  const publicJwk = key.export({ format: 'jwk' }) as Record<string, unknown>;
  const thumbprint = thumbprintOf(publicJwk);
  const alg = jwk?.alg ?? DEFAULT_ALG[key.asymmetricKeyType!]!;
  if (!algFits(alg, key))
    throw new InvalidPublicKey(`jwk.alg ${JSON.stringify(alg)} does not fit this key`);
  const kid = jwk?.kid;
  if (kid !== undefined && (typeof kid !== 'string' || !KEY_ID.test(kid)))
    throw new InvalidPublicKey(
      'jwk.kid must be 1-128 characters of A-Z, a-z, 0-9, ".", "_", "~", "-"',
    );
  return { id: kid ?? thumbprint, alg: alg as string, publicJwk, thumbprint };
}

/** A stored key, ready to check with; `object` undefined when the key fails today's rule (stored before it), so it is never tried. */
export interface StoredKeyObject {
  object: KeyObject | undefined;
  /** Why it is not tried (the assertion verifier logs it once per key and process). */
  problem: string | undefined;
}

const keyObjects = new WeakMap<object, StoredKeyObject>();

/**
 * The KeyObject of a stored public JWK, built once per row object (rows stay the same until the
 * account changes). A key stored before the rule tightened (an 8192-bit modulus, a huge `e`)
 * keeps its row but gets no object: it would otherwise cost its full price at every grant.
 */
export function keyObjectOf(row: { public_jwk: Record<string, unknown> }): StoredKeyObject {
  let stored = keyObjects.get(row);
  if (stored === undefined) {
    let object: KeyObject | undefined;
    let problem: string | undefined;
    try {
      object = createPublicKey({ key: row.public_jwk as JsonWebKey, format: 'jwk' });
      problem = verificationKeyProblem(object);
    } catch {
      problem = 'the stored JWK is not a valid public key';
    }
    stored = problem === undefined ? { object, problem } : { object: undefined, problem };
    keyObjects.set(row, stored);
  }
  return stored;
}
