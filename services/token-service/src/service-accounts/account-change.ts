import { meets, takePrecondition } from '@plant/shared/http';
import { NoLiveAccount, PreconditionFailed } from '../platform/index.js';
import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { bumpTokenVersion, findLiveEntry, revokeCredentials } from './principal-repository.js';
import { type AccountEffects, accountEffectsOf, type AccountChangeKind } from '../changes/index.js';
import { recordSignals } from '../signal-outbox/index.js';

/**
 * A change of one service account, by kind (changes/change-effects.ts says what each kind
 * revokes and signals). `parts` names what a settings change changed, for its session
 * revocation's reason.
 */
export interface AccountChange {
  kinds: readonly AccountChangeKind[];
  parts?: readonly string[];
}

/**
 * The credentials a change adds or removes, as `apply` names them (`cred` claim values:
 * `secret:<id>`, `key:<id>`, `trust:<id>`): the credential events name them, and a kind that
 * revokes `credential-tokens` revokes exactly their tokens.
 */
export type ChangedCredentials = string[];

/**
 * The table's effects, applied in the change's transaction after `apply`: the security events
 * queued (the outbox), a credential change counted (`credentials_revision`, which the credential
 * cache compares), and for a revoking change the token version bumped; the account's entry,
 * to publish after commit.
 */
async function applyEffects(
  trx: Knex.Transaction,
  realm: string,
  sub: string,
  effects: AccountEffects,
  changed: ChangedCredentials,
): Promise<RevocationEntry | undefined> {
  if (effects.signals.length > 0)
    await recordSignals(trx, realm, sub, effects.signals, effects.initiatedBy, changed);
  if (effects.countsCredentialChange)
    await trx('service_accounts').where({ sub }).increment('credentials_revision', 1);
  if (effects.revoke) return bumpTokenVersion(trx, realm, sub, { deleted: effects.deleted });
  return effects.revokeCredentials
    ? revokeCredentials(trx, realm, sub, changed)
    : findLiveEntry(trx, realm, sub);
}

/**
 * Runs `apply` on the locked account row in one transaction, then applies the change's effects
 * as the table lists them (`applyEffects`) and counts the account's revision up (its `ETag`).
 * `apply` may answer a refusal (a string), which rolls nothing back because it wrote nothing,
 * and applies no effect; it names the credentials it added or removed in `changed`
 * (`ChangedCredentials`). Undefined when there is no such account. The request's `If-Match`, if
 * it has one (`conditionalRoute`), is checked here, under the row's lock: of two changes naming
 * the same revision one finds it and counts it up, the other waits for the lock, then finds
 * another and gets `PreconditionFailed` (412).
 */
export async function changeAccount<R extends string = never>(
  db: Knex,
  realm: string,
  sub: string,
  change: AccountChange,
  apply: (trx: Knex.Transaction, changed: ChangedCredentials) => Promise<R | undefined>,
): Promise<RevocationEntry | R | undefined> {
  const effects = accountEffectsOf(change.kinds, change.parts);
  const precondition = takePrecondition();
  try {
    return await db.transaction(async (trx) => {
      const locked = await trx('service_accounts')
        .where({ realm, sub })
        .forUpdate()
        .first('sub', 'revision');
      if (locked === undefined) return undefined;
      if (precondition !== undefined && !meets(precondition, Number(locked.revision)))
        throw new PreconditionFailed();
      const changed: ChangedCredentials = [];
      const refusal = await apply(trx, changed);
      if (typeof refusal === 'string') return refusal;
      await trx('service_accounts').where({ sub }).increment('revision', 1);
      const entry = await applyEffects(trx, realm, sub, effects, changed);
      if (!entry) throw new NoLiveAccount();
      return entry;
    });
  } catch (err) {
    if (err instanceof NoLiveAccount) return undefined;
    throw err;
  }
}
