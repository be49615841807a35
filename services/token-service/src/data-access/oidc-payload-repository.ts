import type { Knex } from '@plant/shared';

/** An oidc-provider artifact (session, interaction, code, grant) as stored per realm. */
export interface OidcPayload {
  [key: string]: unknown;
  grantId?: string;
  userCode?: string;
  uid?: string;
  consumed?: number;
}

export interface OidcPayloadRepository {
  upsert(realm: string, model: string, id: string, payload: OidcPayload, expiresIn?: number): Promise<void>;
  find(realm: string, model: string, id: string): Promise<OidcPayload | undefined>;
  findByUid(realm: string, model: string, uid: string): Promise<OidcPayload | undefined>;
  findByUserCode(realm: string, model: string, userCode: string): Promise<OidcPayload | undefined>;
  consume(realm: string, model: string, id: string): Promise<void>;
  destroy(realm: string, model: string, id: string): Promise<void>;
  revokeByGrant(realm: string, grantId: string): Promise<void>;
  /** Sweeps expired artifacts of every realm; how many went. */
  deleteExpired(): Promise<number>;
}

export function createOidcPayloadRepository(db: Knex): OidcPayloadRepository {
  async function findBy(realm: string, model: string, where: Record<string, string>): Promise<OidcPayload | undefined> {
    const row = await db('oidc_payloads')
      .where({ realm, model, ...where })
      .andWhere((q) => q.whereNull('expires_at').orWhereRaw('expires_at > now()'))
      .first('payload', 'consumed_at');
    if (!row) return undefined;
    const payload = row.payload as OidcPayload;
    return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
  }

  return {
    async upsert(realm, model, id, payload, expiresIn) {
      await db('oidc_payloads')
        .insert({
          realm,
          model,
          id,
          payload: JSON.stringify(payload),
          grant_id: payload.grantId ?? null,
          user_code: payload.userCode ?? null,
          uid: payload.uid ?? null,
          expires_at: expiresIn ? db.raw('now() + make_interval(secs => ?)', [expiresIn]) : null,
        })
        .onConflict(['realm', 'model', 'id'])
        .merge(['payload', 'grant_id', 'user_code', 'uid', 'expires_at']);
    },
    find: (realm, model, id) => findBy(realm, model, { id }),
    findByUid: (realm, model, uid) => findBy(realm, model, { uid }),
    findByUserCode: (realm, model, userCode) => findBy(realm, model, { user_code: userCode }),
    async consume(realm, model, id) {
      await db('oidc_payloads').where({ realm, model, id }).update({ consumed_at: db.fn.now() });
    },
    async destroy(realm, model, id) {
      await db('oidc_payloads').where({ realm, model, id }).delete();
    },
    async revokeByGrant(realm, grantId) {
      await db('oidc_payloads').where({ realm, grant_id: grantId }).delete();
    },
    deleteExpired() {
      return db('oidc_payloads').whereRaw('expires_at < now()').delete();
    },
  };
}
