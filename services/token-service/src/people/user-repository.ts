import { type IfMatch, meets, takePrecondition } from '@plant/shared/http';
import { DuplicateUserEmail, PreconditionFailed } from '../platform/index.js';
import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type { RevocationEntry, UserRole } from '@plant/shared/token-service-client';
import { bumpTokenVersion, insertPrincipal } from '../service-accounts/index.js';
import { lockRealm } from '../realms/index.js';
import { type ChangeKind, effectsOf } from '../changes/index.js';
import { insertPeopleAuditEvent, type NewPeopleAuditEvent } from '../people-audit/index.js';

export interface UserRow {
  sub: string;
  realm: string;
  email: string;
  role: UserRole;
  created_at: Date;
  disabled_at: Date | null;
  last_sign_in_at: Date | null;
  token_version: number;
  /** Moved each time a factor is taken away (second-factors/factor-removal-repository.ts). */
  factor_generation: number;
  /** The realm's policy: must an Account Admin hold a second factor? */
  require_admin_factor: boolean;
  passkeys: number;
  totp: boolean;
  recovery_codes_left: number;
  /** Counted up by every change of the person's role or status (`change`): their `ETag`; bigint, read as a string by pg. */
  revision: number | string;
}

/** An email as the store matches it (`lower()` in Postgres), and the live user it names, if any. */
export interface SignInCredentialRow {
  email_key: string;
  sub: string | null;
  password_hash: string | null;
}

export interface NewUser {
  sub: string;
  email: string;
  role: UserRole;
  passwordHash: string;
  createdBy: string | null;
}

/** What a change of a person does; each bumps the token version (the person's tokens and sessions are re-checked). */
export type UserChange =
  | { kind: 'role'; role: UserRole }
  | { kind: 'disable' }
  | { kind: 'enable' }
  | { kind: 'remove' };

/** Refused: the change would leave the realm without an active Account Admin. */
export type UserChangeRefusal = 'last-admin';

export interface UserRepository {
  /** The realm's live users (disabled ones included), by email. */
  list(realm: string): Promise<UserRow[]>;
  /** A live user (disabled or not); removed people are not found. */
  find(realm: string, sub: string): Promise<UserRow | undefined>;
  /**
   * The email's key as Postgres matches it, whether or not a user has it: every spelling that
   * signs in to one account (any case, any character `lower()` folds) has one key, so a
   * failure budget kept by it cannot be multiplied by respelling the email. A disabled person
   * is no user here: their password is never checked.
   */
  findSignInCredential(realm: string, email: string): Promise<SignInCredentialRow>;
  /** Adds the user to a locked realm; false when the realm does not exist. Throws `DuplicateUserEmail`. */
  create(realm: string, user: NewUser): Promise<boolean>;
  /**
   * Applies the change under the realm lock (every change of a realm's people runs one after
   * another, so the last-admin rule holds under any concurrency) and bumps the token version in
   * the same transaction. Undefined when there is no such live user. The request's `If-Match`
   * (`conditionalRoute`) is checked against the person's revision under that lock (412
   * `PreconditionFailed`), and the revision is counted up.
   */
  change(
    realm: string,
    sub: string,
    change: UserChange,
  ): Promise<RevocationEntry | UserChangeRefusal | undefined>;
  /**
   * In one transaction: bumps the live user's token version (the revocation feed records it)
   * and deletes the realm's oidc-provider `Session` artifacts of that account, so the realm's
   * sign-in page does not sign them straight back in. The new entry, undefined when there is no
   * such live user.
   */
  signOutEverywhere(realm: string, sub: string): Promise<RevocationEntry | undefined>;
}

/** The principal and its user row, in the caller's transaction (also the realm's first user). */
export async function insertUser(trx: Knex, realm: string, user: NewUser): Promise<void> {
  await insertPrincipal(trx, { sub: user.sub, realm, kind: 'user', created_by: user.createdBy });
  try {
    await trx('users').insert({
      sub: user.sub,
      realm,
      email: user.email,
      role: user.role,
      password_hash: user.passwordHash,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUserEmail(user.email);
    throw err;
  }
}

/** Whether a live person of the realm already has this email (any case). */
export async function emailInUse(trx: Knex, realm: string, email: string): Promise<boolean> {
  const row = await trx('users')
    .where({ realm })
    .whereRaw('lower(email) = lower(?)', [email])
    .first('sub');
  return row !== undefined;
}

const FACTOR_COUNTS = `
  (select count(*)::int from user_factors f where f.sub = u.sub and f.kind = 'passkey') as passkeys,
  exists (select 1 from user_factors f where f.sub = u.sub and f.kind = 'totp') as totp,
  (select count(*)::int from user_recovery_codes c where c.sub = u.sub and c.used_at is null) as recovery_codes_left`;

/** Active Account Admins of the realm other than `sub` (in the caller's transaction, under the realm lock). */
async function otherActiveAdmins(trx: Knex, realm: string, sub: string): Promise<number> {
  const row = await trx('users as u')
    .join('principals as p', 'p.sub', 'u.sub')
    .where({ 'u.realm': realm, 'u.role': 'Account Admin' })
    .whereNot('u.sub', sub)
    .whereNull('u.disabled_at')
    .whereNull('p.deleted_at')
    .count<{ count: string }[]>({ count: '*' })
    .first();
  return Number(row?.count ?? 0);
}

/** Whether the person stops being an active Account Admin by this change. */
function endsAdminship(current: { role: UserRole; disabled_at: Date | null }, change: UserChange) {
  if (current.role !== 'Account Admin' || current.disabled_at !== null) return false;
  if (change.kind === 'role') return change.role !== 'Account Admin';
  return change.kind === 'disable' || change.kind === 'remove';
}

/**
 * The realm's sign-in sessions of the person (oidc-provider's `Session` rows): a disabled or
 * removed person must meet the sign-in form again, never be signed in by a session they
 * already had (without one, oidc-provider had a session naming an account it cannot load).
 */
export async function endRealmSessions(trx: Knex, realm: string, sub: string): Promise<void> {
  await trx('oidc_payloads')
    .where({ realm, model: 'Session' })
    .whereRaw("payload->>'accountId' = ?", [sub])
    .delete();
}

/**
 * The person's grants at the realm (oidc-provider's `Grant` rows), made for their old role: the
 * next sign-in, silent or not, makes a new one with what the new role allows (a promoted person
 * would otherwise be refused the new scopes, `access_denied`, until the grant expired).
 */
async function dropRealmGrants(trx: Knex, realm: string, sub: string): Promise<void> {
  await trx('oidc_payloads')
    .where({ realm, model: 'Grant' })
    .whereRaw("payload->>'accountId' = ?", [sub])
    .delete();
}

/** The kinds of change that are a person's (changes/change-effects.ts). */
export type PersonChangeKind = Extract<ChangeKind, `person.${string}`>;

/** The kind of change each `UserChange` is, for its entry in the effects table. */
const KIND_OF_CHANGE: Record<UserChange['kind'], PersonChangeKind> = {
  role: 'person.role',
  disable: 'person.disable',
  enable: 'person.enable',
  remove: 'person.remove',
};

/** The people audit row of a person change, but its realm and action (the call's and the table's). */
export type PersonChangeEvent = Omit<NewPeopleAuditEvent, 'realm' | 'action'>;

/**
 * What the effects table says a change of one person does besides itself, in the change's
 * transaction: its audit row (`event` says who and what, the table the action), the end of
 * their realm sessions, their token version bumped (the principal marked deleted for a
 * removal); the new entry, for the caller to publish after commit, undefined when the kind
 * revokes nothing (or there is no such live principal). Every person change applies its effects
 * here: the user repository's, an invitation's acceptance, the factor repository's.
 */
export async function applyPersonChange(
  trx: Knex,
  realm: string,
  sub: string,
  kind: PersonChangeKind,
  event?: PersonChangeEvent,
): Promise<RevocationEntry | undefined> {
  const effects = effectsOf(kind);
  if (effects.audit !== null) {
    if (event === undefined) throw new Error(`a ${kind} change is audited: its event is needed`);
    await insertPeopleAuditEvent(trx, { ...event, realm, action: effects.audit });
  }
  if (effects.endsRealmSessions) await endRealmSessions(trx, realm, sub);
  if (effects.revokes === 'none') return undefined;
  return bumpTokenVersion(trx, realm, sub, { deleted: effects.revokes === 'deleted' });
}

async function applyChange(trx: Knex, sub: string, change: UserChange): Promise<void> {
  if (change.kind === 'role') await trx('users').where({ sub }).update({ role: change.role });
  // Disabling twice keeps the first time.
  if (change.kind === 'disable')
    await trx('users')
      .where({ sub })
      .whereNull('disabled_at')
      .update({ disabled_at: trx.fn.now() });
  if (change.kind === 'enable') await trx('users').where({ sub }).update({ disabled_at: null });
  if (change.kind === 'remove') {
    // The principal stays (deleted) so its tokens are refused; the person and their factors go,
    // and the email may be invited again.
    await trx('user_factors').where({ sub }).delete();
    await trx('user_recovery_codes').where({ sub }).delete();
    await trx('users').where({ sub }).delete();
  }
}

/**
 * One person's change under the realm lock: the last-admin rule, the request's `If-Match`
 * against their revision (412), the change, its effects, the revision counted up, the token
 * version bumped.
 */
async function changeUser(
  trx: Knex.Transaction,
  realm: string,
  sub: string,
  change: UserChange,
  precondition: IfMatch | undefined,
): Promise<RevocationEntry | UserChangeRefusal | undefined> {
  if (!(await lockRealm(trx, realm))) return undefined;
  const current = await trx('users as u')
    .join('principals as p', 'p.sub', 'u.sub')
    .where({ 'u.realm': realm, 'u.sub': sub })
    .whereNull('p.deleted_at')
    .first('u.role', 'u.disabled_at', 'u.revision');
  if (current === undefined) return undefined;
  if (precondition !== undefined && !meets(precondition, Number(current.revision)))
    throw new PreconditionFailed();
  if (endsAdminship(current, change) && (await otherActiveAdmins(trx, realm, sub)) === 0)
    return 'last-admin' as const;
  await applyChange(trx, sub, change);
  if (change.kind !== 'remove') await trx('users').where({ sub }).increment('revision', 1);
  await dropRealmGrants(trx, realm, sub);
  return applyPersonChange(trx, realm, sub, KIND_OF_CHANGE[change.kind]);
}

export function createUserRepository(db: Knex): UserRepository {
  const selectUsers = () =>
    db('users as u')
      .join('principals as p', 'p.sub', 'u.sub')
      .whereNull('p.deleted_at')
      .select(
        'u.sub',
        'u.realm',
        'u.email',
        'u.role',
        'p.created_at',
        'u.disabled_at',
        'u.last_sign_in_at',
        'p.token_version',
        'u.factor_generation',
        'u.revision',
        db.raw(
          '(select r.require_admin_factor from realms r where r.name = u.realm) as require_admin_factor',
        ),
        db.raw(FACTOR_COUNTS),
      );
  return {
    async list(realm) {
      return selectUsers().where('u.realm', realm).orderByRaw('lower(u.email), u.sub');
    },
    async find(realm, sub) {
      return selectUsers().where({ 'u.realm': realm, 'u.sub': sub }).first();
    },
    async findSignInCredential(realm, email) {
      const { rows } = await db.raw<{ rows: SignInCredentialRow[] }>(
        `select lower(e.email) as email_key, u.sub, u.password_hash
           from (select ?::text as email) e
           left join users u on u.realm = ? and lower(u.email) = lower(e.email)
             and u.disabled_at is null
             and exists (select 1 from principals p where p.sub = u.sub and p.deleted_at is null)`,
        [email, realm],
      );
      return rows[0]!;
    },
    signOutEverywhere(realm, sub) {
      return db.transaction(async (trx) => {
        const user = await trx('users').where({ realm, sub }).first('sub');
        if (user === undefined) return undefined;
        return applyPersonChange(trx, realm, sub, 'person.sign-out-everywhere');
      });
    },
    create(realm, user) {
      return db.transaction(async (trx) => {
        if (!(await lockRealm(trx, realm))) return false;
        await insertUser(trx, realm, user);
        return true;
      });
    },
    change(realm, sub, change) {
      const precondition = takePrecondition();
      return db.transaction((trx) => changeUser(trx, realm, sub, change, precondition));
    },
  };
}
