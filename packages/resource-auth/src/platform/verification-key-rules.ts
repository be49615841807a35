/**
 * The one rule for any public key a signature is checked with, whoever supplied it (an Account
 * Admin's upload, a trusted issuer's JWKS, a DPoP proof, a realm's JWKS at a resource server):
 * its parameters must keep one check cheap and its cost known in advance.
 *
 * What a check costs depends on the key, not on the token: an RSA check is a modular
 * exponentiation by `e`, so a key whose `e` is thousands of bits long costs milliseconds per
 * check on the event loop (OpenSSL bounds `e` to 64 bits only above 3072-bit moduli), and the
 * cost grows with the modulus. P-384 and P-521 checks cost ten to twenty times a P-256 one in
 * Node's OpenSSL. So only these are accepted:
 *  - RSA (not RSA-PSS-restricted keys) with a modulus of 2048 to 4096 bits and an odd public
 *    exponent from 3 to 2^32 − 1 (65537 in practice; with e = 1 anyone could forge a
 *    signature, and an even e is no RSA key);
 *  - EC on P-256;
 *  - Ed25519.
 */
import type { KeyObject } from 'node:crypto';

export const MIN_RSA_BITS = 2048;
/** RSA-4096 is the largest key in common use; a check against it costs about twice an RSA-2048 one. */
export const MAX_RSA_BITS = 4096;
/** The largest RSA public exponent accepted (2^32 − 1): bounds the exponentiation of a check to 32 squarings. */
export const MAX_RSA_EXPONENT = 2n ** 32n - 1n;
/** What a key may be, in words an Account Admin reads in an error. */
export const SUPPORTED_VERIFICATION_KEYS = 'use RSA (2048 to 4096 bits), EC P-256 or Ed25519';

/** Why signatures must not be checked with `key` (its check would cost too much, or prove nothing), or undefined when it may be. */
export function verificationKeyProblem(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'rsa': {
      const bits = details?.modulusLength ?? 0;
      if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS)
        return `RSA keys must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits (this one has ${bits})`;
      const e = details?.publicExponent ?? 0n;
      if (e < 3n || e > MAX_RSA_EXPONENT || e % 2n === 0n)
        return 'The RSA public exponent (e) must be odd and from 3 to 2^32 - 1 (65537 in practice)';
      return undefined;
    }
    case 'ec':
      return details?.namedCurve === 'prime256v1'
        ? undefined
        : `This key type is not supported; ${SUPPORTED_VERIFICATION_KEYS}`;
    case 'ed25519':
      return undefined;
    default:
      return `This key type is not supported; ${SUPPORTED_VERIFICATION_KEYS}`;
  }
}
