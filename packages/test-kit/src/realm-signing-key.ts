/**
 * The realm's active signing key, as only an insider could have it: read from the test database
 * and decrypted with the test KEY_ENCRYPTION_KEY. Tests sign tokens with it that differ from a
 * real one in a single claim, so a refusal is for that claim and not for the signature.
 */
import { createDecipheriv, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { createDatabase } from '@plant/shared/db';

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
