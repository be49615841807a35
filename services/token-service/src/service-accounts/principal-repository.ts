import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';

export type PrincipalKind = 'user' | 'service_account';

export interface PrincipalRepository {
  /** The principal's current state, undefined when there is no row (never created, or purged long after its deletion). */
  findRevocationEntry(realm: string, sub: string): Promise<RevocationEntry | undefined>;
}

/** In the caller's transaction (the user and service-account repositories). */
export async function insertPrincipal(
  trx: Knex,
  row: { sub: string; realm: string; kind: PrincipalKind; created_by: string | null },
): Promise<void> {
  await trx('principals').insert(row);
}

/**
 * Bumps the token version (and marks deletion) in the caller's transaction; the new entry,
 * undefined when there is no live principal. The trigger of migration 0004 writes the change
 * into the revocation feed in the same transaction.
 */
export async function bumpTokenVersion(
  trx: Knex,
  realm: string,
  sub: string,
  { deleted = false } = {},
): Promise<RevocationEntry | undefined> {
  const update: Record<string, unknown> = { token_version: trx.raw('token_version + 1') };
  if (deleted) update.deleted_at = trx.fn.now();
  const [row] = await trx('principals')
    .where({ realm, sub })
    .whereNull('deleted_at')
    .update(update)
    .returning(['realm', 'sub', 'token_version', 'deleted_at']);
  return row === undefined ? undefined : toEntry(row);
}

/**
 * Revokes exactly the tokens `credentials` obtained (their `cred` claim: decision 0035), in the
 * caller's transaction: one row of the revocation feed per credential, written as the trigger
 * writes the version's rows (the feed's row lock taken first and held to commit, so positions
 * become visible in order), carrying the principal's version unchanged. The principal's other
 * credentials' tokens keep working. The entry to publish after commit, undefined when there is
 * no live principal. Pruned by the same horizon as every row of the feed.
 */
export async function revokeCredentials(
  trx: Knex,
  realm: string,
  sub: string,
  credentials: readonly string[],
): Promise<RevocationEntry | undefined> {
  const entry = await findLiveEntry(trx, realm, sub);
  if (entry === undefined || credentials.length === 0) return entry;
  await trx.raw('select 1 from revocation_feed for no key update');
  await trx('revocation_changes').insert(
    credentials.map((credential) => ({
      position: trx.raw("nextval('revocation_change_position')"),
      realm,
      sub,
      version: entry.version,
      deleted: false,
      credential,
    })),
  );
  return { ...entry, credentials: [...credentials] };
}

/** The principal's current entry (nothing bumped), in the caller's transaction; undefined when it is not live. */
export async function findLiveEntry(
  trx: Knex,
  realm: string,
  sub: string,
): Promise<RevocationEntry | undefined> {
  const row = await trx('principals')
    .where({ realm, sub })
    .whereNull('deleted_at')
    .first('realm', 'sub', 'token_version', 'deleted_at');
  return row === undefined ? undefined : toEntry(row);
}

function toEntry(row: {
  realm: string;
  sub: string;
  token_version: number;
  deleted_at: Date | null;
}): RevocationEntry {
  return {
    tenant: row.realm,
    sub: row.sub,
    version: row.token_version,
    deleted: row.deleted_at !== null,
  };
}

export function createPrincipalRepository(db: Knex): PrincipalRepository {
  return {
    async findRevocationEntry(realm, sub) {
      const row = await db('principals')
        .where({ realm, sub })
        .first('realm', 'sub', 'token_version', 'deleted_at');
      return row === undefined ? undefined : toEntry(row);
    },
  };
}
