/**
 * Creating a tenant (a realm): its first signing key and first Account Admin are made with it in
 * one transaction, so a realm never exists half-made. A use case above people, passwords (the
 * password's hash) and signing keys, which take the realm's lock and naming from the realms wing.
 */
import { DEFAULT_SIGNING_ALGORITHM, type SigningAlgorithm } from '@plant/shared/api';
import { randomUUID } from 'node:crypto';
import {
  DuplicateUserEmail,
  RealmExists,
  TenantExists,
  UserEmailTaken,
  type IdentityContext,
} from '../platform/index.js';
import { hashPassword } from '../passwords/index.js';
import { createSigningKey } from '../signing-keys/index.js';
import type { CreatedUser } from '../people/index.js';

/** The realm, its first signing key (RS256 unless `alg` says otherwise) and its first Account Admin, all or nothing. */
export async function createTenant(
  ctx: Pick<IdentityContext, 'realmCreation' | 'encryption'>,
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
    await ctx.realmCreation.create(
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
