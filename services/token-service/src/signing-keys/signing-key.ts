import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { ExternalSigningKey } from 'oidc-provider';
import { algorithmOf, type SigningAlgorithm } from './signing-keys.js';

/** The key type each algorithm needs (RFC 7518 §3.3, §3.4): anything else is refused at construction. */
const KEY_TYPES: Record<SigningAlgorithm, { type: string; curve?: string }> = {
  RS256: { type: 'rsa' },
  ES256: { type: 'ec', curve: 'prime256v1' },
};

/**
 * A realm's signing key, signing with `node:crypto`. oidc-provider otherwise signs through jose
 * and WebCrypto, whose per-call algorithm normalisation, key checks and encoders cost
 * event-loop time on every token on top of the signature itself (docs/performance.md); the
 * output is the same. oidc-provider builds the header and payload and encodes the result; this
 * class only signs.
 *
 * Both sign on the libuv thread pool, never on the event loop: RS256 (RSASSA-PKCS1-v1_5 with
 * SHA-256) because an RSA-2048 signature is hundreds of µs; ES256 (ECDSA P-256 with SHA-256)
 * because, although one signature is ~20 µs in a loop, signed in place between requests it
 * cost the event loop over twice that in the bench (docs/performance.md), where the pool
 * thread signs back to back. JOSE wants the ECDSA signature as the raw r||s pair (RFC 7518
 * §3.4), not DER: `ieee-p1363`.
 */
export class NodeSigningKey extends ExternalSigningKey {
  /** What `sign` hands node:crypto: the key, with the signature encoding ES256 needs. */
  readonly #signingKey: KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' };
  readonly #publicKey: KeyObject;
  /** The algorithm it signs with (oidc-provider's `alg` is writable; this is not). */
  readonly algorithm: SigningAlgorithm;

  constructor(privateJwk: Record<string, unknown>) {
    super();
    const { kid } = privateJwk;
    if (typeof kid !== 'string' || kid.length === 0)
      throw new TypeError('the signing key has no kid');
    const alg = algorithmOf(privateJwk);
    const privateKey = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
    const wanted = KEY_TYPES[alg];
    if (
      privateKey.asymmetricKeyType !== wanted.type ||
      (wanted.curve !== undefined && privateKey.asymmetricKeyDetails?.namedCurve !== wanted.curve)
    ) {
      throw new TypeError(`the signing key is not a key for ${alg}`);
    }
    this.#publicKey = createPublicKey(privateKey);
    this.#signingKey =
      alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey;
    (this as { kid?: string }).kid = kid;
    (this as { alg?: string }).alg = alg;
    this.algorithm = alg;
  }

  /** What oidc-provider publishes and verifies with: the public half only. */
  override keyObject(): KeyObject {
    return this.#publicKey;
  }

  override sign(data: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      sign('sha256', data, this.#signingKey, (err, signature) =>
        err ? reject(err) : resolve(signature),
      );
    });
  }
}
