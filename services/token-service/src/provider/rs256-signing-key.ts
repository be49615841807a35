import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { ExternalSigningKey } from 'oidc-provider';

/** The oidc-provider feature that admits an ExternalSigningKey in `jwks.keys`, and the version we implement. */
export const EXTERNAL_SIGNING = { enabled: true, ack: 'experimental-01' } as const;

/**
 * A realm's RSA key, signing RS256 with `node:crypto` on the libuv thread pool. oidc-provider
 * otherwise signs through jose and WebCrypto, whose per-call algorithm normalisation, key
 * checks and encoders cost event-loop time on every token on top of the RSA operation itself
 * (docs/performance.md); the RSA work and its output are the same (RFC 7515 RS256 =
 * RSASSA-PKCS1-v1_5 with SHA-256). oidc-provider builds the header and payload and encodes the
 * result; this class only signs.
 */
export class Rs256SigningKey extends ExternalSigningKey {
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;

  constructor(privateJwk: Record<string, unknown>) {
    super();
    const { kid } = privateJwk;
    if (typeof kid !== 'string' || kid.length === 0) throw new TypeError('the signing key has no kid');
    this.#privateKey = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
    if (this.#privateKey.asymmetricKeyType !== 'rsa') throw new TypeError('the signing key is not an RSA key');
    this.#publicKey = createPublicKey(this.#privateKey);
    (this as { kid?: string }).kid = kid;
    (this as { alg?: string }).alg = 'RS256';
  }

  /** What oidc-provider publishes and verifies with: the public half only. */
  override keyObject(): KeyObject {
    return this.#publicKey;
  }

  override sign(data: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      sign('sha256', data, this.#privateKey, (err, signature) => (err ? reject(err) : resolve(signature)));
    });
  }
}
