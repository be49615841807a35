import { nameKey } from '@plant/shared/api';
import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type {
  Grant,
  QuotaMode,
  RevocationEntry,
  ServiceAccountRole,
} from '@plant/shared/token-service-client';
import { changeAccount } from './account-change.js';
import { insertPrincipal } from './principal-repository.js';
import { lockRealm } from '../realms/index.js';
import { type AccountSignal, recordSignals } from '../signals/index.js';

export interface ServiceAccountRow {
  sub: string;
  realm: string;
  name: string;
  role: ServiceAccountRole;
  grants: Grant[];
  dpop_bound_access_tokens: boolean;
  receive_signals: boolean;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
  disabled_at: Date | null;
  secret_created_at: Date | null;
  /** The realm's maximum secret age (null: none). */
  secret_max_age_days: number | null;
  /** The account's own quota (both null: the realm's default). */
  quota_per_minute: number | null;
  quota_mode: QuotaMode | null;
}

export interface NewServiceAccount {
  sub: string;
  realm: string;
  name: string;
  role: ServiceAccountRole;
  secretDigest: string;
  createdBy: string | null;
}

/** What a change may replace; each given part is written. */
export interface ServiceAccountChange {
  role?: ServiceAccountRole | undefined;
  grants?: Grant[] | undefined;
  dpopBoundAccessTokens?: boolean | undefined;
  receiveSignals?: boolean | undefined;
  secretDigest?: string | undefined;
}

/**
 * What a change reports to Shared Signals receivers: a new secret is a CAEP credential change;
 * anything else revokes the account's older tokens (role, grants, DPoP requirement, receiving
 * signals), a CAEP session revocation.
 */
function signalsOfChange(change: ServiceAccountChange): AccountSignal[] {
  const signals: AccountSignal[] = [];
  if (change.secretDigest !== undefined)
    signals.push({ type: 'credential-change', credential: 'secret', change: 'update' });
  const revoking = [
    change.role !== undefined && 'role',
    change.grants !== undefined && 'grants',
    change.dpopBoundAccessTokens !== undefined && 'DPoP requirement',
    change.receiveSignals !== undefined && 'signal reception',
  ].filter((part): part is string => part !== false);
  if (revoking.length > 0)
    signals.push({
      type: 'session-revoked',
      reason: `The service account's ${revoking.join(', ')} changed; its older tokens are revoked`,
    });
  return signals;
}

export class DuplicateServiceAccountName extends Error {}

export interface ServiceAccountRepository {
  /** The realm's accounts by name (case-insensitive). */
  list(realm: string): Promise<ServiceAccountRow[]>;
  find(realm: string, sub: string): Promise<ServiceAccountRow | undefined>;
  /**
   * Inserts the account while the realm row is locked, so creates of one realm run one after
   * another and the count is exact. Throws `DuplicateServiceAccountName` (the unique indexes on
   * (realm, lower(name)) and (realm, name_key) back the name rule: `nameKey` folds case,
   * compatibility forms and look-alike characters).
   */
  create(
    account: NewServiceAccount,
    limit: number,
  ): Promise<'created' | 'unknown-realm' | 'limit-reached'>;
  /** Applies the change to the locked account and bumps its token version in the same transaction; undefined when there is no such account. */
  update(
    realm: string,
    sub: string,
    change: ServiceAccountChange,
  ): Promise<RevocationEntry | undefined>;
  /** Removes the credentials (secret, keys, trusts) and grants and marks the principal deleted (its row stays for revocation), bumping its version. */
  delete(realm: string, sub: string): Promise<RevocationEntry | undefined>;
}

export const GRANTS_JSON = `coalesce((select json_agg(json_build_object('tag', g.tag, 'permission', g.permission) order by g.tag)
  from grants g where g.sub = sa.sub), '[]'::json) as grants`;

export function createServiceAccountRepository(db: Knex): ServiceAccountRepository {
  const selectAccounts = () =>
    db('service_accounts as sa')
      .join('principals as p', 'p.sub', 'sa.sub')
      .leftJoin('realm_credential_policies as cp', 'cp.realm', 'sa.realm')
      .select(
        'sa.sub',
        'sa.realm',
        'sa.name',
        'sa.role',
        'sa.dpop_bound_access_tokens',
        'sa.receive_signals',
        'p.created_at',
        'p.created_by',
        'sa.last_used_at',
        'sa.disabled_at',
        'sa.secret_created_at',
        'cp.secret_max_age_days',
        'sa.quota_per_minute',
        'sa.quota_mode',
        db.raw(GRANTS_JSON),
      );

  return {
    async list(realm) {
      return selectAccounts().where('sa.realm', realm).orderByRaw('lower(sa.name), sa.name');
    },
    async find(realm, sub) {
      return selectAccounts().where({ 'sa.realm': realm, 'sa.sub': sub }).first();
    },
    create(account, limit) {
      return db.transaction(async (trx) => {
        if (!(await lockRealm(trx, account.realm))) return 'unknown-realm';
        const counted = await trx('service_accounts')
          .where({ realm: account.realm })
          .count<{ count: string }[]>({ count: '*' })
          .first();
        if (Number(counted?.count ?? 0) >= limit) return 'limit-reached';
        await insertPrincipal(trx, {
          sub: account.sub,
          realm: account.realm,
          kind: 'service_account',
          created_by: account.createdBy,
        });
        try {
          await trx('service_accounts').insert({
            sub: account.sub,
            realm: account.realm,
            name: account.name,
            name_key: nameKey(account.name),
            role: account.role,
            secret_digest: account.secretDigest,
            secret_created_at: trx.fn.now(),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateServiceAccountName(account.name);
          throw err;
        }
        await recordSignals(trx, account.realm, account.sub, [
          { type: 'credential-change', credential: 'secret', change: 'create' },
        ]);
        return 'created';
      });
    },
    update(realm, sub, change) {
      const { role, grants, dpopBoundAccessTokens, receiveSignals, secretDigest } = change;
      const effect = { revoke: true, signals: signalsOfChange(change) };
      return changeAccount<never>(db, realm, sub, effect, async (trx) => {
        if (role !== undefined) await trx('service_accounts').where({ sub }).update({ role });
        if (dpopBoundAccessTokens !== undefined)
          await trx('service_accounts')
            .where({ sub })
            .update({ dpop_bound_access_tokens: dpopBoundAccessTokens });
        if (receiveSignals !== undefined)
          await trx('service_accounts').where({ sub }).update({ receive_signals: receiveSignals });
        if (grants !== undefined) {
          await trx('grants').where({ sub }).delete();
          if (grants.length > 0)
            await trx('grants').insert(
              grants.map((g) => ({ sub, tag: g.tag, permission: g.permission })),
            );
        }
        // A new secret starts its own life: created now, never used.
        if (secretDigest !== undefined)
          await trx('service_accounts').where({ sub }).update({
            secret_digest: secretDigest,
            secret_created_at: trx.fn.now(),
            secret_last_used_at: null,
          });
      });
    },
    delete(realm, sub) {
      const effect = {
        revoke: true,
        deleted: true,
        signals: [
          { type: 'session-revoked', reason: 'The service account was deleted' },
          { type: 'account-purged' },
        ] as const,
      };
      return changeAccount<never>(db, realm, sub, effect, async (trx) => {
        for (const table of ['grants', 'service_account_keys', 'service_account_trusts'])
          await trx(table).where({ sub }).delete();
        await trx('service_accounts').where({ sub }).delete();
        // A receiver's own streams go with it (their queued events too, by cascade).
        await trx('ssf_streams').where({ realm, owner_sub: sub }).delete();
      });
    },
  };
}
