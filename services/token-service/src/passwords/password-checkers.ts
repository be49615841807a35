import { Worker } from 'node:worker_threads';
import { hashPassword, verifyPassword, type DeriveKey } from './passwords.js';

/**
 * A checker thread: derives one scrypt key per message. Evaluated source (CommonJS), so the
 * same code runs from `dist/` and from the sources under test. It lowers its own priority
 * first: on Linux a thread's nice value is its own, so the rest of the process keeps its share.
 */
const CHECKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
// Elsewhere the call would lower the whole process: there the checker keeps the normal priority.
if (process.platform === 'linux') try { require('node:os').setPriority(workerData.niceness); } catch {}
parentPort.on('message', ({ password, salt, keyLength, options }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, salt, keyLength, options) });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message) });
  }
});
`;

/**
 * The nice value of the checker threads, the lowest priority: a check runs on CPU that token
 * issuance and the rest of the process leave idle. While the CPU is saturated a check can
 * take long; the other sign-ins meanwhile get 429, and grants keep their share.
 */
const CHECKER_NICENESS = 19;

/** What a person reads when every checker is busy (a check is refused, never queued). */
export const BUSY = 'Too many sign-ins at this moment. Try again in a few seconds.';

interface Checker {
  worker: Worker;
  dead: boolean;
  settle?: (result: { key?: Uint8Array; error?: string }) => void;
}

/**
 * A password checker held for one sign-in from its start: taken synchronously before the
 * sign-in spends anything (a counter, a query), so a burst is refused at its door rather than
 * after its work, and used at most once. Until `release` (or the end of the check it ran) no
 * other caller gets it.
 */
export interface CheckerSlot {
  /** Checks the password on the held thread, then frees it. */
  verify(password: string, stored: string): Promise<boolean>;
  /** Frees the thread unused (the sign-in ended before its check); a second call does nothing. */
  release(): void;
}

/**
 * Where password checks run: `size` threads of their own, never libuv's thread pool, which
 * signs every token (a queue of checks there would stall token issuance), each one check at a
 * time at a low priority. A check asked for while every thread is busy or held is refused,
 * never queued: nothing is kept per caller, and the threads are at most `size`.
 */
export class PasswordCheckers {
  /** Every live thread (at most `size`), and the idle ones among them. */
  readonly #all = new Set<Checker>();
  readonly #idle: Checker[] = [];
  #busy = 0;

  constructor(readonly size: number) {}

  get full(): boolean {
    return this.#busy >= this.size;
  }

  /** A checker held for a check to come; undefined (nothing held) when every one is busy or held. */
  reserve(): CheckerSlot | undefined {
    if (this.full) return undefined;
    this.#busy += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.#busy -= 1;
    };
    return {
      verify: (password, stored) => {
        if (!held) return Promise.reject(new Error('password checker slot already used'));
        return this.#runHeld((derive) => verifyPassword(password, stored, derive)).finally(release);
      },
      release,
    };
  }

  /** The password checked on an idle checker thread; undefined (nothing started) when every one is busy. */
  tryVerify(password: string, stored: string): Promise<boolean> | undefined {
    return this.reserve()?.verify(password, stored);
  }

  /**
   * A new password's hash (an invitation accepted), derived on an idle checker thread under the
   * same bound as checks; undefined (nothing started) when every one is busy.
   */
  tryHash(password: string): Promise<string> | undefined {
    const slot = this.reserve();
    if (slot === undefined) return undefined;
    return this.#runHeld((derive) => hashPassword(password, derive)).finally(slot.release);
  }

  /** Runs `work` on a thread for a slot already counted in `#busy`. */
  #runHeld<T>(work: (derive: DeriveKey) => Promise<T>): Promise<T> {
    const checker = this.#idle.pop() ?? this.#spawn();
    return work((...job) => this.#derive(checker, job)).finally(() => {
      if (!checker.dead) this.#idle.push(checker);
    });
  }

  /** Stops the threads (a check under way fails). */
  async close(): Promise<void> {
    const checkers = [...this.#all];
    this.#all.clear();
    this.#idle.length = 0;
    await Promise.all(checkers.map((c) => c.worker.terminate()));
  }

  #derive(
    checker: Checker,
    [password, salt, keyLength, options]: Parameters<DeriveKey>,
  ): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      checker.settle = ({ key, error }) => {
        checker.settle = undefined;
        if (key !== undefined) resolve(Buffer.from(key.buffer, key.byteOffset, key.byteLength));
        else reject(new Error(error ?? 'password check failed'));
      };
      checker.worker.postMessage({ password, salt, keyLength, options });
    });
  }

  #spawn(): Checker {
    const checker: Checker = {
      worker: new Worker(CHECKER_SOURCE, {
        eval: true,
        workerData: { niceness: CHECKER_NICENESS },
      }),
      dead: false,
    };
    // An idle checker never keeps the process alive.
    checker.worker.unref();
    checker.worker.on('message', (result: { key?: Uint8Array; error?: string }) =>
      checker.settle?.(result),
    );
    const lost = (reason: string) => {
      checker.dead = true;
      this.#all.delete(checker);
      // A thread lost while idle must never be handed a check: it would never answer.
      const idle = this.#idle.indexOf(checker);
      if (idle >= 0) this.#idle.splice(idle, 1);
      checker.settle?.({ error: reason });
    };
    checker.worker.on('error', (err: Error) => lost(err.message));
    checker.worker.on('exit', () => lost('password checker exited'));
    this.#all.add(checker);
    return checker;
  }
}

/** The checker threads when not configured: one core kept for the event loop (and for signing), at least one. */
export function defaultPasswordCheckers(cores: number): number {
  return Math.max(1, cores - 1);
}
