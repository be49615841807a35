/**
 * What a realm's JWKS document may contribute: verification keys, each parsed once into a
 * `KeyObject` and pinned to the one algorithm its JWK declares. A token is checked with its
 * key's algorithm, never with whatever its own header names, so an ES256 token cannot be
 * checked against an RSA key, nor an RS256 token against an EC key (algorithm confusion).
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../platform/realm-names.js';
import type { Logger } from '../platform/logger.js';
import { verificationKeyProblem } from '../platform/verification-key-rules.js';

/** A key and the only algorithm it verifies. */
export interface VerificationKey {
  key: KeyObject;
  alg: SigningAlgorithm;
}

/** A P-256 coordinate is 32 bytes: 43 base64url characters, unpadded (RFC 7518 §6.2.1.2). */
const P256_COORDINATE = /^[A-Za-z0-9_-]{43}$/;

type Jwk = Record<string, unknown>;

/**
 * The usable verification keys of a JWKS document, by kid. Usable: `use` absent or `sig`; an
 * RSA key of at least 2048 bits for RS256, or a P-256 key for ES256; `alg` absent (the one
 * algorithm the key type allows) or exactly that algorithm. Anything else (another curve such
 * as P-384, another algorithm, a coordinate of the wrong length, a point off the curve) is
 * skipped, so a token naming it finds no key: 401, never a 500.
 */
export function parseJwks(
  document: unknown,
  logger: Logger,
  tenant: string,
): Map<string, VerificationKey> {
  const keys = new Map<string, VerificationKey>();
  const list = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('JWKS document has no keys array');
  for (const jwk of list) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const { kid, use } = jwk as Jwk;
    if (typeof kid !== 'string' || kid === '' || (use !== undefined && use !== 'sig')) continue;
    try {
      const parsed = rsaKey(jwk as Jwk) ?? ecKey(jwk as Jwk);
      if (parsed !== undefined) keys.set(kid, parsed);
    } catch {
      logger.warn({ tenant, kid }, 'JWKS entry is not a valid public key');
    }
  }
  return keys;
}

function rsaKey({ kty, alg, n, e }: Jwk): VerificationKey | undefined {
  if (
    kty !== 'RSA' ||
    (alg !== undefined && alg !== 'RS256') ||
    typeof n !== 'string' ||
    typeof e !== 'string'
  )
    return undefined;
  const key = createPublicKey({ key: { kty, n, e }, format: 'jwk' });
  if (verificationKeyProblem(key) !== undefined) return undefined;
  return { key, alg: 'RS256' };
}

function ecKey({ kty, alg, crv, x, y }: Jwk): VerificationKey | undefined {
  if (kty !== 'EC' || crv !== 'P-256' || (alg !== undefined && alg !== 'ES256')) return undefined;
  if (
    typeof x !== 'string' ||
    typeof y !== 'string' ||
    !P256_COORDINATE.test(x) ||
    !P256_COORDINATE.test(y)
  )
    throw new Error('bad P-256 coordinates');
  // OpenSSL refuses a point that is not on the curve here; crv is P-256 (above), so the key is one.
  return { key: createPublicKey({ key: { kty, crv, x, y }, format: 'jwk' }), alg: 'ES256' };
}
