import { TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { algorithmOf, createSigningKey, DEFAULT_SIGNING_ALGORITHM, type SigningAlgorithm } from './signing-keys.js';

export interface RotatedKey {
  tenant: string;
  kid: string;
  alg: SigningAlgorithm;
  retired: number;
}

/** A plain rotation that lost to a concurrent change of algorithm is tried again this often. */
const MAX_ATTEMPTS = 3;

/**
 * Retires the active key and makes a new one active: of `alg` when the operator names one (an
 * algorithm switch), otherwise of the algorithm the realm signs with now. The retired public
 * key stays in the JWKS until every token it signed has expired (ACCESS_TOKEN_TTL + clock
 * skew, get-published-keys.ts). A plain rotation generates its key outside the transaction,
 * so it rotates only while the realm still signs with that algorithm: one that commits after
 * a switch keeps the switch rather than undoing it.
 */
export async function rotateSigningKey(ctx: Pick<IdentityContext, 'signingKeys' | 'encryption'>, tenant: string, alg?: SigningAlgorithm): Promise<RotatedKey> {
  for (let attempt = 1; ; attempt += 1) {
    const keep = alg === undefined ? await currentAlgorithm(ctx, tenant) : undefined;
    const next = alg ?? keep ?? DEFAULT_SIGNING_ALGORITHM;
    const key = await createSigningKey(ctx.encryption, next);
    const outcome = await ctx.signingKeys.rotate(tenant, key, keep === undefined ? {} : { activeAlg: keep });
    if (outcome === undefined) throw new TenantNotFound();
    if (outcome.rotated) return { tenant, kid: key.kid, alg: next, retired: outcome.retired };
    if (attempt >= MAX_ATTEMPTS) throw new Error(`the signing algorithm of realm ${tenant} kept changing during the rotation`);
  }
}

async function currentAlgorithm(ctx: Pick<IdentityContext, 'signingKeys'>, tenant: string): Promise<SigningAlgorithm | undefined> {
  const active = await ctx.signingKeys.findActive(tenant);
  return active === undefined ? undefined : algorithmOf(active.public_jwk);
}
