import type { Knex } from '@plant/shared/db';
import type { DelegationChange, RevocationEntry } from '@plant/shared/token-service-client';
import { changeAccount } from '../service-accounts/index.js';

export interface DelegationRow {
  audience: string;
  scope: string;
  created_at: Date;
  created_by: string | null;
}

export interface DelegationRepository {
  /** The account's permissions, by audience; undefined when there is no such account in the realm. */
  list(realm: string, sub: string): Promise<DelegationRow[] | undefined>;
  /** Puts `next` in place of the account's permissions as one change of the account; undefined: no such account. */
  replace(
    realm: string,
    sub: string,
    next: readonly DelegationChange[],
    actor: string | null,
  ): Promise<RevocationEntry | undefined>;
}

const scopesOf = (scope: string) => new Set(scope.split(' ').filter(Boolean));

/**
 * True when `next` takes away anything `current` allowed: an audience gone, or a scope value
 * gone at one. Such a change revokes the account's older tokens, and with them every token
 * exchanged with it as actor (their `act` carries its version); adding revokes nothing.
 */
export function narrows(
  current: readonly Pick<DelegationRow, 'audience' | 'scope'>[],
  next: readonly DelegationChange[],
): boolean {
  const after = new Map(next.map((d) => [d.audience, scopesOf(d.scope)]));
  return current.some((d) => {
    const kept = after.get(d.audience);
    return kept === undefined || [...scopesOf(d.scope)].some((scope) => !kept.has(scope));
  });
}

async function replaceDelegations(
  db: Knex,
  realm: string,
  sub: string,
  next: readonly DelegationChange[],
  actor: string | null,
): Promise<RevocationEntry | undefined> {
  return db.transaction(async (trx) => {
    // The account's row first: the kind (revoking or not) is decided on what no one else can change meanwhile.
    const locked = await trx('service_accounts').where({ realm, sub }).forUpdate().first('sub');
    if (locked === undefined) return undefined;
    const current: DelegationRow[] = await trx('service_account_delegations')
      .where({ sub })
      .select('audience', 'scope', 'created_at', 'created_by');
    const kind = narrows(current, next)
      ? 'service-account.delegation-revoke'
      : 'service-account.delegation-grant';
    // changeAccount in a savepoint of this transaction: the lock above is held to the end.
    return changeAccount<never>(trx, realm, sub, { kinds: [kind] }, async (inner) => {
      const kept = new Map(current.map((d) => [d.audience, d]));
      await inner('service_account_delegations').where({ sub }).delete();
      if (next.length === 0) return;
      await inner('service_account_delegations').insert(
        next.map((d) => ({
          sub,
          realm,
          audience: d.audience,
          scope: d.scope,
          // An unchanged permission keeps who made it and when.
          ...(kept.get(d.audience)?.scope === d.scope
            ? {
                created_at: kept.get(d.audience)!.created_at,
                created_by: kept.get(d.audience)!.created_by,
              }
            : { created_by: actor }),
        })),
      );
    });
  });
}

export function createDelegationRepository(db: Knex): DelegationRepository {
  return {
    async list(realm, sub) {
      const account = await db('service_accounts').where({ realm, sub }).first('sub');
      if (account === undefined) return undefined;
      return db('service_account_delegations')
        .where({ sub })
        .orderBy('audience')
        .select('audience', 'scope', 'created_at', 'created_by');
    },
    replace: (realm, sub, next, actor) => replaceDelegations(db, realm, sub, next, actor),
  };
}
