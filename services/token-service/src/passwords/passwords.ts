import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Longest password read (longer is cut: a scrypt input of any size costs the same). */
export const PASSWORD_MAX = 1024;

/** scrypt (memory-hard): N=2^15, r=8, p=1 uses 32 MiB per hash. Stored as `scrypt$N$r$p$salt$hash`. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const MAX_MEM = 64 * 1024 * 1024;

/** A scrypt derivation: on libuv's thread pool by default, or on the password checkers' threads. */
export type DeriveKey = (
  password: string,
  salt: Buffer,
  keyLength: number,
  options: ScryptOptions,
) => Promise<Buffer>;

const deriveOnThreadPool: DeriveKey = (password, salt, keyLength, options) =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

function derive(
  password: string,
  salt: Buffer,
  options: ScryptOptions,
  deriveKey: DeriveKey,
): Promise<Buffer> {
  return deriveKey(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEM });
}

export async function hashPassword(
  password: string,
  deriveKey: DeriveKey = deriveOnThreadPool,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS, deriveKey);
  return [
    'scrypt',
    PARAMS.N,
    PARAMS.r,
    PARAMS.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/** The stored hash's scheme, parameters and salt, or undefined when it is none of ours. */
function parseHash(stored: string) {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return undefined;
  return {
    options: { N: Number(n), r: Number(r), p: Number(p) },
    salt: Buffer.from(salt, 'base64url'),
    expected: Buffer.from(hash, 'base64url'),
  };
}

export async function verifyPassword(
  password: string,
  stored: string,
  deriveKey: DeriveKey = deriveOnThreadPool,
): Promise<boolean> {
  const parsed = parseHash(stored);
  if (parsed === undefined) return false;
  const actual = await derive(password, parsed.salt, parsed.options, deriveKey);
  return actual.length === parsed.expected.length && timingSafeEqual(actual, parsed.expected);
}

/**
 * What an unknown email is checked against: the parameters of a real hash with a random salt and
 * key, so the check costs what a user's does (no timing tells which emails exist) and no
 * password can match it. Built without deriving anything, so the first unknown email costs no
 * more than the next.
 */
export const DUMMY_PASSWORD_HASH = [
  'scrypt',
  PARAMS.N,
  PARAMS.r,
  PARAMS.p,
  randomBytes(16).toString('base64url'),
  randomBytes(KEY_LENGTH).toString('base64url'),
].join('$');
