import type { Knex } from '@plant/shared/db';
import { meets, takePrecondition } from '@plant/shared/http';
import { PreconditionFailed } from '../platform/index.js';
import type {
  GrantQuota,
  LeakResponse,
  QuotaMode,
  RevocationEntry,
} from '@plant/shared/token-service-client';
import { bumpTokenVersion, changeAccount, findLiveEntry } from '../service-accounts/index.js';
import { effectsOf } from '../changes/index.js';
import { lockRealm } from '../realms/index.js';
import { insertPeopleAuditEvent } from '../people-audit/index.js';
import { deleteSecrets, mirrorNewestSecret } from './account-secret-repository.js';

/** A realm's credential policy as stored; a realm without a row has the defaults. */
export interface CredentialPolicyRow {
  secret_max_age_days: number | null;
  leak_response: LeakResponse;
  quota_per_minute: number;
  quota_mode: QuotaMode;
  updated_at: Date | null;
  updated_by: string | null;
  /** Counted up by every change (the policy's `ETag`); the defaults are revision 1. */
  revision: number;
}

export const DEFAULT_POLICY: CredentialPolicyRow = Object.freeze({
  secret_max_age_days: null,
  leak_response: 'revoke',
  quota_per_minute: 600,
  quota_mode: 'off',
  updated_at: null,
  updated_by: null,
  revision: 1,
});

export interface CredentialPolicyChange {
  secret_max_age_days?: number | null | undefined;
  leak_response?: LeakResponse | undefined;
  quota_per_minute?: number | undefined;
  quota_mode?: QuotaMode | undefined;
}

/** The live secret a leak report named: its account, and what the account's realm does with a leak. */
export interface LeakedSecret {
  realm: string;
  sub: string;
  /** Which of the account's secrets it is. */
  id: string;
  leak_response: LeakResponse;
}

/** Where a report says a secret was found. */
export interface LeakReport {
  url: string;
  source: string;
  reporter: string;
}

export interface LeakRow {
  url: string;
  source: string;
  reporter: string;
  action: 'revoked' | 'notified';
  reported_at: Date;
  /** The leaked secret is still the account's (reported only, and not reset since). */
  secret_current: boolean;
  /** Which secret leaked; null for leaks recorded before secrets had ids. */
  secret_id: string | null;
}

/** A credential change for the people audit trail (`user_security_events`, people-audit/people-audit-repository.ts), which account-admin's trail shows beside its own. */
export interface CredentialAuditEvent {
  realm: string;
  actorLabel: string;
  action: string;
  targetSub: string;
  details: Record<string, unknown>;
}

/** Leaks kept per account: the latest, so a secret reported from many places costs a bounded number of rows. */
export const LEAKS_KEPT_PER_ACCOUNT = 20;

/**
 * The tenant's credential policy, the per-account quota override, leak reports and the
 * realm's security events they write. A change that the token endpoint must see (the policy,
 * an override, a leak) counts a credential change of each account it touches
 * (`credentials_revision`, through `changeAccount`), and its answer is the accounts' revocation
 * entries, which the caller publishes: every replica's credential cache drops them at once.
 */
export interface CredentialHygieneRepository {
  policy(realm: string): Promise<CredentialPolicyRow>;
  /** Undefined for an unknown realm; else the policy and the entry of every account of the realm (to publish). */
  updatePolicy(
    realm: string,
    change: CredentialPolicyChange,
    actor: string | null,
  ): Promise<{ policy: CredentialPolicyRow; entries: RevocationEntry[] } | undefined>;
  /** The override (null: the tenant's default); revokes nothing. Undefined when there is no such account. */
  setQuota(
    realm: string,
    sub: string,
    quota: GrantQuota | null,
  ): Promise<RevocationEntry | undefined>;
  /** The account whose current secret has this digest, in any realm. */
  findLiveSecret(digest: string): Promise<LeakedSecret | undefined>;
  /**
   * Records the leak of the account's secret and, when `revoke`, removes the secret and bumps
   * the token version, all in one transaction on the locked account. `changed` when the
   * account's secret is no longer this one (reset or revoked meanwhile), `already-reported`
   * when a kept secret (notify only) was reported at this url before: nothing is written.
   */
  recordLeak(
    secret: LeakedSecret,
    digest: string,
    report: LeakReport,
  ): Promise<RevocationEntry | 'changed' | 'already-reported' | undefined>;
  /** Whether this digest was reported before (a repeated report of a secret already handled). */
  wasReported(digest: string): Promise<boolean>;
  leaks(realm: string, sub: string): Promise<LeakRow[]>;
  recordEvent(event: CredentialAuditEvent): Promise<void>;
}

const POLICY_COLUMNS = [
  'secret_max_age_days',
  'leak_response',
  'quota_per_minute',
  'quota_mode',
  'updated_at',
  'updated_by',
  'revision',
];

function definedOnly(change: CredentialPolicyChange): Record<string, unknown> {
  return Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined));
}

function insertEvent(db: Knex, event: CredentialAuditEvent): Promise<void> {
  return insertPeopleAuditEvent(db, {
    realm: event.realm,
    action: event.action,
    actorSub: null,
    actorEmail: event.actorLabel,
    targetSub: event.targetSub,
    targetEmail: null,
    details: event.details,
    address: null,
    requestId: null,
  });
}

function updatePolicy(
  db: Knex,
  realm: string,
  change: CredentialPolicyChange,
  actor: string | null,
): ReturnType<CredentialHygieneRepository['updatePolicy']> {
  // The request's `If-Match` (`conditionalRoute`), decided under the realm's lock: of two
  // changes naming the same revision, the second finds the first's and gets 412.
  const precondition = takePrecondition();
  return db.transaction(async (trx) => {
    if (!(await lockRealm(trx, realm))) return undefined;
    const current = (await trx('realm_credential_policies').where({ realm }).first('revision')) as
      | { revision: string | number }
      | undefined;
    const revision = current === undefined ? DEFAULT_POLICY.revision : Number(current.revision);
    if (precondition !== undefined && !meets(precondition, revision))
      throw new PreconditionFailed();
    const [row] = await trx('realm_credential_policies')
      .insert({ realm, ...definedOnly(change), updated_by: actor, revision: revision + 1 })
      .onConflict('realm')
      .merge({
        ...definedOnly(change),
        updated_at: trx.fn.now(),
        updated_by: actor,
        revision: revision + 1,
      })
      .returning(POLICY_COLUMNS);
    const policy = { ...row, revision: Number(row.revision) };
    // Every account's cached credential carries the policy: the table's entry for
    // `realm.credential-policy` says each is counted changed and announced, none revoked.
    const effects = effectsOf('realm.credential-policy');
    const accounts = trx('service_accounts').where({ realm });
    const subs: string[] = effects.countsCredentialChange
      ? await accounts
          .increment('credentials_revision', 1)
          .returning('sub')
          .then((rows: { sub: string }[]) => rows.map((r) => r.sub))
      : await accounts.pluck('sub');
    const entries: RevocationEntry[] = [];
    for (const sub of subs) {
      const entry =
        effects.revokes === 'none'
          ? await findLiveEntry(trx, realm, sub)
          : await bumpTokenVersion(trx, realm, sub);
      if (entry !== undefined) entries.push(entry);
    }
    return { policy: policy as CredentialPolicyRow, entries };
  });
}

async function setQuota(
  db: Knex,
  realm: string,
  sub: string,
  quota: GrantQuota | null,
): ReturnType<CredentialHygieneRepository['setQuota']> {
  const change = { kinds: ['service-account.quota-change'] } as const;
  const outcome = await changeAccount<never>(db, realm, sub, change, async (trx) => {
    await trx('service_accounts')
      .where({ sub })
      .update({
        quota_per_minute: quota?.per_minute ?? null,
        quota_mode: quota?.mode ?? null,
      });
  });
  return outcome;
}

function recordLeak(
  db: Knex,
  secret: LeakedSecret,
  digest: string,
  report: LeakReport,
): ReturnType<CredentialHygieneRepository['recordLeak']> {
  const revoke = secret.leak_response === 'revoke';
  const kind = revoke ? 'service-account.leak-revoke' : 'service-account.leak-notify';
  const { sub } = secret;
  return changeAccount<'changed' | 'already-reported'>(
    db,
    secret.realm,
    sub,
    { kinds: [kind] },
    async (trx, changed) => {
      const current = await trx('service_account_secrets')
        .where({ sub, id: secret.id, digest })
        .first('id');
      if (current === undefined) return 'changed';
      if (
        !revoke &&
        (await trx('service_account_leaks')
          .where({ sub, secret_digest: digest, url: report.url })
          .first('id')) !== undefined
      )
        return 'already-reported';
      // Only the leaked secret goes, with exactly its tokens; the account's other secret keeps
      // working. The RISC credential-compromise the table lists names it (changeAccount).
      if (revoke) {
        changed.push(...(await deleteSecrets(trx, sub, [secret.id])));
        await mirrorNewestSecret(trx, sub);
      }
      await trx('service_account_leaks').insert({
        realm: secret.realm,
        sub: secret.sub,
        secret_id: secret.id,
        secret_digest: digest,
        url: report.url,
        source: report.source,
        reporter: report.reporter,
        action: revoke ? 'revoked' : 'notified',
      });
      await trx.raw(
        `delete from service_account_leaks where sub = ? and id not in
         (select id from service_account_leaks where sub = ? order by id desc limit ?)`,
        [secret.sub, secret.sub, LEAKS_KEPT_PER_ACCOUNT],
      );
      await insertEvent(trx, {
        realm: secret.realm,
        actorLabel: report.reporter,
        action: effectsOf(kind).audit!,
        targetSub: secret.sub,
        details: { url: report.url, source: report.source, secret_id: secret.id },
      });
      return undefined;
    },
  );
}

export function createCredentialHygieneRepository(db: Knex): CredentialHygieneRepository {
  return {
    async policy(realm) {
      const row = await db('realm_credential_policies').where({ realm }).first(POLICY_COLUMNS);
      // bigint arrives as a string; a revision stays far below 2^53.
      return row === undefined ? DEFAULT_POLICY : { ...row, revision: Number(row.revision) };
    },

    updatePolicy: (realm, change, actor) => updatePolicy(db, realm, change, actor),

    setQuota: (realm, sub, quota) => setQuota(db, realm, sub, quota),

    async findLiveSecret(digest) {
      return db('service_account_secrets as s')
        .leftJoin('realm_credential_policies as cp', 'cp.realm', 's.realm')
        .where('s.digest', digest)
        .first(
          's.realm',
          's.sub',
          's.id',
          db.raw("coalesce(cp.leak_response, 'revoke') as leak_response"),
        );
    },

    recordLeak: (secret, digest, report) => recordLeak(db, secret, digest, report),

    async wasReported(digest) {
      const row = await db('service_account_leaks').where({ secret_digest: digest }).first('id');
      return row !== undefined;
    },

    leaks(realm, sub) {
      return db('service_account_leaks as l')
        .where({ 'l.realm': realm, 'l.sub': sub })
        .orderBy('l.id', 'desc')
        .limit(LEAKS_KEPT_PER_ACCOUNT)
        .select(
          'l.url',
          'l.source',
          'l.reporter',
          'l.action',
          'l.reported_at',
          'l.secret_id',
          db.raw(
            'exists (select 1 from service_account_secrets s where s.sub = l.sub and s.digest = l.secret_digest) as secret_current',
          ),
        );
    },

    recordEvent(event) {
      return insertEvent(db, event);
    },
  };
}
