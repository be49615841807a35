/** Long polls (RFC 8936) waiting for their stream's events on this replica, at most `max` in all. */
export class PollWaiters {
  readonly #waiters = new Map<string, Set<() => void>>();
  #waiting = 0;

  constructor(private readonly max: number) {}

  /** Polls waiting now. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Waits until `wake(streamId)` or `ms` passes; at once when `max` polls already wait. */
  waitFor(streamId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#waiting >= this.max) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.#waiters.get(streamId);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(streamId, set);
      }
      this.#waiting += 1;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const current = this.#waiters.get(streamId);
        if (current?.delete(done) && current.size === 0) this.#waiters.delete(streamId);
        this.#waiting -= 1;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      set.add(done);
    });
  }

  /** The stream's polls answer now. */
  wake(streamId: string): void {
    const waiters = this.#waiters.get(streamId);
    if (waiters === undefined) return;
    this.#waiters.delete(streamId);
    for (const wake of waiters) wake();
  }

  /** Every poll answers now. */
  wakeAll(): void {
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake();
  }
}
