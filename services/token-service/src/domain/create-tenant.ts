import { randomUUID } from 'node:crypto';
import { RealmExists } from '../data-access/realm-repository.js';
import { DuplicateUserEmail } from '../data-access/user-repository.js';
import { TenantExists, UserEmailTaken } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { hashPassword } from './passwords.js';
import { createSigningKey, DEFAULT_SIGNING_ALGORITHM, type SigningAlgorithm } from './signing-keys.js';
import type { CreatedUser } from './user-view.js';

/** The realm, its first signing key (RS256 unless `alg` says otherwise) and its first Account Admin, all or nothing. */
export async function createTenant(
  ctx: Pick<IdentityContext, 'realms' | 'encryption'>,
  input: { tenant: string; adminEmail: string; adminPassword: string; alg?: SigningAlgorithm },
): Promise<{ tenant: string; kid: string; alg: SigningAlgorithm; admin: CreatedUser }> {
  const alg = input.alg ?? DEFAULT_SIGNING_ALGORITHM;
  const [key, passwordHash] = await Promise.all([createSigningKey(ctx.encryption, alg), hashPassword(input.adminPassword)]);
  const admin: CreatedUser = { id: randomUUID(), email: input.adminEmail, role: 'Account Admin' };
  try {
    await ctx.realms.create(input.tenant, key, { sub: admin.id, email: admin.email, role: admin.role, passwordHash, createdBy: 'cli' });
  } catch (err) {
    if (err instanceof RealmExists) throw new TenantExists(`Tenant "${input.tenant}" already exists`);
    if (err instanceof DuplicateUserEmail) throw new UserEmailTaken();
    throw err;
  }
  return { tenant: input.tenant, kid: key.kid, alg, admin };
}
