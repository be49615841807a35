import { TenantNotFound } from './errors.js';
import { getSigningAlgorithm, type RealmSigning } from './get-signing-algorithm.js';
import type { IdentityContext } from './identity-context.js';
import { createSigningKey, type SigningAlgorithm } from './signing-keys.js';

export interface SigningChange extends RealmSigning {
  /** Whether a new key was made active (false: the realm already signed with `alg`). */
  rotated: boolean;
  /** Keys retired by this change (they stay published for a token lifetime plus skew). */
  retired: number;
}

/**
 * Makes the realm sign with `alg`. A change of algorithm is a key rotation: a new key of that
 * type signs from then on, and the old one stays in the JWKS until every token it signed has
 * expired. Setting the algorithm the realm already uses changes nothing (idempotent: a retried
 * request, or two operators at once, rotate once), decided under the realm's lock.
 */
export async function setSigningAlgorithm(ctx: Pick<IdentityContext, 'signingKeys' | 'encryption'>, tenant: string, alg: SigningAlgorithm): Promise<SigningChange> {
  const current = await getSigningAlgorithm(ctx, tenant);
  if (current.alg === alg) return { ...current, rotated: false, retired: 0 };
  const key = await createSigningKey(ctx.encryption, alg);
  const outcome = await ctx.signingKeys.rotate(tenant, key, { unlessActiveAlg: alg });
  if (outcome === undefined) throw new TenantNotFound();
  if (!outcome.rotated) return { tenant, alg, kid: outcome.active!.kid, rotated: false, retired: 0 };
  return { tenant, alg, kid: key.kid, rotated: true, retired: outcome.retired };
}
