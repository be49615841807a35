/**
 * Reset Secret, as named steps:
 * 1. `newSecret`: a fresh secret and its digest (only the digest is stored; the secret is shown once);
 * 2. `replaceSecret`: in one transaction on the locked account, the digest replaces the old one
 *    (a new secret starts its own life: created now, never used) and the effects the table lists
 *    for `service-account.secret-reset` are applied (changes/change-effects.ts): the token version
 *    is bumped, so the old secret fails from the moment the new one exists and the tokens minted
 *    with it are revoked, the credential revision is counted, and CAEP credential-change is
 *    queued; no such account is 404 (an unknown tenant's 404);
 * 3. `announce`: the account's revocation entry is published after commit (every replica's
 *    credential cache drops the account, resource servers apply the version);
 * 4. `answerWithSecret`: the account as it is now, with the secret.
 */
import type { RevocationEntry, ServiceAccountWithSecret } from '@plant/shared/token-service-client';
import { generateClientSecret } from '../credentials/index.js';
import { ServiceAccountNotFound, type IdentityContext } from '../platform/index.js';
import { assertTenantExists } from '../realms/index.js';
import { getServiceAccount } from './service-accounts.js';

/** Only `publish` of the publisher: the operator CLI collects the entries and announces them itself. */
type ResetContext = Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'secrets'> & {
  publisher: Pick<IdentityContext['publisher'], 'publish'>;
};

interface NewSecret {
  secret: string;
  digest: string;
}

export function newSecret(ctx: Pick<ResetContext, 'secrets'>): NewSecret {
  const secret = generateClientSecret();
  return { secret, digest: ctx.secrets.digest(secret) };
}

export async function replaceSecret(
  ctx: Pick<ResetContext, 'serviceAccounts' | 'realms'>,
  tenant: string,
  clientId: string,
  { digest }: NewSecret,
): Promise<RevocationEntry> {
  const entry = await ctx.serviceAccounts.update(tenant, clientId, { secretDigest: digest });
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return entry;
}

export function announce(
  ctx: Pick<ResetContext, 'publisher'>,
  entry: RevocationEntry,
): Promise<void> {
  return ctx.publisher.publish(entry);
}

export async function answerWithSecret(
  ctx: Pick<ResetContext, 'serviceAccounts' | 'realms'>,
  tenant: string,
  clientId: string,
  { secret }: NewSecret,
): Promise<ServiceAccountWithSecret> {
  return { ...(await getServiceAccount(ctx, tenant, clientId)), secret };
}

export async function resetServiceAccountSecret(
  ctx: ResetContext,
  tenant: string,
  clientId: string,
): Promise<ServiceAccountWithSecret> {
  const fresh = newSecret(ctx);
  const entry = await replaceSecret(ctx, tenant, clientId, fresh);
  await announce(ctx, entry);
  return answerWithSecret(ctx, tenant, clientId, fresh);
}
