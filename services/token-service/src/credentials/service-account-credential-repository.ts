import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { changeAccount } from '../service-accounts/index.js';
import { lockRealm } from '../realms/index.js';
import {
  countLiveSecrets,
  credentialOfSecret,
  deleteDeadSecrets,
  deleteSecrets,
  insertSecret,
  MAX_LIVE_SECRETS,
  mirrorNewestSecret,
  type NewAccountSecret,
} from './account-secret-repository.js';
import { credentialName } from './credential-names.js';

export interface AccountKeyRow {
  id: string;
  alg: string;
  public_jwk: Record<string, unknown>;
  thumbprint: string;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
}

export interface AccountTrustRow {
  id: string;
  issuer: string;
  subject: string;
  audience: string;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
}

export interface AccountSecretRow {
  id: string;
  created_at: Date;
  expires_at: Date | null;
  created_by: string | null;
  last_used_at: Date | null;
}

/** Every credential of one account, as the API shows them (never the secret's digest). */
export interface AccountCredentialsRow {
  /** The newest secret (the single-secret API's view). */
  secret: { created_at: Date; last_used_at: Date | null; max_age_days: number | null } | null;
  /** Every secret, oldest first. */
  secrets: AccountSecretRow[];
  /** The realm's maximum secret age (null: none). */
  max_age_days: number | null;
  keys: AccountKeyRow[];
  trusts: AccountTrustRow[];
  disabled_at: Date | null;
}

export interface NewAccountKey {
  id: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  thumbprint: string;
  createdBy: string | null;
}

export interface NewAccountTrust {
  id: string;
  issuer: string;
  subject: string;
  audience: string;
  createdBy: string | null;
}

export interface TrustLimits {
  perAccount: number;
  /** Distinct issuers over all of a tenant's trusts. */
  issuersPerTenant: number;
}

/**
 * Keys, trusts, the secret's removal and disabling. Each change runs on the locked account
 * (`changeAccount`), so counts and duplicate checks under it are exact; what each kind of change
 * revokes and signals is its entry in changes/change-effects.ts (removing a credential and
 * disabling revoke), applied in the same transaction. Answers: the account's revocation entry, a refusal, or undefined for no such account.
 */
export interface ServiceAccountCredentialRepository {
  credentials(realm: string, sub: string): Promise<AccountCredentialsRow | undefined>;
  addKey(
    realm: string,
    sub: string,
    key: NewAccountKey,
    limit: number,
  ): Promise<RevocationEntry | 'limit-reached' | 'duplicate' | undefined>;
  removeKey(
    realm: string,
    sub: string,
    id: string,
  ): Promise<RevocationEntry | 'not-found' | undefined>;
  /** Takes the realm's lock too, so the tenant's distinct issuers are counted exactly. */
  addTrust(
    realm: string,
    sub: string,
    trust: NewAccountTrust,
    limits: TrustLimits,
  ): Promise<RevocationEntry | 'limit-reached' | 'issuer-limit-reached' | 'duplicate' | undefined>;
  removeTrust(
    realm: string,
    sub: string,
    id: string,
  ): Promise<RevocationEntry | 'not-found' | undefined>;
  /** Every secret goes (exactly their tokens are revoked). Refused while the account has no key and no trust (it would have no credential), or has no secret. */
  removeSecret(
    realm: string,
    sub: string,
  ): Promise<RevocationEntry | 'no-other-credential' | 'no-secret' | undefined>;
  /** A secret beside the live one; refused when `MAX_LIVE_SECRETS` are live already (dead ones go first). Revokes nothing. */
  addSecret(
    realm: string,
    sub: string,
    secret: NewAccountSecret,
  ): Promise<RevocationEntry | 'limit-reached' | undefined>;
  /** One secret goes, and exactly its tokens are revoked; refused when it is the account's last credential. */
  removeSecretById(
    realm: string,
    sub: string,
    id: string,
  ): Promise<RevocationEntry | 'not-found' | 'no-other-credential' | undefined>;
  /** Disabling revokes every token; enabling revokes nothing. Setting the state it has changes nothing (`unchanged`). */
  setDisabled(
    realm: string,
    sub: string,
    disabled: boolean,
  ): Promise<RevocationEntry | 'unchanged' | undefined>;
}

const KEY_COLUMNS = [
  'id',
  'alg',
  'public_jwk',
  'thumbprint',
  'created_at',
  'created_by',
  'last_used_at',
];
const TRUST_COLUMNS = [
  'id',
  'issuer',
  'subject',
  'audience',
  'created_at',
  'created_by',
  'last_used_at',
];

async function countOf(query: Knex.QueryBuilder): Promise<number> {
  const row = (await query.count<{ count: string }[]>({ count: '*' }).first()) as
    | { count: string }
    | undefined;
  return Number(row?.count ?? 0);
}

async function readCredentials(
  db: Knex,
  realm: string,
  sub: string,
): ReturnType<ServiceAccountCredentialRepository['credentials']> {
  const account = await db('service_accounts as sa')
    .leftJoin('realm_credential_policies as cp', 'cp.realm', 'sa.realm')
    .where({ 'sa.realm': realm, 'sa.sub': sub })
    .first(
      'sa.secret_digest',
      'sa.secret_created_at',
      'sa.secret_last_used_at',
      'sa.disabled_at',
      'cp.secret_max_age_days',
    );
  if (account === undefined) return undefined;
  const [keys, trusts, secrets] = await Promise.all([
    db('service_account_keys').where({ sub }).orderBy(['created_at', 'id']).select(KEY_COLUMNS),
    db('service_account_trusts').where({ sub }).orderBy(['created_at', 'id']).select(TRUST_COLUMNS),
    db('service_account_secrets')
      .where({ sub })
      .orderBy(['created_at', 'id'])
      .select('id', 'created_at', 'expires_at', 'created_by', 'last_used_at'),
  ]);
  const secret =
    account.secret_digest === null
      ? null
      : {
          created_at: account.secret_created_at,
          last_used_at: account.secret_last_used_at,
          max_age_days: account.secret_max_age_days,
        };
  return {
    secret,
    secrets,
    max_age_days: account.secret_max_age_days,
    keys,
    trusts,
    disabled_at: account.disabled_at,
  };
}

function addKey(
  db: Knex,
  realm: string,
  sub: string,
  key: NewAccountKey,
  limit: number,
): ReturnType<ServiceAccountCredentialRepository['addKey']> {
  return changeAccount<'duplicate' | 'limit-reached'>(
    db,
    realm,
    sub,
    { kinds: ['service-account.key-add'] },
    async (trx) => {
      const keys = trx('service_account_keys').where({ sub });
      if (
        (await keys
          .clone()
          .where((q) => q.where({ id: key.id }).orWhere({ thumbprint: key.thumbprint }))
          .first('id')) !== undefined
      )
        return 'duplicate';
      if ((await countOf(keys.clone())) >= limit) return 'limit-reached';
      await trx('service_account_keys').insert({
        sub,
        realm,
        id: key.id,
        alg: key.alg,
        public_jwk: JSON.stringify(key.publicJwk),
        thumbprint: key.thumbprint,
        created_by: key.createdBy,
      });
    },
  );
}

function addTrust(
  db: Knex,
  realm: string,
  sub: string,
  trust: NewAccountTrust,
  limits: TrustLimits,
): ReturnType<ServiceAccountCredentialRepository['addTrust']> {
  return changeAccount<'duplicate' | 'limit-reached' | 'issuer-limit-reached'>(
    db,
    realm,
    sub,
    { kinds: ['service-account.trust-add'] },
    async (trx) => {
      const trusts = trx('service_account_trusts').where({ sub });
      if (
        (await trusts
          .clone()
          .where({ issuer: trust.issuer, subject: trust.subject, audience: trust.audience })
          .first('id')) !== undefined
      )
        return 'duplicate';
      if ((await countOf(trusts.clone())) >= limits.perAccount) return 'limit-reached';
      await lockRealm(trx, realm);
      const known = await trx('service_account_trusts')
        .where({ realm, issuer: trust.issuer })
        .first('id');
      if (known === undefined) {
        const issuers = await trx('service_account_trusts')
          .where({ realm })
          .countDistinct<{ count: string }[]>({ count: 'issuer' })
          .first();
        if (Number(issuers?.count ?? 0) >= limits.issuersPerTenant) return 'issuer-limit-reached';
      }
      await trx('service_account_trusts').insert({
        sub,
        realm,
        id: trust.id,
        issuer: trust.issuer,
        subject: trust.subject,
        audience: trust.audience,
        created_by: trust.createdBy,
      });
    },
  );
}

/** Keys and trusts of the account, and its secrets other than `exceptSecrets` (in the caller's transaction). */
async function otherCredentials(
  trx: Knex,
  sub: string,
  exceptSecrets: readonly string[] | 'all',
): Promise<number> {
  const secrets = trx('service_account_secrets').where({ sub });
  if (exceptSecrets !== 'all') secrets.whereNotIn('id', exceptSecrets);
  return (
    (exceptSecrets === 'all' ? 0 : await countOf(secrets)) +
    (await countOf(trx('service_account_keys').where({ sub }))) +
    (await countOf(trx('service_account_trusts').where({ sub })))
  );
}

function removeSecret(
  db: Knex,
  realm: string,
  sub: string,
): ReturnType<ServiceAccountCredentialRepository['removeSecret']> {
  return changeAccount<'no-secret' | 'no-other-credential'>(
    db,
    realm,
    sub,
    { kinds: ['service-account.secret-remove'] },
    async (trx, changed) => {
      if ((await countOf(trx('service_account_secrets').where({ sub }))) === 0) return 'no-secret';
      if ((await otherCredentials(trx, sub, 'all')) === 0) return 'no-other-credential';
      changed.push(...(await deleteSecrets(trx, sub)));
      await mirrorNewestSecret(trx, sub);
    },
  );
}

function removeSecretById(
  db: Knex,
  realm: string,
  sub: string,
  id: string,
): ReturnType<ServiceAccountCredentialRepository['removeSecretById']> {
  return changeAccount<'not-found' | 'no-other-credential'>(
    db,
    realm,
    sub,
    { kinds: ['service-account.secret-remove'] },
    async (trx, changed) => {
      if ((await trx('service_account_secrets').where({ sub, id }).first('id')) === undefined)
        return 'not-found';
      if ((await otherCredentials(trx, sub, [id])) === 0) return 'no-other-credential';
      changed.push(...(await deleteSecrets(trx, sub, [id])));
      await mirrorNewestSecret(trx, sub);
    },
  );
}

function addSecret(
  db: Knex,
  realm: string,
  sub: string,
  secret: NewAccountSecret,
): ReturnType<ServiceAccountCredentialRepository['addSecret']> {
  return changeAccount<'limit-reached'>(
    db,
    realm,
    sub,
    { kinds: ['service-account.secret-add'] },
    async (trx, changed) => {
      await deleteDeadSecrets(trx, sub);
      if ((await countLiveSecrets(trx, sub)) >= MAX_LIVE_SECRETS) return 'limit-reached';
      await insertSecret(trx, realm, sub, secret);
      await mirrorNewestSecret(trx, sub);
      changed.push(credentialOfSecret(secret.id));
    },
  );
}

function setDisabled(
  db: Knex,
  realm: string,
  sub: string,
  disabled: boolean,
): ReturnType<ServiceAccountCredentialRepository['setDisabled']> {
  const kind = disabled ? 'service-account.disable' : 'service-account.enable';
  return changeAccount<'unchanged'>(db, realm, sub, { kinds: [kind] }, async (trx) => {
    const account = await trx('service_accounts').where({ sub }).first('disabled_at');
    if ((account?.disabled_at !== null) === disabled) return 'unchanged';
    await trx('service_accounts')
      .where({ sub })
      .update({ disabled_at: disabled ? trx.fn.now() : null });
  });
}

export function createServiceAccountCredentialRepository(
  db: Knex,
): ServiceAccountCredentialRepository {
  return {
    credentials: (realm, sub) => readCredentials(db, realm, sub),
    addKey: (realm, sub, key, limit) => addKey(db, realm, sub, key, limit),
    removeKey(realm, sub, id) {
      const change = { kinds: ['service-account.key-remove'] } as const;
      return changeAccount<'not-found'>(db, realm, sub, change, async (trx, changed) => {
        if ((await trx('service_account_keys').where({ sub, id }).delete()) === 0)
          return 'not-found';
        changed.push(credentialName('key', id));
      });
    },
    addTrust: (realm, sub, trust, limits) => addTrust(db, realm, sub, trust, limits),
    removeTrust(realm, sub, id) {
      const change = { kinds: ['service-account.trust-remove'] } as const;
      return changeAccount<'not-found'>(db, realm, sub, change, async (trx, changed) => {
        if ((await trx('service_account_trusts').where({ sub, id }).delete()) === 0)
          return 'not-found';
        changed.push(credentialName('trust', id));
      });
    },
    removeSecret: (realm, sub) => removeSecret(db, realm, sub),
    addSecret: (realm, sub, secret) => addSecret(db, realm, sub, secret),
    removeSecretById: (realm, sub, id) => removeSecretById(db, realm, sub, id),
    setDisabled: (realm, sub, disabled) => setDisabled(db, realm, sub, disabled),
  };
}
