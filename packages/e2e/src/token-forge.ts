/**
 * Tokens an attacker would try, for the auth-attack tests: signed with the realm's REAL key
 * (read from the test database and decrypted with the test KEY_ENCRYPTION_KEY, as only an
 * insider could) to prove resource servers check every claim and header and not just the
 * signature; signed with an unrelated key; unsigned (`alg: none`); HMAC'd with the public key.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

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

export { realmSigningKey } from '@plant/test-kit';
