/** What `withTimeout` rejects with when the time is up; the message names what was awaited. */
export class TimeoutError extends Error {
  constructor(what: string) {
    super(`${what} timed out`);
    this.name = 'TimeoutError';
  }
}

/**
 * `promise`, or a `TimeoutError` ("<what> timed out") once `ms` have passed, whichever comes
 * first. The timer is cleared as soon as either settles. The work behind `promise` is not
 * cancelled: where the callee takes an `AbortSignal`, pass it `AbortSignal.timeout(ms)` instead,
 * so it stops too.
 *
 * An answer that arrived in time is never lost to the timer: after the process stalled (CPU
 * starvation, a long GC pause) the event loop runs due timers before it reads the sockets, so a
 * reply already waiting in a socket would lose to a timer that fired late. The timer therefore
 * decides only in the next check phase (`setImmediate`), after the replies received are read.
 */
export function withTimeout<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new TimeoutError(what))), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
