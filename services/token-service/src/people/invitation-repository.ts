import type { Knex } from '@plant/shared/db';
import type { UserRole } from '@plant/shared/token-service-client';
import { lockRealm } from '../realms/index.js';
import { applyPersonChange, emailInUse, insertUser, type NewUser } from './user-repository.js';
import { DuplicateUserEmail, RollBack } from '../platform/index.js';

export interface InvitationRow {
  id: string;
  /** Its place in the order invitations were made (int64, as a decimal string): the page cursor's key. */
  seq: string;
  realm: string;
  email: string;
  role: UserRole;
  created_by: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

export interface NewInvitation {
  id: string;
  realm: string;
  email: string;
  role: UserRole;
  /** HMAC-SHA-256(SECRET_PEPPER, token), hex: the token itself is never stored. */
  tokenDigest: string;
  createdBy: string | null;
  expiresInSeconds: number;
}

/** Why a link no longer works, as its page says it. */
export type InvitationState = 'pending' | 'expired' | 'revoked' | 'accepted';

/** The invitation a link names, with its state; no token. */
export type InvitationLookup = InvitationRow & { state: InvitationState };

export type CreateOutcome =
  | { kind: 'created'; row: InvitationRow }
  | { kind: 'unknown-realm' }
  | { kind: 'email-taken' }
  | { kind: 'limit-reached' };

/** One page of a realm's pending invitations, newest first; `more` when older ones follow. */
export interface PendingPage {
  rows: InvitationRow[];
  more: boolean;
}

export type AcceptOutcome =
  | { kind: 'accepted'; sub: string }
  | { kind: 'unknown' }
  | { kind: 'expired' | 'revoked' | 'accepted-before' }
  | { kind: 'email-taken' };

export interface InvitationRepository {
  /**
   * Under the realm lock: refuses an email a live person has ('email-taken'), refuses a new
   * email when `maxPending` other invitations are pending ('limit-reached': counted inside the
   * lock, so exact under parallel creates; expired ones do not count), revokes a pending
   * invitation of the same email (the newest link is the one that works), inserts the new one
   * and answers its row.
   */
  create(invitation: NewInvitation, maxPending: number): Promise<CreateOutcome>;
  /** A page of the realm's pending invitations (neither accepted, revoked nor expired), newest first, made before `beforeSeq` when given. */
  listPending(realm: string, page: { limit: number; beforeSeq?: string }): Promise<PendingPage>;
  /** Revokes a pending invitation and answers it; undefined when there is none with this id in the realm. */
  revoke(realm: string, id: string): Promise<InvitationRow | undefined>;
  findByDigest(realm: string, tokenDigest: string): Promise<InvitationLookup | undefined>;
  /**
   * One transaction: the invitation is consumed by a conditional update (only a pending one
   * changes), the person is created with it, and the effects the table lists for
   * `person.invitation-accept` are applied (its `invitation.accept` row in the realm's security
   * events). Two acceptances at once: one updates the row, the other finds it used.
   */
  accept(
    realm: string,
    tokenDigest: string,
    user: Omit<NewUser, 'email' | 'role' | 'createdBy'>,
    meta: { address: string | null; requestId: string | null },
  ): Promise<AcceptOutcome>;
}

const STATE_SQL = `case when i.accepted_at is not null then 'accepted'
  when i.revoked_at is not null then 'revoked'
  when i.expires_at <= now() then 'expired' else 'pending' end as state`;

const COLUMNS = [
  'i.id',
  'i.seq',
  'i.realm',
  'i.email',
  'i.role',
  'i.created_by',
  'i.created_at',
  'i.expires_at',
  'i.accepted_at',
  'i.revoked_at',
];

function pending(query: Knex.QueryBuilder): Knex.QueryBuilder {
  return query.whereNull('accepted_at').whereNull('revoked_at').whereRaw('expires_at > now()');
}

// long: a repository: one short method per query over the invitations table.
export function createInvitationRepository(db: Knex): InvitationRepository {
  async function whyNotPending(trx: Knex, realm: string, digest: string): Promise<AcceptOutcome> {
    const row = await trx('user_invitations as i')
      .where({ 'i.realm': realm, 'i.token_digest': digest })
      .first(db.raw(STATE_SQL));
    if (row === undefined) return { kind: 'unknown' };
    if (row.state === 'accepted') return { kind: 'accepted-before' };
    return { kind: row.state === 'revoked' ? 'revoked' : 'expired' };
  }

  return {
    create(invitation, maxPending) {
      return db.transaction(async (trx): Promise<CreateOutcome> => {
        if (!(await lockRealm(trx, invitation.realm))) return { kind: 'unknown-realm' };
        if (await emailInUse(trx, invitation.realm, invitation.email))
          return { kind: 'email-taken' };
        // The others: a pending invitation of this email is replaced below, so it leaves a place.
        const [{ others }] = (await pending(
          trx('user_invitations')
            .where({ realm: invitation.realm })
            .whereRaw('lower(email) <> lower(?)', [invitation.email]),
        ).count('* as others')) as [{ others: string | number }];
        if (Number(others) >= maxPending) return { kind: 'limit-reached' };
        await pending(
          trx('user_invitations')
            .where({ realm: invitation.realm })
            .whereRaw('lower(email) = lower(?)', [invitation.email]),
        ).update({ revoked_at: trx.fn.now() });
        const [row] = (await trx('user_invitations')
          .insert({
            id: invitation.id,
            realm: invitation.realm,
            email: invitation.email,
            role: invitation.role,
            token_digest: invitation.tokenDigest,
            created_by: invitation.createdBy,
            expires_at: trx.raw(`now() + make_interval(secs => ?)`, [invitation.expiresInSeconds]),
          })
          .returning(COLUMNS.map((c) => c.slice(2)))) as InvitationRow[];
        return { kind: 'created', row: row! };
      });
    },
    async listPending(realm, { limit, beforeSeq }) {
      const query = pending(db('user_invitations').where({ realm }));
      if (beforeSeq !== undefined) query.where('seq', '<', beforeSeq);
      const rows = (await query
        .orderBy('seq', 'desc')
        .limit(limit + 1)
        .select(COLUMNS.map((c) => c.slice(2)))) as InvitationRow[];
      return { rows: rows.slice(0, limit), more: rows.length > limit };
    },
    async revoke(realm, id) {
      const [row] = (await pending(db('user_invitations').where({ realm, id }))
        .update({ revoked_at: db.fn.now() })
        .returning(COLUMNS.map((c) => c.slice(2)))) as InvitationRow[];
      return row;
    },
    async findByDigest(realm, tokenDigest) {
      return db('user_invitations as i')
        .where({ 'i.realm': realm, 'i.token_digest': tokenDigest })
        .first([...COLUMNS, db.raw(STATE_SQL)]);
    },
    async accept(realm, tokenDigest, user, meta) {
      try {
        return await db.transaction(async (trx) => {
          if (!(await lockRealm(trx, realm))) return { kind: 'unknown' as const };
          const [invitation] = (await pending(
            trx('user_invitations').where({ realm, token_digest: tokenDigest }),
          )
            .update({ accepted_at: trx.fn.now(), accepted_sub: user.sub })
            .returning(['id', 'email', 'role', 'created_by'])) as Array<
            Pick<InvitationRow, 'id' | 'email' | 'role' | 'created_by'>
          >;
          if (invitation === undefined) return whyNotPending(trx, realm, tokenDigest);
          try {
            await insertUser(trx, realm, {
              ...user,
              email: invitation.email,
              role: invitation.role,
              createdBy: invitation.created_by,
            });
          } catch (err) {
            // Someone got the email meanwhile (an operator's CLI): the link stays unused.
            if (err instanceof DuplicateUserEmail) throw new RollBack({ kind: 'email-taken' });
            throw err;
          }
          await applyPersonChange(trx, realm, user.sub, 'person.invitation-accept', {
            actorSub: user.sub,
            actorEmail: invitation.email,
            targetSub: user.sub,
            targetEmail: invitation.email,
            details: { invitation_id: invitation.id, role: invitation.role },
            address: meta.address,
            requestId: meta.requestId,
          });
          return { kind: 'accepted' as const, sub: user.sub };
        });
      } catch (err) {
        if (err instanceof RollBack) return err.outcome as AcceptOutcome;
        throw err;
      }
    },
  };
}
