import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type ChallengePurpose = 'register' | 'authenticate';

/**
 * WebAuthn challenges, one per (sign-in, purpose), in Redis: shared by every replica, taken
 * with GETDEL so a challenge is answered once, and expiring with its sign-in. The key is a
 * digest of the realm and the interaction id (the id is a bearer value of the browser's sign-in:
 * it never reaches Redis in clear). At most two keys per live interaction, and interactions are
 * budgeted per source and in total (SIGN_IN_STARTS_*): that bounds the store.
 */
export interface WebAuthnChallengeRepository {
  put(
    tenant: string,
    interaction: string,
    purpose: ChallengePurpose,
    challenge: string,
    ttlSeconds: number,
  ): Promise<void>;
  /** The challenge, once; undefined when none is pending (used, expired, never issued). */
  take(tenant: string, interaction: string, purpose: ChallengePurpose): Promise<string | undefined>;
}

const keyOf = (tenant: string, interaction: string, purpose: ChallengePurpose) =>
  `plantstore:webauthn-challenge:${purpose}:${createHash('sha256')
    .update(`${tenant}\u0000${interaction}`)
    .digest('base64url')}`;

export function createWebAuthnChallengeRepository(redis: Redis): WebAuthnChallengeRepository {
  return {
    async put(tenant, interaction, purpose, challenge, ttlSeconds) {
      await redis.set(
        keyOf(tenant, interaction, purpose),
        challenge,
        'EX',
        Math.max(1, ttlSeconds),
      );
    },
    async take(tenant, interaction, purpose) {
      return (await redis.getdel(keyOf(tenant, interaction, purpose))) ?? undefined;
    },
  };
}
