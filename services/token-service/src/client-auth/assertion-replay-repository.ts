import { createRedisReplayStore, type DpopReplayStore } from '@plant/resource-auth';
import type { Logger } from '@plant/shared/logging';
import type { RedisTarget } from '@plant/shared/redis';

/** One claim per client assertion's jti, shared by every replica. */
export interface AssertionReplayRepository {
  /**
   * True the first time (realm, client, jti) is claimed within `ttlSeconds`, false after. Rejects
   * when Redis cannot answer: the caller refuses the assertion (fail closed), since a jti that
   * cannot be recorded could be replayed.
   */
  claim(realm: string, clientId: string, jti: string, ttlSeconds: number): Promise<boolean>;
}

/** A claim Redis has not answered by then is a failure (the assertion is refused with 503). */
const CLAIM_TIMEOUT_MS = 1000;

export interface AssertionReplayStore {
  repository: AssertionReplayRepository;
  close(): Promise<void>;
}

/**
 * The one replay store (@plant/resource-auth's, which DPoP proofs use too): one atomic
 * `SET key 1 NX PX ttl`, so two replicas racing with the same assertion cannot both win. The
 * key is a digest of the realm, the client and the jti (bounded length, no client text in
 * Redis). Bound: one key per accepted assertion, gone when the assertion could no longer be
 * accepted anyway (its `exp` plus the clock skew): the grant rate times at most five minutes.
 */
export function createAssertionReplayStore(
  redis: RedisTarget | string,
  logger: Logger,
): AssertionReplayStore {
  const store: DpopReplayStore = createRedisReplayStore({
    redis,
    keyPrefix: 'plantstore:assertion-jti:',
    timeoutMs: CLAIM_TIMEOUT_MS,
    logger,
  });
  return {
    repository: {
      claim: (realm, clientId, jti, ttlSeconds) =>
        store.claim(`${realm}\u0000${clientId}\u0000${jti}`, ttlSeconds * 1000),
    },
    close: () => store.close(),
  };
}
