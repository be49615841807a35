/**
 * `SET NX PX` claims sent to Redis in batches: every claim made while the event loop handles one
 * round of I/O (the requests that arrived together) goes out in one pipeline, one write, when
 * that round ends (`setImmediate`), rather than one write per request. On a loaded host a socket
 * write costs more than the command itself (docs/performance.md, DPoP), and a claim waits at
 * most for the rest of its round, a few requests' work.
 */
import type { Redis } from 'ioredis';

interface QueuedClaim {
  key: string;
  ttlMs: number;
  resolve: (answer: unknown) => void;
  reject: (err: unknown) => void;
}

export class ClaimBatch {
  #queued: QueuedClaim[] = [];

  constructor(private readonly redis: Redis) {}

  /** Redis's answer to `SET key 1 PX ttlMs NX` ("OK" when claimed, null when taken), or its error. */
  set(key: string, ttlMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#queued.push({ key, ttlMs, resolve, reject }) === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#queued;
    this.#queued = [];
    const pipeline = this.redis.pipeline();
    for (const claim of batch) pipeline.set(claim.key, '1', 'PX', claim.ttlMs, 'NX');
    pipeline.exec().then(
      (results) => {
        batch.forEach((claim, i) => {
          const [err, answer] = results?.[i] ?? [new Error('no answer to the claim'), null];
          if (err) claim.reject(err);
          else claim.resolve(answer);
        });
      },
      (err: unknown) => {
        for (const claim of batch) claim.reject(err);
      },
    );
  }
}
