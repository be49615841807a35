import type { Knex } from '@plant/shared';

/** Storage of oidc-provider artifacts (sessions, interactions, codes, grants) per realm. */
export interface OidcPayload {
  [key: string]: unknown;
  grantId?: string;
  userCode?: string;
  uid?: string;
  consumed?: number;
}

export async function upsertOidcPayload(db: Knex, realm: string, model: string, id: string, payload: OidcPayload, expiresIn?: number): Promise<void> {
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
}

async function findBy(db: Knex, realm: string, model: string, where: Record<string, string>): Promise<OidcPayload | undefined> {
  const row = await db('oidc_payloads')
    .where({ realm, model, ...where })
    .andWhere((q) => q.whereNull('expires_at').orWhereRaw('expires_at > now()'))
    .first('payload', 'consumed_at');
  if (!row) return undefined;
  const payload = row.payload as OidcPayload;
  return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
}

export const findOidcPayload = (db: Knex, realm: string, model: string, id: string) => findBy(db, realm, model, { id });
export const findOidcPayloadByUid = (db: Knex, realm: string, model: string, uid: string) => findBy(db, realm, model, { uid });
export const findOidcPayloadByUserCode = (db: Knex, realm: string, model: string, userCode: string) => findBy(db, realm, model, { user_code: userCode });

export async function consumeOidcPayload(db: Knex, realm: string, model: string, id: string): Promise<void> {
  await db('oidc_payloads').where({ realm, model, id }).update({ consumed_at: db.fn.now() });
}

export async function destroyOidcPayload(db: Knex, realm: string, model: string, id: string): Promise<void> {
  await db('oidc_payloads').where({ realm, model, id }).delete();
}

export async function revokeOidcPayloadsByGrant(db: Knex, realm: string, grantId: string): Promise<void> {
  await db('oidc_payloads').where({ realm, grant_id: grantId }).delete();
}

export async function deleteExpiredOidcPayloads(db: Knex): Promise<number> {
  return db('oidc_payloads').whereRaw('expires_at < now()').delete();
}
