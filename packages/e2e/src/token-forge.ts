/**
 * Tokens an attacker would try, for the auth-attack tests: signed with the realm's REAL key
 * (read from the test database and decrypted with the test KEY_ENCRYPTION_KEY, as only an
 * insider could) to prove resource servers check every claim and header and not just the
 * signature; signed with an unrelated key; unsigned (`alg: none`); HMAC'd with the public key.
 */
import {
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { createDatabase } from '@plant/shared/db';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')),
  };
}

export function signRs256(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject,
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

export function signHs256(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | Buffer,
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export function unsigned(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): string {
  return `${b64url(header)}.${b64url(payload)}.`;
}

export const otherKey = (): KeyObject =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

/** The realm's active private signing key and kid (AES-256-GCM: iv 12 || tag 16 || ciphertext, kid as AAD). */
export async function realmSigningKey(
  databaseUrl: string,
  tenant: string,
  keyEncryptionKey: string,
): Promise<{ kid: string; privateKey: KeyObject; publicPem: string }> {
  const db = createDatabase({ connectionString: databaseUrl, schema: 'auth', poolMax: 1 });
  try {
    const row = (await db('signing_keys')
      .where({ realm: tenant })
      .whereNull('retired_at')
      .first('kid', 'private_key_encrypted')) as { kid: string; private_key_encrypted: Buffer };
    const sealed = row.private_key_encrypted;
    const decipher = createDecipheriv(
      'aes-256-gcm',
      Buffer.from(keyEncryptionKey, 'base64'),
      sealed.subarray(0, 12),
    );
    decipher.setAAD(Buffer.from(row.kid, 'utf8'));
    decipher.setAuthTag(sealed.subarray(12, 28));
    const jwk = JSON.parse(
      Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8'),
    );
    const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
    const publicPem = createPublicKey(privateKey)
      .export({ type: 'spki', format: 'pem' })
      .toString();
    return { kid: row.kid, privateKey, publicPem };
  } finally {
    await db.destroy();
  }
}
