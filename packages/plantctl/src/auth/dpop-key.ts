/**
 * plantctl's own DPoP key (RFC 9449) and the proofs it signs. The key is an ES256 pair made at
 * login and kept as a private JWK in the profile's `dpop-key.json` (0600); every token request
 * and every API call with a DPoP-bound access token carries a fresh proof (new `jti`, `iat`
 * now, `htm`/`htu` of that request, `ath` when an access token rides along, the server's nonce
 * when it asked for one).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import { readJsonFile, writePrivateFile } from '../config-dir.js';
import { CliError, EXIT } from '../exit-codes.js';

const ALG = 'ES256';

export class DpopKey {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
  ) {}

  /** A new key pair, written to `path` (0600) before it is used. */
  static async create(path: string): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    await writePrivateFile(path, `${JSON.stringify({ ...privateJwk, alg: ALG }, null, 2)}\n`);
    return new DpopKey(privateKey, publicOnly(await exportJWK(publicKey)));
  }

  /** The key at `path`; exit 3 when it is gone (a tokens file alone cannot be used). */
  static async load(path: string): Promise<DpopKey> {
    const jwk = await readJsonFile<JWK>(path);
    if (jwk?.d === undefined)
      throw new CliError(
        'The sign-in key is missing (the tokens cannot be used without it): run plantctl login',
        EXIT.signInNeeded,
      );
    const privateKey = (await importJWK(jwk, ALG)) as CryptoKey;
    return new DpopKey(privateKey, publicOnly(jwk));
  }

  /** The RFC 7638 thumbprint, sent as `dpop_jkt` so an authorization code is bound to the key too. */
  thumbprint(): Promise<string> {
    return calculateJwkThumbprint(this.publicJwk, 'sha256');
  }

  /** A proof for one request (RFC 9449 §4.2). */
  proof(
    method: string,
    url: string,
    { accessToken, nonce }: { accessToken?: string; nonce?: string } = {},
  ): Promise<string> {
    const target = new URL(url);
    // htu is the URI without query and fragment (§4.2).
    const htu = `${target.origin}${target.pathname}`;
    return new SignJWT({
      htm: method.toUpperCase(),
      htu,
      jti: randomUUID(),
      ...(accessToken === undefined ? {} : { ath: sha256(accessToken) }),
      ...(nonce === undefined ? {} : { nonce }),
    })
      .setProtectedHeader({ alg: ALG, typ: 'dpop+jwt', jwk: this.publicJwk })
      .setIssuedAt()
      .sign(this.privateKey);
  }
}

function publicOnly({ kty, crv, x, y }: JWK): JWK {
  return { kty, crv, x, y } as JWK;
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
