/**
 * Recovery codes: ten single-use codes shown once, for a person whose authenticator is lost.
 * Each is 60 bits from the CSPRNG in base32 (no 0/1/8/9 to confuse with letters), grouped for
 * reading (`abcd-efgh-ijkl`). Only a keyed digest is stored (HMAC under SECRET_PEPPER, bound
 * to the person): the codes are random, so a fast keyed hash is sound, and a stolen table
 * cannot be checked against guesses without the pepper.
 */
import { randomBytes } from 'node:crypto';
import type { ClientSecretDigester } from '../credentials/index.js';

export const RECOVERY_CODES_PER_SET = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const CODE_LENGTH = 12;

function newCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  // 256 is a multiple of 32: each byte's low five bits are uniform.
  const letters = [...bytes].map((b) => ALPHABET[b & 31]).join('');
  return `${letters.slice(0, 4)}-${letters.slice(4, 8)}-${letters.slice(8)}`;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES_PER_SET }, newCode);
}

/** A code as typed (any case, with or without hyphens and spaces); undefined when it cannot be one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.toLowerCase().replace(/[\s-]+/g, '');
  return code.length === CODE_LENGTH && [...code].every((c) => ALPHABET.includes(c))
    ? code
    : undefined;
}

/** The stored digest of a (normalized) code of one person. */
export function recoveryCodeDigest(
  secrets: Pick<ClientSecretDigester, 'digest'>,
  sub: string,
  code: string,
): string {
  return secrets.digest(`recovery-code\u0000${sub}\u0000${code.replace(/-/g, '')}`);
}
