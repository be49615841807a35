import type {
  NoPointLeft,
  SignInCounter,
  SignInFailureRepository,
  TakenPoint,
} from './sign-in-failure-repository.js';
import { addressKey } from '@plant/shared/security';
import type { ClientSecretDigester } from '../credentials/index.js';

/** The points a sign-in attempt holds: spent if its password is wrong, returned otherwise. */
export interface SignInReservation {
  readonly source: string;
  readonly points: readonly TakenPoint[];
}

export type Refusal = NoPointLeft;

export const isRefusal = (held: SignInReservation | Refusal): held is Refusal =>
  'retryAfterSeconds' in held;

/**
 * The failed-sign-in budget. Every attempt takes one point from each counter BEFORE its
 * password is hashed (a counter read before the hash and written after it lets a whole burst
 * through), in this order:
 *  1. per source address (IPv6 by its /64): a source spraying accounts is stopped, and a
 *     stopped source costs nothing further (no query, no other counter);
 *  2. per (account, source): a guessing source is stopped for that account;
 *  3. per account, all sources (10x the per-source limit), against distributed guessing
 *     (passwords, unlike client secrets, are guessable; this can slow the owner during an attack).
 * A counter with no point left refuses, and the points taken before it are given back, so only
 * checks that happen are counted (one source's burst cannot spend the account's shared budget).
 * A wrong password keeps its points; a right one clears its (account, source) counter and gives
 * the others back; an attempt that is not checked gives every point back.
 *
 * An account is counted under a keyed digest of its realm and email (HMAC under
 * SECRET_PEPPER), never the email: the counters' keys are readable by whoever reads Redis, and
 * the digest still names one account in one realm. Keyed, so a list of emails cannot be
 * hashed and matched against the keys.
 */
export class SignInThrottle {
  constructor(
    private readonly counters: SignInFailureRepository,
    private readonly secrets: Pick<ClientSecretDigester, 'digest'>,
  ) {}

  /** The source's point: first, before the account is even looked up. */
  async reserveSource(ip: string): Promise<SignInReservation | Refusal> {
    const source = addressKey(ip);
    return this.#take({ source, points: [] }, [['ip', source]]);
  }

  /** Then the account's points (`accountKey`: the account as the user store matches emails). */
  reserveAccount(
    held: SignInReservation,
    tenant: string,
    accountKey: string,
  ): Promise<SignInReservation | Refusal> {
    // A NUL separates what no tenant name or email holds: one (realm, email) pair, one digest.
    const account = this.secrets.digest(`sign-in-throttle\u0000${tenant}\u0000${accountKey}`);
    // Tenant names and address keys hold no `|`, and the digest is hex.
    return this.#take(held, [
      ['accountIp', `${tenant}|${held.source}|${account}`],
      ['account', `${tenant}|${account}`],
    ]);
  }

  /** The password was not checked: every point goes back. */
  async release(held: SignInReservation): Promise<void> {
    await Promise.all(held.points.map((point) => this.counters.giveBack(point)));
  }

  /** The right password: this source's failures on the account are forgotten, the other points go back. */
  async succeeded(held: SignInReservation): Promise<void> {
    await Promise.all(
      held.points.map((point) =>
        point.counter === 'accountIp' ? this.counters.clear(point) : this.counters.giveBack(point),
      ),
    );
  }

  async #take(
    held: SignInReservation,
    wanted: Array<[SignInCounter, string]>,
  ): Promise<SignInReservation | Refusal> {
    const points = [...held.points];
    for (const [counter, key] of wanted) {
      const taken = await this.counters.take(counter, key);
      if ('retryAfterSeconds' in taken) {
        await this.release({ source: held.source, points });
        return taken;
      }
      points.push(taken);
    }
    return { source: held.source, points };
  }
}
