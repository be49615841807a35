import { MAX_KEYS_PER_SERVICE_ACCOUNT, type ServiceAccountKey } from '@plant/shared';
import { publishChange } from './credential-changes.js';
import { DuplicateKey, KeyLimitReached } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { importPublicKey } from './public-keys.js';
import { toServiceAccountKey } from './service-account-view.js';

/**
 * A public key for `private_key_jwt`: checked (public only, RSA ≥ 2048 bits, EC P-256 or
 * Ed25519), stored normalised, at most five per account. Adding revokes nothing; the key works
 * from the answer on (every replica's cache drops the account).
 */
export async function addServiceAccountKey(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  input: { jwk?: Record<string, unknown> | undefined; pem?: string | undefined; actor?: string | undefined },
): Promise<ServiceAccountKey> {
  const key = importPublicKey(input);
  const outcome = await ctx.accountCredentials.addKey(tenant, clientId, { ...key, createdBy: input.actor ?? null }, MAX_KEYS_PER_SERVICE_ACCOUNT);
  await publishChange(ctx, tenant, outcome, { duplicate: DuplicateKey, 'limit-reached': KeyLimitReached });
  const added = (await ctx.accountCredentials.credentials(tenant, clientId))?.keys.find((k) => k.id === key.id);
  if (added === undefined) throw new DuplicateKey('The key was removed again while it was added');
  return toServiceAccountKey(added);
}
