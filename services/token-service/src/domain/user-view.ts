import type { User, UserRole } from '@plant/shared';
import type { UserRow } from '../data-access/user-repository.js';

/** A user as the create commands answer it. */
export interface CreatedUser {
  id: string;
  email: string;
  role: UserRole;
}

export function toUser(row: UserRow): User {
  return { id: row.sub, email: row.email, role: row.role, created_at: new Date(row.created_at).toISOString() };
}
