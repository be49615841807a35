import type { IdentityContext } from './identity-context.js';
import { dummyPasswordHash, verifyPassword } from './passwords.js';
import { isStorableText } from './principal-validators.js';

/** The user's id when email and password match; the same work is done for unknown emails. */
export async function authenticateUser(ctx: Pick<IdentityContext, 'users'>, tenant: string, email: string, password: string): Promise<string | undefined> {
  const user = isStorableText(email) ? await ctx.users.findCredentialByEmail(tenant, email) : undefined;
  const hash = user?.password_hash ?? (await dummyPasswordHash());
  const ok = await verifyPassword(password, hash);
  return ok && user ? user.sub : undefined;
}
