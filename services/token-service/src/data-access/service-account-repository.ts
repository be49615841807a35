import { isUniqueViolation, type Grant, type Knex, type ServiceAccountRole } from '@plant/shared';

export interface ServiceAccountRow {
  sub: string;
  realm: string;
  name: string;
  role: ServiceAccountRole;
  grants: Grant[];
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
}

/** What the token endpoint needs to authenticate a client and mint its token. */
export interface ClientCredentialRow {
  sub: string;
  realm: string;
  role: ServiceAccountRole;
  grants: Grant[];
  secret_digest: string;
  token_version: number;
}

export class DuplicateServiceAccountName extends Error {}

const GRANTS_JSON = `coalesce((select json_agg(json_build_object('tag', g.tag, 'permission', g.permission) order by g.tag)
  from grants g where g.sub = sa.sub), '[]'::json) as grants`;

function selectAccounts(db: Knex) {
  return db('service_accounts as sa')
    .join('principals as p', 'p.sub', 'sa.sub')
    .select('sa.sub', 'sa.realm', 'sa.name', 'sa.role', 'p.created_at', 'p.created_by', 'sa.last_used_at', db.raw(GRANTS_JSON));
}

export async function countServiceAccounts(trx: Knex, realm: string): Promise<number> {
  const row = await trx('service_accounts').where({ realm }).count<{ count: string }[]>({ count: '*' }).first();
  return Number(row?.count ?? 0);
}

export async function insertServiceAccount(trx: Knex, row: { sub: string; realm: string; name: string; role: ServiceAccountRole; secret_digest: string }): Promise<void> {
  try {
    await trx('service_accounts').insert(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateServiceAccountName(row.name);
    throw err;
  }
}

export async function listServiceAccounts(db: Knex, realm: string): Promise<ServiceAccountRow[]> {
  return selectAccounts(db).where('sa.realm', realm).orderByRaw('lower(sa.name), sa.name');
}

export async function findServiceAccount(db: Knex, realm: string, sub: string): Promise<ServiceAccountRow | undefined> {
  return selectAccounts(db).where({ 'sa.realm': realm, 'sa.sub': sub }).first();
}

/** Locks the account's row for the rest of the transaction; undefined when it does not exist. */
export async function lockServiceAccount(trx: Knex.Transaction, realm: string, sub: string): Promise<boolean> {
  const row = await trx('service_accounts').where({ realm, sub }).forUpdate().first('sub');
  return row !== undefined;
}

export async function updateServiceAccountRole(trx: Knex, sub: string, role: ServiceAccountRole): Promise<void> {
  await trx('service_accounts').where({ sub }).update({ role });
}

export async function replaceGrants(trx: Knex, sub: string, grants: Grant[]): Promise<void> {
  await trx('grants').where({ sub }).delete();
  if (grants.length > 0) await trx('grants').insert(grants.map((g) => ({ sub, tag: g.tag, permission: g.permission })));
}

export async function updateSecretDigest(trx: Knex, sub: string, secretDigest: string): Promise<void> {
  await trx('service_accounts').where({ sub }).update({ secret_digest: secretDigest });
}

/** Removes the credentials and grants; the principal row stays (deleted) for revocation. */
export async function deleteServiceAccount(trx: Knex, sub: string): Promise<void> {
  await trx('grants').where({ sub }).delete();
  await trx('service_accounts').where({ sub }).delete();
}

export async function findClientCredential(db: Knex, realm: string, sub: string): Promise<ClientCredentialRow | undefined> {
  return db('service_accounts as sa')
    .join('principals as p', 'p.sub', 'sa.sub')
    .where({ 'sa.realm': realm, 'sa.sub': sub })
    .whereNull('p.deleted_at')
    .first('sa.sub', 'sa.realm', 'sa.role', 'sa.secret_digest', 'p.token_version', db.raw(GRANTS_JSON));
}

/** At most one write a minute per account, whichever replica asks. */
export async function touchLastUsed(db: Knex, subs: string[]): Promise<void> {
  if (subs.length === 0) return;
  await db('service_accounts')
    .whereIn('sub', subs)
    .andWhere((q) => q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"))
    .update({ last_used_at: db.fn.now() });
}
