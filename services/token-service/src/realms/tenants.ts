/**
 * Tenants: a tenant is a realm (its own issuer, signing keys, users and service accounts).
 * Creating one makes its first signing key and first Account Admin in one transaction, so a
 * realm never exists half-made; reading one is the check every other module's 404 relies on.
 */
import { DEFAULT_SIGNING_ALGORITHM, type SigningAlgorithm } from '@plant/shared/api';
import { randomUUID } from 'node:crypto';
import {
  DuplicateUserEmail,
  RealmExists,
  TenantExists,
  TenantNotFound,
  UserEmailTaken,
  type IdentityContext,
} from '../platform/index.js';
import { hashPassword } from '../sign-in/index.js';
import { createSigningKey } from '../signing-keys/index.js';
import type { CreatedUser } from '../people/index.js';

/** The realm, its first signing key (RS256 unless `alg` says otherwise) and its first Account Admin, all or nothing. */
export async function createTenant(
  ctx: Pick<IdentityContext, 'realms' | 'encryption'>,
  input: {
    tenant: string;
    adminEmail: string;
    adminPassword: string;
    alg?: SigningAlgorithm;
    /** The realm's policy: must an Account Admin hold a second factor? (default: yes) */
    requireAdminFactor?: boolean;
  },
): Promise<{ tenant: string; kid: string; alg: SigningAlgorithm; admin: CreatedUser }> {
  const alg = input.alg ?? DEFAULT_SIGNING_ALGORITHM;
  const [key, passwordHash] = await Promise.all([
    createSigningKey(ctx.encryption, alg),
    hashPassword(input.adminPassword),
  ]);
  const admin: CreatedUser = { id: randomUUID(), email: input.adminEmail, role: 'Account Admin' };
  try {
    await ctx.realms.create(
      input.tenant,
      key,
      {
        sub: admin.id,
        email: admin.email,
        role: admin.role,
        passwordHash,
        createdBy: 'cli',
      },
      { requireAdminFactor: input.requireAdminFactor ?? true },
    );
  } catch (err) {
    if (err instanceof RealmExists)
      throw new TenantExists(`Tenant "${input.tenant}" already exists`);
    if (err instanceof DuplicateUserEmail) throw new UserEmailTaken();
    throw err;
  }
  return { tenant: input.tenant, kid: key.kid, alg, admin };
}

export async function getTenant(
  ctx: Pick<IdentityContext, 'realms'>,
  tenant: string,
): Promise<{ tenant: string; created_at: string }> {
  const row = await ctx.realms.find(tenant);
  if (!row) throw new TenantNotFound();
  return { tenant: row.name, created_at: new Date(row.created_at).toISOString() };
}

/**
 * Reads look the realm up only when they find nothing (one round trip when there is an
 * answer): rows cannot outlive their realm, so only an empty answer can mean an unknown tenant.
 */
export async function assertTenantExists(
  ctx: Pick<IdentityContext, 'realms'>,
  tenant: string,
): Promise<void> {
  if (!(await ctx.realms.find(tenant))) throw new TenantNotFound();
}

/**
 * Every realm's name, for the resource servers: a token naming a realm that is not listed is
 * refused without asking for that realm's keys (packages/resource-auth, realm-directory.ts).
 */
export async function listRealms(
  ctx: Pick<IdentityContext, 'realms'>,
): Promise<{ realms: string[] }> {
  return { realms: await ctx.realms.listNames() };
}
