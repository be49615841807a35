/**
 * The realm's factor policy (`require_admin_factor`): reading it, and setting it with what the
 * effects table (changes/change-effects.ts) says the change does besides.
 */
import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { bumpTokenVersion } from '../service-accounts/index.js';
import { insertPeopleAuditEvent } from '../people-audit/index.js';
import { effectsOf } from '../changes/index.js';
import type { PolicyEvent } from './factor-change-repository.js';

export interface FactorPolicyRepository {
  /** The realm's `require_admin_factor`, undefined for an unknown realm. */
  policy(realm: string): Promise<boolean | undefined>;
  /**
   * False for an unknown realm. Switching the policy on bumps the token version of every active
   * Account Admin without a factor (returned): their portal sessions re-read them at their next
   * request and end, as the policy now requires what they lack.
   */
  setPolicy(
    realm: string,
    requireAdminFactor: boolean,
    event: PolicyEvent,
  ): Promise<RevocationEntry[] | false>;
}

export function createFactorPolicyRepository(db: Knex): FactorPolicyRepository {
  return {
    async policy(realm) {
      const row = await db('realms').where({ name: realm }).first('require_admin_factor');
      return row?.require_admin_factor;
    },
    async setPolicy(realm, requireAdminFactor, event) {
      return db.transaction((trx) => writeFactorPolicy(trx, realm, requireAdminFactor, event));
    },
  };
}

/** The realm's active Account Admins who hold no second factor (bounded by the realm's people). */
async function adminsWithoutFactor(trx: Knex, realm: string): Promise<string[]> {
  const rows = await trx('users as u')
    .join('principals as p', 'p.sub', 'u.sub')
    .where({ 'u.realm': realm, 'u.role': 'Account Admin' })
    .whereNull('u.disabled_at')
    .whereNull('p.deleted_at')
    .whereNotExists((q) =>
      q.select(trx.raw('1')).from('user_factors as f').whereRaw('f.sub = u.sub'),
    )
    .select('u.sub');
  return rows.map((r: { sub: string }) => r.sub);
}

/** The realm's factor policy set, with what the effects table says the change does besides. */
async function writeFactorPolicy(
  trx: Knex,
  realm: string,
  requireAdminFactor: boolean,
  event: PolicyEvent,
): Promise<RevocationEntry[] | false> {
  const updated = await trx('realms')
    .where({ name: realm })
    .update({ require_admin_factor: requireAdminFactor });
  if (updated !== 1) return false;
  const effects = effectsOf('realm.factor-policy');
  const affected = requireAdminFactor ? await adminsWithoutFactor(trx, realm) : [];
  if (effects.audit !== null)
    await insertPeopleAuditEvent(trx, {
      realm,
      action: effects.audit,
      actorSub: event.actorSub,
      actorEmail: event.actorEmail ?? null,
      targetSub: null,
      targetEmail: null,
      details: { require_admin_factor: requireAdminFactor },
      address: event.address ?? null,
      requestId: null,
    });
  const entries: RevocationEntry[] = [];
  if (effects.revokes === 'none') return entries;
  for (const sub of affected) {
    const entry = await bumpTokenVersion(trx, realm, sub);
    if (entry) entries.push(entry);
  }
  return entries;
}
