/**
 * The realm's factor policy (`require_admin_factor`): reading it, and setting it with what the
 * effects table (changes/change-effects.ts) says the change does besides.
 */
import type { Knex } from '@plant/shared/db';
import { meets, takePrecondition } from '@plant/shared/http';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { bumpTokenVersion } from '../service-accounts/index.js';
import { insertPeopleAuditEvent } from '../people-audit/index.js';
import { effectsOf } from '../changes/index.js';
import { PreconditionFailed } from '../platform/index.js';
import type { PolicyEvent } from './factor-change-repository.js';

/** The policy and its revision (counted up by every change: account-admin's `ETag`). */
export interface FactorPolicyState {
  requireAdminFactor: boolean;
  revision: number;
}

export interface FactorPolicyRepository {
  /** The realm's `require_admin_factor` and its revision, undefined for an unknown realm. */
  policy(realm: string): Promise<FactorPolicyState | undefined>;
  /**
   * False for an unknown realm. Switching the policy on bumps the token version of every active
   * Account Admin without a factor (returned): their portal sessions re-read them at their next
   * request and end, as the policy now requires what they lack. The request's `If-Match`
   * (`conditionalRoute`) is checked against the revision under the realm row's lock (412
   * `PreconditionFailed`), and the revision is counted up.
   */
  setPolicy(
    realm: string,
    requireAdminFactor: boolean,
    event: PolicyEvent,
  ): Promise<{ policy: FactorPolicyState; entries: RevocationEntry[] } | false>;
}

interface PolicyRow {
  require_admin_factor: boolean;
  // bigint arrives as a string; a revision stays far below 2^53.
  factor_policy_revision: string | number;
}

const stateOf = (row: PolicyRow): FactorPolicyState => ({
  requireAdminFactor: row.require_admin_factor,
  revision: Number(row.factor_policy_revision),
});

export function createFactorPolicyRepository(db: Knex): FactorPolicyRepository {
  return {
    async policy(realm) {
      const row = (await db('realms')
        .where({ name: realm })
        .first('require_admin_factor', 'factor_policy_revision')) as PolicyRow | undefined;
      return row === undefined ? undefined : stateOf(row);
    },
    async setPolicy(realm, requireAdminFactor, event) {
      // Taken before the transaction: the request's first change is this one (precondition.ts).
      const precondition = takePrecondition();
      return db.transaction(async (trx) => {
        // The realm's row, locked: of two changes naming the same revision, the second waits
        // here, then finds the first's revision and gets 412.
        const current = (await trx('realms')
          .where({ name: realm })
          .forUpdate()
          .first('require_admin_factor', 'factor_policy_revision')) as PolicyRow | undefined;
        if (current === undefined) return false;
        const revision = stateOf(current).revision;
        if (precondition !== undefined && !meets(precondition, revision))
          throw new PreconditionFailed();
        const entries = await writeFactorPolicy(
          trx,
          realm,
          requireAdminFactor,
          revision + 1,
          event,
        );
        if (entries === false) return false;
        return { policy: { requireAdminFactor, revision: revision + 1 }, entries };
      });
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
  revision: number,
  event: PolicyEvent,
): Promise<RevocationEntry[] | false> {
  const updated = await trx('realms')
    .where({ name: realm })
    .update({ require_admin_factor: requireAdminFactor, factor_policy_revision: revision });
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
