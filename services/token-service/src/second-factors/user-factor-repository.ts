import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type { RevocationEntry, UserRole } from '@plant/shared/token-service-client';
import { bumpTokenVersion } from '../service-accounts/index.js';
import { applyPersonChange, type PersonChangeEvent } from '../people/index.js';
import {
  insertPeopleAuditEvent,
  insertSignInEvent,
  type SignInEvent,
} from '../people-audit/index.js';
import { DuplicateFactor, StaleFactorGeneration } from '../platform/index.js';
import { effectsOf } from '../changes/index.js';

/** A person as a sign-in needs them: who, whether they may sign in, what they hold, what the realm requires. */
export interface SignInPerson {
  sub: string;
  email: string;
  role: UserRole;
  disabled: boolean;
  requireAdminFactor: boolean;
  passkeys: number;
  totp: boolean;
  recoveryCodesLeft: number;
  /** Moved each time a factor is taken away (removed, reset): a sign-in begun before it is void. */
  factorGeneration: number;
}

/** A factor as a list shows it (never its secret or key). */
export interface FactorView {
  id: string;
  kind: 'passkey' | 'totp';
  label: string;
  created_at: Date;
  last_used_at: Date | null;
}

export interface TotpRow {
  id: string;
  sealed: Buffer;
  lastStep: number | null;
}

export interface PasskeyRow {
  id: string;
  sub: string;
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[] | null;
}

/** A factor change for the people audit trail (`user_security_events`, people-audit/people-audit-repository.ts); the realm is the call's. Never a code, a secret, a challenge or a proof. */
export interface FactorAuditEvent {
  action: string;
  actorSub: string | null;
  actorEmail?: string | null;
  targetSub: string;
  targetEmail?: string | null;
  details?: Record<string, unknown>;
  address?: string | null;
}

/** A factor change's event: its action is the effects table's (changes/change-effects.ts). */
export type FactorChangeEvent = Omit<FactorAuditEvent, 'action'>;

export interface NewTotp {
  id: string;
  label: string;
  sealed: Buffer;
  /** The step of the code that confirmed it: that code is spent. */
  step: number;
  /** The factor generation the sign-in began at: refused (`StaleFactorGeneration`) once it moved. */
  generation?: number;
}

export interface NewPasskey {
  id: string;
  label: string;
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  aaguid: string;
  backedUp: boolean;
  /** As NewTotp's. */
  generation?: number;
}

/**
 * Holds the person's row (a reset or removal, which moves the generation, waits for this
 * transaction, and then takes the new factor away too) and refuses when the generation moved.
 */
async function assertGeneration(
  trx: Knex,
  realm: string,
  sub: string,
  generation: number | undefined,
): Promise<void> {
  if (generation === undefined) return;
  const row = await trx('users').where({ realm, sub }).forUpdate().first('factor_generation');
  if (row === undefined || Number(row.factor_generation) !== generation)
    throw new StaleFactorGeneration();
}

export interface UserFactorRepository {
  /** The live person (a deleted principal is not one), with the realm's policy and the factors held. */
  person(realm: string, sub: string): Promise<SignInPerson | undefined>;
  list(realm: string, sub: string): Promise<FactorView[]>;
  totpOf(realm: string, sub: string): Promise<TotpRow | undefined>;
  /**
   * Spends a TOTP time step: true when `step` is later than the last one accepted (one
   * conditional update, so two requests with one code cannot both pass).
   */
  claimTotpStep(realm: string, sub: string, factorId: string, step: number): Promise<boolean>;
  /**
   * One TOTP authenticator and a fresh set of recovery codes, in one transaction, with the
   * person's token version bumped (every session of theirs re-reads them and now needs the
   * factor for sensitive actions). Throws `DuplicateFactor`.
   */
  addTotp(
    realm: string,
    sub: string,
    totp: NewTotp,
    recoveryDigests: string[],
    event: FactorChangeEvent,
  ): Promise<RevocationEntry | undefined>;
  /** Replaces the person's recovery codes (the old ones stop working). */
  replaceRecoveryCodes(
    realm: string,
    sub: string,
    digests: string[],
    event: FactorChangeEvent,
  ): Promise<void>;
  /** Spends a recovery code: true once per code, whoever asks at the same moment. */
  useRecoveryCode(
    realm: string,
    sub: string,
    digest: string,
    event: FactorAuditEvent,
  ): Promise<boolean>;
  /** As `addTotp`: the token version bumped with it. Throws `DuplicateFactor`. */
  addPasskey(
    realm: string,
    sub: string,
    passkey: NewPasskey,
    event: FactorChangeEvent,
  ): Promise<RevocationEntry | undefined>;
  passkeysOf(realm: string, sub: string): Promise<PasskeyRow[]>;
  /** The passkey a discoverable sign-in names, in this realm. */
  passkeyByCredentialId(realm: string, credentialId: string): Promise<PasskeyRow | undefined>;
  /** Records a passkey's use; false when its counter went backwards meanwhile (a cloned authenticator, or a race). */
  usePasskey(factorId: string, previous: number, next: number): Promise<boolean>;
  /**
   * Removes one factor of the person (false when it is not theirs) and, as `reset`, ends every
   * session of theirs: factor generation and token version bumped, realm sessions deleted.
   */
  remove(
    realm: string,
    sub: string,
    factorId: string,
    event: FactorChangeEvent,
  ): Promise<{ removed: false } | { removed: true; revocation: RevocationEntry | undefined }>;
  /**
   * Removes every factor and recovery code of the person, moves their factor generation and
   * token version and deletes their realm sessions, in one transaction: their portal sessions
   * end at their next request and the realm signs nobody in from an old session (whoever held
   * one may hold the lost authenticator too).
   */
  reset(
    realm: string,
    sub: string,
    event: FactorChangeEvent,
  ): Promise<{ removed: number; revocation: RevocationEntry | undefined }>;
  /** The realm's `require_admin_factor`, undefined for an unknown realm. */
  policy(realm: string): Promise<boolean | undefined>;
  /**
   * False for an unknown realm. Switching the policy on bumps the token version of every active
   * Account Admin without a factor (returned): their portal sessions re-read them at their next
   * request and end, as the policy now requires what they lack.
   */
  setPolicy(
    realm: string,
    requireAdminFactor: boolean,
    event: PolicyEvent,
  ): Promise<RevocationEntry[] | false>;
  /** The person's last sign-in and its entry in the people trail, in one transaction. */
  recordSignIn(event: SignInEvent): Promise<void>;
}

export interface PolicyEvent {
  actorSub: string | null;
  actorEmail?: string | null;
  address?: string | null;
}

/** A factor change's event as the people audit trail takes it (no request id). */
function personEvent(event: FactorChangeEvent): PersonChangeEvent {
  return {
    actorSub: event.actorSub,
    actorEmail: event.actorEmail ?? null,
    targetSub: event.targetSub,
    targetEmail: event.targetEmail ?? null,
    details: event.details ?? {},
    address: event.address ?? null,
    requestId: null,
  };
}

function insertEvent(trx: Knex, realm: string, event: FactorAuditEvent): Promise<void> {
  return insertPeopleAuditEvent(trx, { ...personEvent(event), realm, action: event.action });
}

async function insertRecoveryCodes(trx: Knex, sub: string, digests: string[]): Promise<void> {
  await trx('user_recovery_codes').where({ sub }).delete();
  await trx('user_recovery_codes').insert(digests.map((digest) => ({ sub, digest })));
}

const toPasskey = (row: Record<string, unknown>): PasskeyRow => ({
  id: row.id as string,
  sub: row.sub as string,
  credentialId: row.credential_id as string,
  publicKey: row.public_key as Buffer,
  signCount: Number(row.sign_count),
  transports: (row.transports as string[] | null) ?? null,
});

/**
 * What taking a factor away does besides, in the caller's transaction: the person's factor
 * generation moves (a portal session or a realm sign-in begun before it ends), their realm
 * sessions go (no silent sign-in from a session that may be the thief's), and their token
 * version is bumped (every replica's portal re-reads them at their next request).
 */
async function takeFactorAway(
  trx: Knex,
  realm: string,
  sub: string,
  kind: 'person.factor-remove' | 'person.factors-reset',
  event: FactorChangeEvent,
): Promise<RevocationEntry | undefined> {
  await trx('users')
    .where({ realm, sub })
    .update({ factor_generation: trx.raw('factor_generation + 1') });
  return applyPersonChange(trx, realm, sub, kind, personEvent(event));
}

/** The realm's active Account Admins who hold no second factor (bounded by the realm's people). */
async function adminsWithoutFactor(trx: Knex, realm: string): Promise<string[]> {
  const rows = await trx('users as u')
    .join('principals as p', 'p.sub', 'u.sub')
    .where({ 'u.realm': realm, 'u.role': 'Account Admin' })
    .whereNull('u.disabled_at')
    .whereNull('p.deleted_at')
    .whereNotExists((q) =>
      q.select(trx.raw('1')).from('user_factors as f').whereRaw('f.sub = u.sub'),
    )
    .select('u.sub');
  return rows.map((r: { sub: string }) => r.sub);
}

/**
 * Second factors and the realm policy. Every change that a person's trail should show writes
 * its `user_security_events` row in the same transaction: the trail cannot miss a change nor
 * name one that was rolled back. The factors of a person are always read with the person's
 * realm in the condition, so an id from another realm finds nothing.
 */
// long: a repository factory, one method per query (or per transaction with its security event)
export function createUserFactorRepository(db: Knex): UserFactorRepository {
  return {
    async person(realm, sub) {
      const row = await db('users as u')
        .join('principals as p', 'p.sub', 'u.sub')
        .join('realms as r', 'r.name', 'u.realm')
        .whereNull('p.deleted_at')
        .where({ 'u.realm': realm, 'u.sub': sub })
        .first(
          'u.sub',
          'u.email',
          'u.role',
          db.raw('u.disabled_at is not null as disabled'),
          'r.require_admin_factor',
          'u.factor_generation',
          db.raw(
            "(select count(*)::int from user_factors f where f.sub = u.sub and f.realm = u.realm and f.kind = 'passkey') as passkeys",
          ),
          db.raw(
            "exists (select 1 from user_factors f where f.sub = u.sub and f.realm = u.realm and f.kind = 'totp') as totp",
          ),
          db.raw(
            '(select count(*)::int from user_recovery_codes c where c.sub = u.sub and c.used_at is null) as recovery_codes_left',
          ),
        );
      if (!row) return undefined;
      return {
        sub: row.sub,
        email: row.email,
        role: row.role,
        disabled: row.disabled,
        requireAdminFactor: row.require_admin_factor,
        passkeys: row.passkeys,
        totp: row.totp,
        recoveryCodesLeft: row.recovery_codes_left,
        factorGeneration: Number(row.factor_generation),
      };
    },
    async list(realm, sub) {
      return db('user_factors')
        .where({ realm, sub })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .select('id', 'kind', 'label', 'created_at', 'last_used_at');
    },
    async totpOf(realm, sub) {
      const row = await db('user_factors')
        .where({ realm, sub, kind: 'totp' })
        .first('id', 'totp_secret_encrypted', 'totp_last_step');
      if (!row) return undefined;
      return {
        id: row.id,
        sealed: row.totp_secret_encrypted,
        lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
      };
    },
    async claimTotpStep(realm, sub, factorId, step) {
      const updated = await db('user_factors')
        .where({ id: factorId, realm, sub, kind: 'totp' })
        .andWhere((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
        .update({ totp_last_step: step, last_used_at: db.fn.now() });
      return updated === 1;
    },
    async addTotp(realm, sub, totp, recoveryDigests, event) {
      return db.transaction(async (trx) => {
        await assertGeneration(trx, realm, sub, totp.generation);
        try {
          await trx('user_factors').insert({
            id: totp.id,
            sub,
            realm,
            kind: 'totp',
            label: totp.label,
            totp_secret_encrypted: totp.sealed,
            totp_last_step: totp.step,
            last_used_at: trx.fn.now(),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateFactor();
          throw err;
        }
        await insertRecoveryCodes(trx, sub, recoveryDigests);
        return applyPersonChange(trx, realm, sub, 'person.factor-enrol', personEvent(event));
      });
    },
    async replaceRecoveryCodes(realm, sub, digests, event) {
      await db.transaction(async (trx) => {
        await insertRecoveryCodes(trx, sub, digests);
        await applyPersonChange(trx, realm, sub, 'person.recovery-codes-new', personEvent(event));
      });
    },
    async useRecoveryCode(realm, sub, digest, event) {
      return db.transaction(async (trx) => {
        const used = await trx('user_recovery_codes')
          .where({ sub, digest })
          .whereNull('used_at')
          .update({ used_at: trx.fn.now() });
        if (used !== 1) return false;
        await insertEvent(trx, realm, event);
        return true;
      });
    },
    async addPasskey(realm, sub, passkey, event) {
      return db.transaction(async (trx) => {
        await assertGeneration(trx, realm, sub, passkey.generation);
        try {
          await trx('user_factors').insert({
            id: passkey.id,
            sub,
            realm,
            kind: 'passkey',
            label: passkey.label,
            credential_id: passkey.credentialId,
            public_key: passkey.publicKey,
            sign_count: passkey.signCount,
            transports: passkey.transports,
            aaguid: passkey.aaguid,
            backed_up: passkey.backedUp,
            last_used_at: trx.fn.now(),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateFactor();
          throw err;
        }
        return applyPersonChange(trx, realm, sub, 'person.factor-enrol', personEvent(event));
      });
    },
    async passkeysOf(realm, sub) {
      const rows = await db('user_factors')
        .where({ realm, sub, kind: 'passkey' })
        .select('id', 'sub', 'credential_id', 'public_key', 'sign_count', 'transports');
      return rows.map(toPasskey);
    },
    async passkeyByCredentialId(realm, credentialId) {
      const row = await db('user_factors')
        .where({ realm, credential_id: credentialId, kind: 'passkey' })
        .first('id', 'sub', 'credential_id', 'public_key', 'sign_count', 'transports');
      return row ? toPasskey(row) : undefined;
    },
    async usePasskey(factorId, previous, next) {
      const updated = await db('user_factors')
        .where({ id: factorId, sign_count: previous })
        .update({ sign_count: next, last_used_at: db.fn.now() });
      return updated === 1;
    },
    async remove(realm, sub, factorId, event) {
      return db.transaction(async (trx) => {
        const removed = await trx('user_factors').where({ id: factorId, realm, sub }).delete();
        if (removed !== 1) return { removed: false as const };
        // The codes back up the authenticator app: with no factor left they would be a factor of their own.
        const left = await trx('user_factors').where({ realm, sub }).first('id');
        if (!left) await trx('user_recovery_codes').where({ sub }).delete();
        const revocation = await takeFactorAway(trx, realm, sub, 'person.factor-remove', event);
        return { removed: true as const, revocation };
      });
    },
    async reset(realm, sub, event) {
      return db.transaction(async (trx) => {
        const removed = await trx('user_factors').where({ realm, sub }).delete();
        await trx('user_recovery_codes').where({ sub }).delete();
        const counted = { ...event, details: { ...event.details, removed } };
        return {
          removed,
          revocation: await takeFactorAway(trx, realm, sub, 'person.factors-reset', counted),
        };
      });
    },
    async policy(realm) {
      const row = await db('realms').where({ name: realm }).first('require_admin_factor');
      return row?.require_admin_factor;
    },
    async setPolicy(realm, requireAdminFactor, event) {
      return db.transaction((trx) => writeFactorPolicy(trx, realm, requireAdminFactor, event));
    },
    async recordSignIn(event) {
      await db.transaction(async (trx) => {
        await trx('users')
          .where({ realm: event.realm, sub: event.sub })
          .update({ last_sign_in_at: trx.fn.now() });
        await insertSignInEvent(trx, event);
      });
    },
  };
}

/** The realm's factor policy set, with what the effects table says the change does besides. */
async function writeFactorPolicy(
  trx: Knex,
  realm: string,
  requireAdminFactor: boolean,
  event: PolicyEvent,
): Promise<RevocationEntry[] | false> {
  const updated = await trx('realms')
    .where({ name: realm })
    .update({ require_admin_factor: requireAdminFactor });
  if (updated !== 1) return false;
  const effects = effectsOf('realm.factor-policy');
  const affected = requireAdminFactor ? await adminsWithoutFactor(trx, realm) : [];
  if (effects.audit !== null)
    await insertPeopleAuditEvent(trx, {
      realm,
      action: effects.audit,
      actorSub: event.actorSub,
      actorEmail: event.actorEmail ?? null,
      targetSub: null,
      targetEmail: null,
      details: { require_admin_factor: requireAdminFactor },
      address: event.address ?? null,
      requestId: null,
    });
  const entries: RevocationEntry[] = [];
  if (effects.revokes === 'none') return entries;
  for (const sub of affected) {
    const entry = await bumpTokenVersion(trx, realm, sub);
    if (entry) entries.push(entry);
  }
  return entries;
}
