import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { DEFAULT_SIGNING_ALGORITHM, isSigningAlgorithm, type SigningAlgorithm } from '@plant/shared';
import type { KeyEncryption } from './key-encryption.js';
import { THUMBPRINT_MEMBERS, thumbprintOf } from './public-keys.js';

export { DEFAULT_SIGNING_ALGORITHM, SIGNING_ALGORITHMS, type SigningAlgorithm } from '@plant/shared';

const generate = promisify(generateKeyPair);

export interface NewSigningKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKeyEncrypted: Buffer;
}

function generateFor(alg: SigningAlgorithm) {
  return alg === 'ES256' ? generate('ec', { namedCurve: 'P-256' }) : generate('rsa', { modulusLength: 2048 });
}

/**
 * A fresh key for `alg`: RSA-2048 for RS256, P-256 for ES256. The private JWK leaves this
 * function only encrypted; the public JWK names its `alg`, which resource servers pin the key to.
 */
export async function createSigningKey(encryption: KeyEncryption, alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM): Promise<NewSigningKey> {
  const { publicKey, privateKey } = await generateFor(alg);
  const publicJwk = publicKey.export({ format: 'jwk' });
  const kid = thumbprintOf(publicJwk as Record<string, unknown>);
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  // The public JWK is its thumbprint's members (RFC 7638), nothing else of the export.
  const members = Object.fromEntries(THUMBPRINT_MEMBERS[publicJwk.kty!]!.map((member) => [member, (publicJwk as Record<string, unknown>)[member]]));
  return {
    kid,
    publicJwk: { ...members, kid, alg, use: 'sig' },
    privateKeyEncrypted: encryption.encrypt(JSON.stringify(privateJwk), kid),
  };
}

/**
 * The algorithm a stored key signs with. Keys written before realms had a choice carry
 * `alg: RS256` as well, so a key without a known `alg` is an error, never a guess.
 */
export function algorithmOf(jwk: Record<string, unknown>): SigningAlgorithm {
  if (!isSigningAlgorithm(jwk.alg)) throw new TypeError(`signing key ${String(jwk.kid)} has no supported alg`);
  return jwk.alg;
}

export function decryptSigningKey(encryption: KeyEncryption, kid: string, sealed: Buffer): Record<string, unknown> {
  return JSON.parse(encryption.decrypt(sealed, kid)) as Record<string, unknown>;
}
