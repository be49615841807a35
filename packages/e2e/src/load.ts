/**
 * A small closed-loop load generator for fault tests: `workers` loops each run `op` back to
 * back until stopped, and every outcome (status, or the network error's code) is kept
 * with when it started and ended, so a test can ask what happened around a fault.
 */
export interface Outcome<T = unknown> {
  worker: number;
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 when the request failed at the network level. */
  status: number;
  /** The network error's code (ECONNREFUSED, ECONNRESET, ...) when status is 0. */
  error?: string;
  detail?: T;
}

export interface Load<T> {
  outcomes: Outcome<T>[];
  /** Stops the loops and waits for the requests in flight. */
  stop(): Promise<Outcome<T>[]>;
}

export function startLoad<T>(
  workers: number,
  op: (worker: number, seq: number) => Promise<{ status: number; detail?: T }>,
  { pauseMs = 0 } = {},
): Load<T> {
  const outcomes: Outcome<T>[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let seq = 0; running; seq += 1) {
      const startedAt = Date.now();
      try {
        const { status, detail } = await op(worker, seq);
        outcomes.push({ worker, startedAt, endedAt: Date.now(), status, detail });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        outcomes.push({
          worker,
          startedAt,
          endedAt: Date.now(),
          status: 0,
          error: e.code ?? e.message,
        });
        // A refused connection fails at once: do not spin.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}
