import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

/** One claim per client assertion's jti, shared by every replica. */
export interface AssertionReplayRepository {
  /**
   * True the first time (realm, client, jti) is claimed within `ttlSeconds`, false after. Rejects
   * when Redis cannot answer: the caller refuses the assertion (fail closed), since a jti that
   * cannot be recorded could be replayed.
   */
  claim(realm: string, clientId: string, jti: string, ttlSeconds: number): Promise<boolean>;
}

const PREFIX = 'plantstore:assertion-jti:';
/** A claim Redis has not answered by then is a failure (the assertion is refused with 503), never a wait. */
const CLAIM_TIMEOUT_MS = 1000;

export interface AssertionReplayStore {
  repository: AssertionReplayRepository;
  close(): void;
}

/**
 * `SET key 1 NX EX ttl`: one atomic command, so two replicas racing with the same assertion
 * cannot both win (a read-then-write would let both through). The key is a digest of the
 * realm, the client and the jti (bounded length, no client text in Redis). Bound: one key per
 * accepted assertion, gone when the assertion could no longer be accepted anyway (its `exp`
 * plus the clock skew): the grant rate times at most five minutes. A connection of its own,
 * whose commands time out (ioredis' `commandTimeout`: no timer per grant) and are not queued
 * while Redis is away (offline queue off: the claim fails at once).
 */
export function createAssertionReplayStore(redisUrl: string, onError: (err: Error) => void): AssertionReplayStore {
  const redis = new Redis(redisUrl, { commandTimeout: CLAIM_TIMEOUT_MS, enableOfflineQueue: false, maxRetriesPerRequest: 0, enableAutoPipelining: true });
  redis.on('error', onError);
  return {
    repository: {
      async claim(realm, clientId, jti, ttlSeconds) {
        const key = PREFIX + createHash('sha256').update(`${realm}\u0000${clientId}\u0000${jti}`).digest('base64url');
        return (await redis.set(key, '1', 'EX', Math.max(1, Math.ceil(ttlSeconds)), 'NX')) === 'OK';
      },
    },
    close: () => redis.disconnect(),
  };
}
