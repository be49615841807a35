import { TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { createSigningKey } from './signing-keys.js';

/**
 * Retires the active key and makes a new one active. The retired public key stays in the
 * JWKS until every token it signed has expired (ACCESS_TOKEN_TTL + clock skew).
 */
export async function rotateSigningKey(ctx: Pick<IdentityContext, 'signingKeys' | 'encryption'>, tenant: string): Promise<{ tenant: string; kid: string; retired: number }> {
  const key = await createSigningKey(ctx.encryption);
  const retired = await ctx.signingKeys.rotate(tenant, key);
  if (retired === undefined) throw new TenantNotFound();
  return { tenant, kid: key.kid, retired };
}
