import type { Knex } from '@plant/shared';
import { isStorableText } from '../data-access/storable-text.js';
import { findUserCredentialByEmail } from '../data-access/user-repository.js';
import { dummyPasswordHash, verifyPassword } from './passwords.js';

/** The user's id when email and password match; the same work is done for unknown emails. */
export async function authenticateUser(db: Knex, tenant: string, email: string, password: string): Promise<string | undefined> {
  const user = isStorableText(email) ? await findUserCredentialByEmail(db, tenant, email) : undefined;
  const hash = user?.password_hash ?? (await dummyPasswordHash());
  const ok = await verifyPassword(password, hash);
  return ok && user ? user.sub : undefined;
}
