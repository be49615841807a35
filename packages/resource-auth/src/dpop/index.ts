export { DpopCheck, type DpopOptions } from './dpop-check.js';
export { dpopChallenge, DpopInvalidToken, InvalidDpopProof, UseDpopNonce } from './dpop-errors.js';
export { DPOP_SIGNING_ALGS, type DpopSigningAlg } from './dpop-jwk.js';
export { DpopNonces } from './dpop-nonces.js';
export { accessTokenHash } from './dpop-proof.js';
export {
  createRedisReplayStore,
  type DpopReplayStore,
  type RedisReplayStoreOptions,
} from './dpop-replay-store.js';
