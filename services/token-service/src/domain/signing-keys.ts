import { createHash, generateKeyPair, type JsonWebKey } from 'node:crypto';
import { promisify } from 'node:util';
import type { KeyEncryption } from './key-encryption.js';

const generate = promisify(generateKeyPair);

export interface NewSigningKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKeyEncrypted: Buffer;
}

/** RFC 7638 thumbprint: a kid derived from the key itself. */
function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n });
  return createHash('sha256').update(canonical).digest('base64url');
}

/** A fresh RSA-2048 key for RS256; the private JWK leaves this function only encrypted. */
export async function createSigningKey(encryption: KeyEncryption): Promise<NewSigningKey> {
  const { publicKey, privateKey } = await generate('rsa', { modulusLength: 2048 });
  const publicJwk = publicKey.export({ format: 'jwk' });
  const kid = thumbprint(publicJwk);
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
  return {
    kid,
    publicJwk: { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, alg: 'RS256', use: 'sig' },
    privateKeyEncrypted: encryption.encrypt(JSON.stringify(privateJwk), kid),
  };
}

export function decryptSigningKey(encryption: KeyEncryption, kid: string, sealed: Buffer): Record<string, unknown> {
  return JSON.parse(encryption.decrypt(sealed, kid)) as Record<string, unknown>;
}
