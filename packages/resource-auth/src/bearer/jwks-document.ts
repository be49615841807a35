/** What a realm's JWKS document may contribute: RS256 verification keys, parsed once into `KeyObject`s. */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Logger } from '@plant/shared';

const MIN_RSA_BITS = 2048;

/** The usable RS256 verification keys of a JWKS document, by kid. Unusable entries are skipped. */
export function parseJwks(document: unknown, logger: Logger, tenant: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('JWKS document has no keys array');
  for (const jwk of list) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const { kty, kid, use, alg, n, e } = jwk as Record<string, unknown>;
    if (kty !== 'RSA' || typeof kid !== 'string' || kid === '' || typeof n !== 'string' || typeof e !== 'string') continue;
    if (use !== undefined && use !== 'sig') continue;
    if (alg !== undefined && alg !== 'RS256') continue;
    try {
      const key = createPublicKey({ key: { kty, n, e }, format: 'jwk' });
      if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) continue;
      keys.set(kid, key);
    } catch {
      logger.warn({ tenant, kid }, 'JWKS entry is not a valid RSA public key');
    }
  }
  return keys;
}
