import { randomBytes } from 'node:crypto';
import { MAX_SERVICE_ACCOUNTS, type Grant, type Knex, type RevocationEntry, type ServiceAccount, type ServiceAccountRole } from '@plant/shared';
import { bumpTokenVersion, insertPrincipal } from '../data-access/principal-repository.js';
import { lockRealm } from '../data-access/realm-repository.js';
import {
  countServiceAccounts,
  deleteServiceAccount as deleteServiceAccountRow,
  DuplicateServiceAccountName,
  findServiceAccount,
  insertServiceAccount,
  listServiceAccounts as listServiceAccountRows,
  lockServiceAccount,
  replaceGrants,
  updateSecretDigest,
  updateServiceAccountRole,
} from '../data-access/service-account-repository.js';
import { findRealm } from '../data-access/realm-repository.js';
import { digestClientSecret, generateClientSecret } from './client-secrets.js';
import { ServiceAccountLimitReached, ServiceAccountNameTaken, ServiceAccountNotFound, TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccount } from './service-account-view.js';

export type ServiceAccountWithSecret = ServiceAccount & { secret: string };

/** client_ids are opaque and random (128 bits): never derived from the name, so renames and reuse leak nothing. */
function newClientId(): string {
  return `sa-${randomBytes(16).toString('hex')}`;
}

// Reads look the realm up only when they find nothing (one round trip when there is an answer):
// rows cannot outlive their realm, so only an empty answer can mean an unknown tenant.
async function assertRealm(db: Knex, tenant: string): Promise<void> {
  if (!(await findRealm(db, tenant))) throw new TenantNotFound();
}

export async function listServiceAccounts(ctx: IdentityContext, tenant: string): Promise<ServiceAccount[]> {
  const rows = await listServiceAccountRows(ctx.db, tenant);
  if (rows.length === 0) await assertRealm(ctx.db, tenant);
  return rows.map(toServiceAccount);
}

export async function getServiceAccount(ctx: IdentityContext, tenant: string, clientId: string): Promise<ServiceAccount> {
  const row = await findServiceAccount(ctx.db, tenant, clientId);
  if (!row) {
    await assertRealm(ctx.db, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccount(row);
}

/**
 * The realm row is locked FOR UPDATE for the transaction: creates of one tenant run one
 * after another, so the count is exact (30 parallel creates yield 25). The unique index
 * on (realm, lower(name)) backs the name rule.
 */
export async function createServiceAccount(ctx: IdentityContext, tenant: string, input: { name: string; actor?: string | undefined }): Promise<ServiceAccountWithSecret> {
  const secret = generateClientSecret();
  const sub = newClientId();
  await ctx.db.transaction(async (trx) => {
    if (!(await lockRealm(trx, tenant))) throw new TenantNotFound();
    if ((await countServiceAccounts(trx, tenant)) >= MAX_SERVICE_ACCOUNTS) throw new ServiceAccountLimitReached();
    await insertPrincipal(trx, { sub, realm: tenant, kind: 'service_account', created_by: input.actor ?? null });
    try {
      await insertServiceAccount(trx, { sub, realm: tenant, name: input.name, role: 'View', secret_digest: digestClientSecret(ctx.secretPepper, secret) });
    } catch (err) {
      if (err instanceof DuplicateServiceAccountName) throw new ServiceAccountNameTaken();
      throw err;
    }
  });
  const row = await findServiceAccount(ctx.db, tenant, sub);
  return { ...toServiceAccount(row!), secret };
}

/** Runs `change` on a locked account, bumps its token version in the same transaction, publishes after commit. */
async function changeServiceAccount(
  ctx: IdentityContext,
  tenant: string,
  clientId: string,
  change: (trx: Knex.Transaction) => Promise<void>,
  { deleted = false } = {},
): Promise<RevocationEntry> {
  const entry = await ctx.db.transaction(async (trx) => {
    if (!(await lockServiceAccount(trx, tenant, clientId))) {
      if (!(await findRealm(trx, tenant))) throw new TenantNotFound();
      throw new ServiceAccountNotFound();
    }
    await change(trx);
    const bumped = await bumpTokenVersion(trx, tenant, clientId, { deleted });
    if (!bumped) throw new ServiceAccountNotFound();
    return bumped;
  });
  await ctx.publisher.publish(entry);
  return entry;
}

export async function updateServiceAccount(
  ctx: IdentityContext,
  tenant: string,
  clientId: string,
  input: { role?: ServiceAccountRole | undefined; grants?: Grant[] | undefined },
): Promise<ServiceAccount> {
  await changeServiceAccount(ctx, tenant, clientId, async (trx) => {
    if (input.role !== undefined) await updateServiceAccountRole(trx, clientId, input.role);
    if (input.grants !== undefined) await replaceGrants(trx, clientId, input.grants);
  });
  return getServiceAccount(ctx, tenant, clientId);
}

/** The new digest replaces the old in the same transaction: the old secret fails from the moment the new one exists. */
export async function resetServiceAccountSecret(ctx: IdentityContext, tenant: string, clientId: string): Promise<ServiceAccountWithSecret> {
  const secret = generateClientSecret();
  await changeServiceAccount(ctx, tenant, clientId, (trx) => updateSecretDigest(trx, clientId, digestClientSecret(ctx.secretPepper, secret)));
  return { ...(await getServiceAccount(ctx, tenant, clientId)), secret };
}

export async function deleteServiceAccount(ctx: IdentityContext, tenant: string, clientId: string): Promise<void> {
  await changeServiceAccount(ctx, tenant, clientId, (trx) => deleteServiceAccountRow(trx, clientId), { deleted: true });
}
