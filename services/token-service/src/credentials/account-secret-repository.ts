/**
 * A service account's secrets (`service_account_secrets`), as the changes write them in their
 * transaction: at most `MAX_LIVE_SECRETS` live at once, each with its own id, creation, optional
 * expiry and last use (decision 0035). A token names the secret that obtained it as
 * `secret:<id>` (`credentialOfSecret`), which is what removing that secret revokes.
 *
 * The account row's `secret_digest` / `secret_created_at` / `secret_last_used_at` are kept equal
 * to the newest secret (`mirrorNewestSecret`, in every transaction that changes the secrets):
 * a replica of the previous release reads only those, so during a rollout it authenticates the
 * newest secret and honours a reset or a removal.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from '@plant/shared/db';
import { credentialName } from './credential-names.js';

/** An account holds at most two live secrets: one to move from, one to move to. */
export const MAX_LIVE_SECRETS = 2;

export function newSecretId(): string {
  return `sec-${randomBytes(8).toString('hex')}`;
}

/** The `cred` claim of a token the secret `id` obtained. */
export function credentialOfSecret(id: string): string {
  return credentialName('secret', id);
}

export interface NewAccountSecret {
  id: string;
  digest: string;
  /** When it stops working; null: only the realm's maximum age ends it. */
  expiresAt: Date | null;
  createdBy: string | null;
}

/** A live secret: not past its own expiry nor the realm's maximum age (`cp`: the realm's policy row). */
const LIVE = `(s.expires_at is null or s.expires_at > now())
  and (cp.secret_max_age_days is null or s.created_at + make_interval(days => cp.secret_max_age_days) > now())`;

/** The account's live secrets, counted in the caller's transaction (under the account's lock). */
export async function countLiveSecrets(trx: Knex, sub: string): Promise<number> {
  const { rows } = (await trx.raw(
    `select count(*)::int as count
     from service_account_secrets s
     left join realm_credential_policies cp on cp.realm = s.realm
     where s.sub = ? and ${LIVE}`,
    [sub],
  )) as { rows: Array<{ count: number }> };
  return rows[0]?.count ?? 0;
}

/** Secrets past their expiry or age: they authenticate nothing, and go when a secret is added (their tokens expire on their own). */
export async function deleteDeadSecrets(trx: Knex, sub: string): Promise<void> {
  await trx.raw(
    `delete from service_account_secrets s
     using service_accounts sa left join realm_credential_policies cp on cp.realm = sa.realm
     where sa.sub = s.sub and s.sub = ? and not (${LIVE})`,
    [sub],
  );
}

export async function insertSecret(
  trx: Knex,
  realm: string,
  sub: string,
  secret: NewAccountSecret,
): Promise<void> {
  await trx('service_account_secrets').insert({
    sub,
    realm,
    id: secret.id,
    digest: secret.digest,
    expires_at: secret.expiresAt,
    created_by: secret.createdBy,
  });
}

/** Deletes the account's secrets (those of `ids`, or all); the `cred` claims of those deleted. */
export async function deleteSecrets(
  trx: Knex,
  sub: string,
  ids?: readonly string[],
): Promise<string[]> {
  const query = trx('service_account_secrets').where({ sub });
  if (ids !== undefined) query.whereIn('id', ids);
  const deleted = (await query.delete().returning('id')) as Array<{ id: string }>;
  return deleted.map(({ id }) => credentialOfSecret(id));
}

/** The account row's secret columns := its newest secret's (none: null), for replicas of the previous release. */
export async function mirrorNewestSecret(trx: Knex, sub: string): Promise<void> {
  await trx.raw(
    `update service_accounts sa
     set secret_digest = n.digest, secret_created_at = n.created_at, secret_last_used_at = n.last_used_at
     from (select 1) one
     left join lateral (
       select digest, created_at, last_used_at from service_account_secrets
       where sub = ? order by created_at desc, id desc limit 1
     ) n on true
     where sa.sub = ?`,
    [sub, sub],
  );
}

/**
 * Reset Secret's and creation's write: every secret is replaced by the one given (created now,
 * never used). The `cred` claims of the secrets it replaced.
 */
export async function replaceSecrets(
  trx: Knex,
  realm: string,
  sub: string,
  secret: NewAccountSecret,
): Promise<string[]> {
  const replaced = await deleteSecrets(trx, sub);
  await insertSecret(trx, realm, sub, secret);
  await mirrorNewestSecret(trx, sub);
  return replaced;
}
