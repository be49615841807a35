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
 * a switch keeps the switch rather than undoing it. An unknown realm is refused before a key is
 * generated (an RSA key costs the caller tens of milliseconds for nothing).
 */
export async function rotateSigningKey(ctx: Pick<IdentityContext, 'signingKeys' | 'realms' | 'encryption'>, tenant: string, alg?: SigningAlgorithm): Promise<RotatedKey> {
  for (let attempt = 1; ; attempt += 1) {
    const active = await currentAlgorithm(ctx, tenant);
    const keep = alg === undefined ? active : undefined;
    const next = alg ?? keep ?? DEFAULT_SIGNING_ALGORITHM;
    const key = await createSigningKey(ctx.encryption, next);
    const outcome = await ctx.signingKeys.rotate(tenant, key, keep === undefined ? {} : { activeAlg: keep });
    if (outcome === undefined) throw new TenantNotFound();
    if (outcome.rotated) return { tenant, kid: key.kid, alg: next, retired: outcome.retired };
    if (attempt >= MAX_ATTEMPTS) throw new Error(`the signing algorithm of realm ${tenant} kept changing during the rotation`);
  }
}

/** The algorithm of the realm's active key; undefined for a realm without one (rotation gives it one); TenantNotFound for no realm. */
async function currentAlgorithm(ctx: Pick<IdentityContext, 'signingKeys' | 'realms'>, tenant: string): Promise<SigningAlgorithm | undefined> {
  const active = await ctx.signingKeys.findActive(tenant);
  if (active !== undefined) return algorithmOf(active.public_jwk);
  if ((await ctx.realms.find(tenant)) === undefined) throw new TenantNotFound();
  return undefined;
}
