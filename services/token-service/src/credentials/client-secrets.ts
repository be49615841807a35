import { createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Service-account secrets: `pss_` + base62(32 CSPRNG bytes, 43 chars) + base62 checksum
 * (6 chars of SHA-256 of the body). The prefix and checksum let secret scanners recognise
 * a leaked secret without a call to us; the checksum also rejects typos without a lookup.
 * Only HMAC-SHA-256(pepper, secret) is stored: the secret carries 256 random bits, so a
 * fast keyed hash is sound, and a slow password hash would cap token throughput.
 */
export const SECRET_PREFIX = 'pss_';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_SHAPE = new RegExp(`^${SECRET_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(bytes: Buffer, length: number): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(length, '0').slice(-length);
}

function checksumOf(body: string): string {
  return base62(createHash('sha256').update(body).digest().subarray(0, 5), CHECKSUM_LENGTH);
}

export function generateClientSecret(): string {
  const body = base62(randomBytes(32), BODY_LENGTH);
  return `${SECRET_PREFIX}${body}${checksumOf(body)}`;
}

/** True when the value has our prefix, shape and a matching checksum (what a secret scanner checks; the grant path compares digests only). */
export function isWellFormedClientSecret(value: string): boolean {
  if (!SECRET_SHAPE.test(value)) return false;
  const rest = value.slice(SECRET_PREFIX.length);
  const body = rest.slice(0, BODY_LENGTH);
  return checksumOf(body) === rest.slice(BODY_LENGTH);
}

/** Digests of client secrets under the pepper, the one key that makes them: `SECRET_PEPPER`. */
export interface ClientSecretDigester {
  /** HMAC-SHA-256(pepper, secret), hex: what is stored. */
  digest(secret: string): string;
  /**
   * Constant-time comparison of a presented secret with a stored digest. Whatever is
   * presented costs one HMAC and one fixed-length comparison; only a digest match, which
   * means the very secret we issued, passes (no shape check needed).
   */
  matches(presented: string, storedDigest: string): boolean;
}

export function createClientSecretDigester(pepper: string): ClientSecretDigester {
  // Imported once: every grant computes an HMAC with it.
  const key = createSecretKey(Buffer.from(pepper, 'utf8'));
  const hmacOf = (secret: string) => createHmac('sha256', key).update(secret, 'utf8').digest();
  return {
    digest: (secret) => hmacOf(secret).toString('hex'),
    matches(presented, storedDigest) {
      const expected = Buffer.from(storedDigest, 'hex');
      const actual = hmacOf(presented);
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    },
  };
}
