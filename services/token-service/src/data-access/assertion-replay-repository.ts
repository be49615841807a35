import { createHash } from 'node:crypto';
import { withTimeout } from '@plant/shared';
import type { Redis } from 'ioredis';

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
const CLAIM_TIMEOUT_MS = 1000;

/**
 * `SET key 1 NX EX ttl`: one atomic command, so two replicas racing with the same assertion
 * cannot both win (a read-then-write would let both through). The key is a digest of the
 * realm, the client and the jti (bounded length, no client text in Redis). Bound: one key per
 * accepted assertion, gone when the assertion could no longer be accepted anyway (its `exp`
 * plus the clock skew): the grant rate times at most five minutes.
 */
export function createAssertionReplayRepository(redis: Redis): AssertionReplayRepository {
  return {
    async claim(realm, clientId, jti, ttlSeconds) {
      const key = PREFIX + createHash('sha256').update(`${realm}\u0000${clientId}\u0000${jti}`).digest('base64url');
      const answer = await withTimeout(redis.set(key, '1', 'EX', Math.max(1, Math.ceil(ttlSeconds)), 'NX'), CLAIM_TIMEOUT_MS, 'assertion jti claim');
      return answer === 'OK';
    },
  };
}
