/**
 * Server-provided nonces (RFC 9449 §8): a nonce is an HMAC of the current time step under the
 * resource server's nonce key, so every replica holding the key issues and accepts the same
 * nonces with no shared state. A nonce is accepted during its own step and the next (60 to
 * 120 s); a proof carrying an older one, or none, is answered 401 `use_dpop_nonce` with a fresh
 * one in `DPoP-Nonce`, and a success whose proof carried the previous step's nonce carries the
 * current one, so a busy client never has to be refused to learn it.
 *
 * Keys rotate like cookie keys: the first issues, every one verifies (so replicas can be given
 * a new key before it becomes the first).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const NONCE_STEP_SEC = 60;

export type NonceVerdict = 'current' | 'previous' | 'invalid';

export class DpopNonces {
  readonly #keys: readonly Buffer[];
  readonly #now: () => number;
  /** The current step's nonce, computed once per step (every request asks for it). */
  #cached: { step: number; nonce: string } | undefined;

  constructor(keys: readonly string[], now: () => number = Date.now) {
    if (keys.length === 0) throw new Error('DpopNonces needs at least one key');
    this.#keys = keys.map((key) => Buffer.from(key, 'utf8'));
    this.#now = now;
  }

  /** The nonce to hand out now. */
  current(): string {
    const step = this.#step();
    if (this.#cached?.step !== step)
      this.#cached = { step, nonce: this.#nonce(this.#keys[0]!, step) };
    return this.#cached.nonce;
  }

  /** Whether a proof's nonce is this step's, the previous step's (still good, but hand out the current one), or neither. */
  check(nonce: string | undefined): NonceVerdict {
    if (nonce === undefined) return 'invalid';
    const step = this.#step();
    if (this.#matches(nonce, step)) return 'current';
    return this.#matches(nonce, step - 1) ? 'previous' : 'invalid';
  }

  #step(): number {
    return Math.floor(this.#now() / 1000 / NONCE_STEP_SEC);
  }

  #nonce(key: Buffer, step: number): string {
    return createHmac('sha256', key).update(`dpop-nonce:${step}`).digest('base64url');
  }

  #matches(nonce: string, step: number): boolean {
    const given = Buffer.from(nonce);
    let match = false;
    // Every key compared, none skipped after a match: the time says nothing about which one.
    for (const key of this.#keys) {
      const expected = Buffer.from(this.#nonce(key, step));
      if (expected.length === given.length && timingSafeEqual(expected, given)) match = true;
    }
    return match;
  }
}
