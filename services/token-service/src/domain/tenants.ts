import { randomUUID } from 'node:crypto';
import type { Knex, UserRole } from '@plant/shared';
import { insertPrincipal } from '../data-access/principal-repository.js';
import { findRealm, insertRealm, lockRealm, RealmExists } from '../data-access/realm-repository.js';
import { insertSigningKey, retireActiveSigningKey } from '../data-access/signing-key-repository.js';
import { DuplicateUserEmail, insertUser } from '../data-access/user-repository.js';
import { TenantExists, TenantNotFound, UserEmailTaken } from './errors.js';
import type { KeyContext } from './identity-context.js';
import { hashPassword } from './passwords.js';
import { createSigningKey } from './signing-keys.js';

export interface CreatedUser {
  id: string;
  email: string;
  role: UserRole;
}

async function addUser(trx: Knex, tenant: string, input: { email: string; password: string; role: UserRole; actor?: string }, passwordHash: string): Promise<CreatedUser> {
  const sub = randomUUID();
  await insertPrincipal(trx, { sub, realm: tenant, kind: 'user', created_by: input.actor ?? null });
  try {
    await insertUser(trx, { sub, realm: tenant, email: input.email, role: input.role, password_hash: passwordHash });
  } catch (err) {
    if (err instanceof DuplicateUserEmail) throw new UserEmailTaken();
    throw err;
  }
  return { id: sub, email: input.email, role: input.role };
}

/** The realm, its first signing key and its first Account Admin, all or nothing. */
export async function createTenant(
  ctx: KeyContext,
  input: { tenant: string; adminEmail: string; adminPassword: string },
): Promise<{ tenant: string; kid: string; admin: CreatedUser }> {
  const [key, passwordHash] = await Promise.all([createSigningKey(ctx.encryption), hashPassword(input.adminPassword)]);
  return ctx.db.transaction(async (trx) => {
    try {
      await insertRealm(trx, input.tenant);
    } catch (err) {
      if (err instanceof RealmExists) throw new TenantExists(`Tenant "${input.tenant}" already exists`);
      throw err;
    }
    await insertSigningKey(trx, { kid: key.kid, realm: input.tenant, public_jwk: key.publicJwk, private_key_encrypted: key.privateKeyEncrypted });
    const admin = await addUser(trx, input.tenant, { email: input.adminEmail, password: input.adminPassword, role: 'Account Admin', actor: 'cli' }, passwordHash);
    return { tenant: input.tenant, kid: key.kid, admin };
  });
}

export async function createUser(ctx: { db: Knex }, tenant: string, input: { email: string; password: string; role: UserRole; actor?: string }): Promise<CreatedUser> {
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction(async (trx) => {
    if (!(await lockRealm(trx, tenant))) throw new TenantNotFound();
    return addUser(trx, tenant, input, passwordHash);
  });
}

/**
 * Retires the active key and makes a new one active. The retired public key stays in the
 * JWKS until every token it signed has expired (ACCESS_TOKEN_TTL + clock skew).
 */
export async function rotateSigningKey(ctx: KeyContext, tenant: string): Promise<{ tenant: string; kid: string; retired: number }> {
  const key = await createSigningKey(ctx.encryption);
  return ctx.db.transaction(async (trx) => {
    if (!(await lockRealm(trx, tenant))) throw new TenantNotFound();
    const retired = await retireActiveSigningKey(trx, tenant);
    await insertSigningKey(trx, { kid: key.kid, realm: tenant, public_jwk: key.publicJwk, private_key_encrypted: key.privateKeyEncrypted });
    return { tenant, kid: key.kid, retired };
  });
}

export async function getTenant(db: Knex, tenant: string): Promise<{ tenant: string; created_at: string }> {
  const row = await findRealm(db, tenant);
  if (!row) throw new TenantNotFound();
  return { tenant: row.name, created_at: new Date(row.created_at).toISOString() };
}
