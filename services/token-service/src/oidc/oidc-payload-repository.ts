import { createHash } from 'node:crypto';
import type { Knex } from '@plant/shared/db';

/** An oidc-provider artifact (session, interaction, code, grant) as stored per realm. */
export interface OidcPayload {
  [key: string]: unknown;
  grantId?: string;
  userCode?: string;
  uid?: string;
  consumed?: number;
}

/**
 * Every key takes the value in clear (an id, uid, user code or grant id); the table holds only
 * its SHA-256 digest. Ids are bearer values (the session and interaction cookies, codes,
 * opaque access tokens) and random nanoids, far too many to guess, so a fast unkeyed hash is
 * enough to make a dump of the table useless, and a lookup stays one index probe.
 */
export interface OidcPayloadRepository {
  upsert(
    realm: string,
    model: string,
    id: string,
    payload: OidcPayload,
    expiresIn?: number,
  ): Promise<void>;
  find(realm: string, model: string, id: string): Promise<OidcPayload | undefined>;
  findByUid(realm: string, model: string, uid: string): Promise<OidcPayload | undefined>;
  findByUserCode(realm: string, model: string, userCode: string): Promise<OidcPayload | undefined>;
  consume(realm: string, model: string, id: string): Promise<void>;
  destroy(realm: string, model: string, id: string): Promise<void>;
  revokeByGrant(realm: string, grantId: string): Promise<void>;
  /** Deletes up to `limit` expired artifacts of any realm, the longest expired first; how many went. */
  deleteExpired(limit: number): Promise<number>;
}

/**
 * The id a device code found by its user code (on the realm's device page) goes by: the table
 * cannot give back the device code itself (it holds its digest only), so oidc-provider gets
 * this reference instead, and every later write or read with it (the approval, the resumed
 * sign-in) goes to the row of that user code. The device, which has the device code, reads
 * and redeems the same row by its id.
 */
export const USER_CODE_REF = 'user-code:';

/** The row an id names: its digest, or for a USER_CODE_REF the digest of the user code. */
function keyOf(id: string): Record<string, Buffer> {
  return id.startsWith(USER_CODE_REF)
    ? { user_code_digest: digest(id.slice(USER_CODE_REF.length)) }
    : { id_digest: digest(id) };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function digestOrNull(value: unknown): Buffer | null {
  return typeof value === 'string' ? digest(value) : null;
}

export function createOidcPayloadRepository(db: Knex): OidcPayloadRepository {
  async function findBy(
    realm: string,
    model: string,
    where: Record<string, Buffer>,
  ): Promise<OidcPayload | undefined> {
    const row = await db('oidc_payloads')
      .where({ realm, model, ...where })
      .andWhere((q) => q.whereNull('expires_at').orWhereRaw('expires_at > now()'))
      .first('payload', 'consumed_at');
    if (!row) return undefined;
    const payload = row.payload as OidcPayload;
    return row.consumed_at
      ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) }
      : payload;
  }

  return {
    async upsert(realm, model, id, payload, expiresIn) {
      if (id.startsWith(USER_CODE_REF)) {
        // A device code written back after its approval: the row exists (it is never created so).
        await db('oidc_payloads')
          .where({ realm, model, ...keyOf(id) })
          .update({
            payload: JSON.stringify(payload),
            grant_id_digest: digestOrNull(payload.grantId),
            ...(expiresIn
              ? { expires_at: db.raw('now() + make_interval(secs => ?)', [expiresIn]) }
              : {}),
          });
        return;
      }
      await db('oidc_payloads')
        .insert({
          realm,
          model,
          id_digest: digest(id),
          payload: JSON.stringify(payload),
          grant_id_digest: digestOrNull(payload.grantId),
          user_code_digest: digestOrNull(payload.userCode),
          uid_digest: digestOrNull(payload.uid),
          expires_at: expiresIn ? db.raw('now() + make_interval(secs => ?)', [expiresIn]) : null,
        })
        .onConflict(['realm', 'model', 'id_digest'])
        .merge(['payload', 'grant_id_digest', 'user_code_digest', 'uid_digest', 'expires_at']);
    },
    find: (realm, model, id) => findBy(realm, model, keyOf(id)),
    findByUid: (realm, model, uid) => findBy(realm, model, { uid_digest: digest(uid) }),
    findByUserCode: (realm, model, userCode) =>
      findBy(realm, model, { user_code_digest: digest(userCode) }),
    async consume(realm, model, id) {
      await db('oidc_payloads')
        .where({ realm, model, ...keyOf(id) })
        .update({ consumed_at: db.fn.now() });
    },
    async destroy(realm, model, id) {
      await db('oidc_payloads')
        .where({ realm, model, ...keyOf(id) })
        .delete();
    },
    async revokeByGrant(realm, grantId) {
      await db('oidc_payloads')
        .where({ realm, grant_id_digest: digest(grantId) })
        .delete();
    },
    async deleteExpired(limit) {
      // One index range scan (oidc_payloads_expires) bounded by `limit`: cheap however many wait;
      // rows another replica's sweep is deleting are skipped, not waited for.
      const result = await db.raw(
        `delete from oidc_payloads where ctid = any(array(
           select ctid from oidc_payloads where expires_at < now() order by expires_at limit ? for update skip locked))`,
        [limit],
      );
      return (result as { rowCount: number }).rowCount;
    },
  };
}
