import { randomBytes } from 'node:crypto';
import { MAX_SERVICE_ACCOUNTS, type ServiceAccountWithSecret } from '@plant/shared';
import { DuplicateServiceAccountName } from '../data-access/service-account-repository.js';
import { generateClientSecret } from './client-secrets.js';
import { ServiceAccountLimitReached, ServiceAccountNameTaken, TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccount } from './service-account-view.js';

/** client_ids are opaque and random (128 bits): never derived from the name, so renames and reuse leak nothing. */
function newClientId(): string {
  return `sa-${randomBytes(16).toString('hex')}`;
}

/**
 * A new `View` account with a fresh secret, shown once; only its digest is stored. The
 * repository serialises the creates of one tenant, so the cap holds exactly (30 parallel
 * creates yield 25), and its unique index backs the name rule.
 */
export async function createServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'secrets' | 'clientCredentials'>,
  tenant: string,
  input: { name: string; actor?: string | undefined },
): Promise<ServiceAccountWithSecret> {
  const secret = generateClientSecret();
  const sub = newClientId();
  const account = { sub, realm: tenant, name: input.name, role: 'View' as const, secretDigest: ctx.secrets.digest(secret), createdBy: input.actor ?? null };
  let outcome: Awaited<ReturnType<IdentityContext['serviceAccounts']['create']>>;
  try {
    outcome = await ctx.serviceAccounts.create(account, MAX_SERVICE_ACCOUNTS);
  } catch (err) {
    if (err instanceof DuplicateServiceAccountName) throw new ServiceAccountNameTaken();
    throw err;
  }
  if (outcome === 'unknown-realm') throw new TenantNotFound();
  if (outcome === 'limit-reached') throw new ServiceAccountLimitReached();
  // Nothing this replica read before (the realm's list of accounts) may hide the new account once it is answered.
  ctx.clientCredentials.forget(tenant, sub);
  const row = await ctx.serviceAccounts.find(tenant, sub);
  return { ...toServiceAccount(row!), secret };
}
