import { TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { algorithmOf, type SigningAlgorithm } from './signing-keys.js';

export interface RealmSigning {
  tenant: string;
  /** What the realm's access and ID tokens are signed with from now on. */
  alg: SigningAlgorithm;
  /** The active key's id (the `kid` of new tokens). */
  kid: string;
}

/** The algorithm and key a realm signs with: its active key's. */
export async function getSigningAlgorithm(ctx: Pick<IdentityContext, 'signingKeys'>, tenant: string): Promise<RealmSigning> {
  const active = await ctx.signingKeys.findActive(tenant);
  if (active === undefined) throw new TenantNotFound();
  return { tenant, alg: algorithmOf(active.public_jwk), kid: active.kid };
}
