import type { DpopReplayStore } from '@plant/resource-auth';
import Provider from 'oidc-provider';
import { ReplayCheckUnavailable } from '../platform/index.js';

/**
 * How far from now oidc-provider accepts a proof's `iat` (without a nonce), and how long a nonce
 * it issued stays valid (with one), seconds: its CHALLENGE_OK_WINDOW, which it does not export.
 */
const PROOF_WINDOW_SECONDS = 300;
/** `iat` is whole seconds, oidc-provider's clock too: a proof may pass for up to a second more. */
const ROUNDING_SECONDS = 1;

/** The `iat` of the DPoP proof of the request oidc-provider is handling (verified by then), or undefined. */
function proofIat(): number | undefined {
  const proof = Provider.ctx?.get('DPoP');
  if (!proof) return undefined;
  try {
    const { iat } = JSON.parse(
      Buffer.from(proof.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as { iat?: unknown };
    return typeof iat === 'number' && Number.isFinite(iat) ? iat : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long a proof's `jti` must be remembered, ms: until the proof itself could no longer be
 * accepted. oidc-provider asks for the window from now, but without a nonce it accepts a proof
 * while its `iat` is within the window of now, so a proof dated ahead lives until `iat` + the
 * window: up to twice the window from its first use, when a second token could be bought with it.
 * With a nonce the nonce's own validity bounds it (the window from now at most). Beyond `iat`
 * the window from now a proof is refused, so no key outlives two windows; a proof whose `iat`
 * cannot be read here is kept that longest time.
 */
function rememberForMs(askedExp: number, nowMs: number): number {
  const now = nowMs / 1000;
  const iat = proofIat() ?? now + PROOF_WINDOW_SECONDS;
  const proofEnd =
    Math.min(iat, now + PROOF_WINDOW_SECONDS) + PROOF_WINDOW_SECONDS + ROUNDING_SECONDS;
  return Math.max(askedExp, proofEnd) * 1000 - nowMs;
}

/**
 * oidc-provider's "was this jti seen?" (`ReplayDetection.unique`: DPoP proofs at the token
 * endpoint) looks the id up in its adapter, then stores it: two replicas given the same proof at
 * once both find nothing and both issue a token. Here it is one atomic claim in the replay store
 * the resource servers use (Redis `SET NX`, kept for as long as the proof could be accepted),
 * shared by every replica and failing closed.
 */
export function claimReplaysInStore(provider: Provider, store: DpopReplayStore): void {
  const model = provider.ReplayDetection as unknown as {
    unique(iss: string, jti: string, exp: number): Promise<boolean>;
  };
  model.unique = async function unique(iss: string, jti: string, exp: number): Promise<boolean> {
    try {
      return await store.claim(`token-endpoint:${iss}:${jti}`, rememberForMs(exp, Date.now()));
    } catch (err) {
      throw new ReplayCheckUnavailable(err);
    }
  };
}
