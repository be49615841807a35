/**
 * Service accounts as the token service keeps them: the principal, its role and grants, and
 * whether it is disabled. Every change here but enabling revokes the account's older tokens:
 * the token version is bumped in the transaction that makes the change, and the revocation
 * entry is published after commit. What each kind of change revokes, publishes and signals is
 * one table, changes/change-effects.ts, which the repositories apply. Reset Secret (which
 * revokes too) is reset-secret.ts; the other credentials (keys, trusted workloads) are
 * service-account-credentials.ts; the wire shape of both is service-account-view.ts.
 */
import { randomBytes } from 'node:crypto';
import {
  type Grant,
  MAX_SERVICE_ACCOUNTS,
  type ServiceAccount,
  type ServiceAccountRole,
  type ServiceAccountWithSecret,
} from '@plant/shared/token-service-client';
import { generateClientSecret, publishChange } from '../credentials/index.js';
import {
  DuplicateServiceAccountName,
  ServiceAccountLimitReached,
  ServiceAccountNameTaken,
  ServiceAccountNotFound,
  TenantNotFound,
  type IdentityContext,
} from '../platform/index.js';
import { toServiceAccount } from './service-account-view.js';
import { assertTenantExists } from '../realms/index.js';

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
  const account = {
    sub,
    realm: tenant,
    name: input.name,
    role: 'View' as const,
    secretDigest: ctx.secrets.digest(secret),
    createdBy: input.actor ?? null,
  };
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

export async function getServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms'>,
  tenant: string,
  clientId: string,
): Promise<ServiceAccount> {
  const row = await ctx.serviceAccounts.find(tenant, clientId);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccount(row);
}

export async function listServiceAccounts(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms'>,
  tenant: string,
): Promise<ServiceAccount[]> {
  const rows = await ctx.serviceAccounts.list(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toServiceAccount);
}

/**
 * A change of role, grants, the DPoP requirement or whether it may receive Shared Signals
 * (`receive_signals`: only then may its grants ask for the `ssf.*` scopes): the account's older tokens are revoked
 * (version bumped with the change, published after commit). Turning DPoP on thus leaves no
 * bearer token of the account usable; turning it off leaves no bound one.
 */
export async function updateServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  input: {
    role?: ServiceAccountRole | undefined;
    grants?: Grant[] | undefined;
    dpop_bound_access_tokens?: boolean | undefined;
    receive_signals?: boolean | undefined;
  },
): Promise<ServiceAccount> {
  const entry = await ctx.serviceAccounts.update(tenant, clientId, {
    role: input.role,
    grants: input.grants,
    dpopBoundAccessTokens: input.dpop_bound_access_tokens,
    receiveSignals: input.receive_signals,
  });
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
  return getServiceAccount(ctx, tenant, clientId);
}

/**
 * Disable: every token of the account is refused at its next check (the version is bumped, as
 * a reset does) and no credential authenticates it until it is enabled. Enable: its
 * credentials work again; nothing is revoked. Asking for the state it has changes nothing.
 */
export async function setServiceAccountDisabled(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  disabled: boolean,
): Promise<ServiceAccount> {
  const outcome = await ctx.accountCredentials.setDisabled(tenant, clientId, disabled);
  if (outcome !== 'unchanged') await publishChange(ctx, tenant, outcome, {});
  return getServiceAccount(ctx, tenant, clientId);
}

/** The credentials go at once; the principal stays, deleted, so its tokens are refused (published after commit). */
export async function deleteServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
): Promise<void> {
  const entry = await ctx.serviceAccounts.delete(tenant, clientId);
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
}
