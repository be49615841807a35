import type { DpopReplayStore } from '@plant/resource-auth';
import type Provider from 'oidc-provider';

/** A replay check that could not be made: the grant is answered 503, never let through (realm-provider.ts). */
export class ReplayCheckUnavailable extends Error {
  constructor(cause: unknown) {
    super('the replay store is unavailable', { cause });
    this.name = 'ReplayCheckUnavailable';
  }
}

/**
 * oidc-provider's "was this jti seen?" (`ReplayDetection.unique`: DPoP proofs at the token
 * endpoint) looks the id up in its adapter, then stores it: two replicas given the same proof at
 * once both find nothing and both issue a token. Here it is one atomic claim in the replay store
 * the resource servers use (Redis `SET NX` with the proof's remaining lifetime), shared by every
 * replica and failing closed.
 */
export function claimReplaysInStore(provider: Provider, store: DpopReplayStore): void {
  const model = provider.ReplayDetection as unknown as { unique(iss: string, jti: string, exp: number): Promise<boolean> };
  model.unique = async function unique(iss: string, jti: string, exp: number): Promise<boolean> {
    try {
      return await store.claim(`token-endpoint:${iss}:${jti}`, exp * 1000 - Date.now());
    } catch (err) {
      throw new ReplayCheckUnavailable(err);
    }
  };
}
