/**
 * The test issuer's keys (test-issuer.ts): RSA-2048 for RS256, P-256 for ES256, and the JWS
 * signatures it makes with them, correct ones and the malformed ones hostile tests need.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { signInput } from './jwt-signing.js';

/** What a realm of the test issuer signs with (the platform's algorithms). */
export type IssuerAlgorithm = 'RS256' | 'ES256';

export interface IssuerKey {
  kid: string;
  alg: IssuerAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export function newIssuerKey(alg: IssuerAlgorithm = 'RS256'): IssuerKey {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid: randomUUID(), alg, privateKey, publicKey };
}

/** The JWKS entry of a key, as the token service publishes it. */
export function publicJwkOf({ kid, alg, publicKey }: IssuerKey): Record<string, unknown> {
  return { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg };
}

/** `<signingInput>.<signature>` with an issuer key (its algorithm's signature; `der`: the DER form JOSE refuses). */
export function signIssuerJws(
  signingInput: string,
  key: Pick<IssuerKey, 'privateKey' | 'alg'>,
  options: { der?: boolean } = {},
): string {
  return signInput(signingInput, key.privateKey, key.alg, options);
}
