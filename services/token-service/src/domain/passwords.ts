import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt (memory-hard): N=2^15, r=8, p=1 uses 32 MiB per hash. Stored as `scrypt$N$r$p$salt$hash`. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const MAX_MEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEM }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * What an unknown email is checked against: the parameters of a real hash with a random salt and
 * key, so the check costs what a user's does (no timing tells which emails exist) and no
 * password can match it. Built without deriving anything, so the first unknown email costs no
 * more than the next.
 */
export const DUMMY_PASSWORD_HASH = ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, randomBytes(16).toString('base64url'), randomBytes(KEY_LENGTH).toString('base64url')].join('$');

/**
 * How many password checks may run at once in this process. Each holds a libuv thread-pool
 * thread (and 32 MiB) for as long as a hash takes, and that pool also signs every token: a
 * queue of checks would stall token issuance. So a check over the limit is refused, never
 * queued; the bound is the count itself, nothing is kept per caller.
 */
export class PasswordCheckSlots {
  #inUse = 0;

  constructor(readonly size: number) {}

  get full(): boolean {
    return this.#inUse >= this.size;
  }

  /** True when a slot was taken (give it back with `give`). */
  take(): boolean {
    if (this.full) return false;
    this.#inUse += 1;
    return true;
  }

  give(): void {
    this.#inUse = Math.max(0, this.#inUse - 1);
  }
}

/**
 * The slots when not configured: the thread pool's size (UV_THREADPOOL_SIZE, libuv's default 4)
 * less two threads kept for token signing, and at most the cores less one kept for the event
 * loop; at least one.
 */
export function defaultPasswordCheckSlots(threadPoolSize: number, cores: number): number {
  return Math.max(1, Math.min(threadPoolSize - 2, cores - 1));
}
