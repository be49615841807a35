import { DuplicateServiceAccountName } from '../platform/index.js';
import { nameKey } from '@plant/shared/api';
import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type {
  Grant,
  QuotaMode,
  RevocationEntry,
  ServiceAccountRole,
} from '@plant/shared/token-service-client';
import { type AccountChange, changeAccount } from './account-change.js';
import { type AccountChangeKind, effectsOf } from '../changes/index.js';
import { insertPrincipal } from './principal-repository.js';
import { lockRealm } from '../realms/index.js';
import { recordSignals } from '../signal-outbox/index.js';
import { insertSecret, newSecretId, replaceSecrets } from '../credentials/index.js';

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
  /** Counted up by every change (account-change.ts); bigint, read as a string by pg. */
  revision: number | string;
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
 * The kinds a change is made of (changes/change-effects.ts): a new secret is a secret reset;
 * anything else, and an empty change, is a settings change, which revokes the account's older
 * tokens and names the parts it changed (role, grants, DPoP requirement, receiving signals).
 */
export function kindsOfChange(change: ServiceAccountChange): AccountChange {
  const parts = [
    change.role !== undefined && 'role',
    change.grants !== undefined && 'grants',
    change.dpopBoundAccessTokens !== undefined && 'DPoP requirement',
    change.receiveSignals !== undefined && 'signal reception',
  ].filter((part): part is string => part !== false);
  const kinds: AccountChangeKind[] = [];
  if (change.secretDigest !== undefined) kinds.push('service-account.secret-reset');
  if (parts.length > 0 || change.secretDigest === undefined)
    kinds.push('service-account.settings-change');
  return { kinds, parts };
}

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

function selectAccounts(db: Knex) {
  return db('service_accounts as sa')
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
      'sa.revision',
      db.raw(GRANTS_JSON),
    );
}

/** The principal and the account row, in the caller's transaction; a taken name throws `DuplicateServiceAccountName`. */
async function insertAccount(trx: Knex.Transaction, account: NewServiceAccount): Promise<void> {
  await insertPrincipal(trx, {
    sub: account.sub,
    realm: account.realm,
    kind: 'service_account',
    created_by: account.createdBy,
  });
  // Before the account row: the trigger that carries a previous release's writes into the
  // secrets finds it there and adds none. now() is the transaction's start: both agree.
  await insertSecret(trx, account.realm, account.sub, {
    id: newSecretId(),
    digest: account.secretDigest,
    expiresAt: null,
    createdBy: account.createdBy,
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
}

function createAccount(
  db: Knex,
  account: NewServiceAccount,
  limit: number,
): Promise<'created' | 'unknown-realm' | 'limit-reached'> {
  return db.transaction(async (trx) => {
    if (!(await lockRealm(trx, account.realm))) return 'unknown-realm';
    const counted = await trx('service_accounts')
      .where({ realm: account.realm })
      .count<{ count: string }[]>({ count: '*' })
      .first();
    if (Number(counted?.count ?? 0) >= limit) return 'limit-reached';
    await insertAccount(trx, account);
    const effects = effectsOf('service-account.create');
    await recordSignals(trx, account.realm, account.sub, effects.signals, effects.initiatedBy);
    return 'created';
  });
}

/** Role, DPoP requirement, signal reception and grants: each given part is written. */
async function writeSettings(
  trx: Knex.Transaction,
  sub: string,
  { role, grants, dpopBoundAccessTokens, receiveSignals }: ServiceAccountChange,
): Promise<void> {
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
}

/** The reset's write: the new digest replaces every secret; a new secret starts its own life, created now, never used. */
async function writeSecret(
  trx: Knex.Transaction,
  realm: string,
  sub: string,
  secretDigest: string,
): Promise<void> {
  await replaceSecrets(trx, realm, sub, {
    id: newSecretId(),
    digest: secretDigest,
    expiresAt: null,
    createdBy: null,
  });
}

function updateAccount(
  db: Knex,
  realm: string,
  sub: string,
  change: ServiceAccountChange,
): Promise<RevocationEntry | undefined> {
  return changeAccount<never>(db, realm, sub, kindsOfChange(change), async (trx) => {
    await writeSettings(trx, sub, change);
    if (change.secretDigest !== undefined) await writeSecret(trx, realm, sub, change.secretDigest);
  });
}

function deleteAccount(db: Knex, realm: string, sub: string): Promise<RevocationEntry | undefined> {
  const change = { kinds: ['service-account.delete'] } as const;
  return changeAccount<never>(db, realm, sub, change, async (trx) => {
    for (const table of [
      'grants',
      'service_account_keys',
      'service_account_trusts',
      'service_account_secrets',
    ])
      await trx(table).where({ sub }).delete();
    await trx('service_accounts').where({ sub }).delete();
    // A receiver's own streams go with it (their queued events too, by cascade).
    await trx('ssf_streams').where({ realm, owner_sub: sub }).delete();
  });
}

export function createServiceAccountRepository(db: Knex): ServiceAccountRepository {
  return {
    async list(realm) {
      return selectAccounts(db).where('sa.realm', realm).orderByRaw('lower(sa.name), sa.name');
    },
    async find(realm, sub) {
      return selectAccounts(db).where({ 'sa.realm': realm, 'sa.sub': sub }).first();
    },
    create: (account, limit) => createAccount(db, account, limit),
    update: (realm, sub, change) => updateAccount(db, realm, sub, change),
    delete: (realm, sub) => deleteAccount(db, realm, sub),
  };
}
