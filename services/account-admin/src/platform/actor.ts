/**
 * Who is asking, however they authenticated (portal session or bearer token), and the
 * authorization rules of account-admin. Only `tenant` from here is ever used to address
 * data: a caller can never name another tenant.
 */
import { NotAccountAdmin } from './errors.js';

export type Role = 'View' | 'Edit' | 'Account Admin';

export interface Actor {
  tenant: string;
  sub: string;
  email: string | null;
  type: 'user' | 'service_account';
  role: Role;
  via: 'session' | 'bearer';
  /**
   * Whether sensitive actions need a recent second factor (the person has one, or their tenant's
   * policy requires one for their role); unset means no.
   */
  stepUpRequired?: boolean;
  /** When this person last verified a second factor (ms since epoch), as the realm reported it. */
  factorAt?: number;
}

/** Where a request came from, for the audit trail. */
export interface RequestMeta {
  requestId: string | null;
  address: string | null;
}

/** Management needs a human with Account Admin: a service account's token never qualifies, whatever its role. */
export function canManage(actor: Actor): boolean {
  return actor.type === 'user' && actor.role === 'Account Admin';
}

export function assertCanManage(actor: Actor): void {
  if (actor.type !== 'user')
    throw new NotAccountAdmin(
      'A service account cannot manage service accounts; sign in as a user with the Account Admin role',
    );
  if (actor.role !== 'Account Admin')
    throw new NotAccountAdmin('Managing service accounts needs the Account Admin role');
}

/** How the actor is named in `created_by` and in the audit trail. */
export function actorLabel(actor: Actor): string {
  return actor.email ?? actor.sub;
}

/** People are managed by a person with Account Admin only: never a service account's token. */
export function assertCanManagePeople(actor: Actor): void {
  if (actor.type !== 'user')
    throw new NotAccountAdmin(
      'A service account cannot manage people; sign in as a user with the Account Admin role',
    );
  if (actor.role !== 'Account Admin')
    throw new NotAccountAdmin('Managing people needs the Account Admin role');
}
