import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { bumpTokenVersion, findLiveEntry } from './principal-repository.js';
import { type AccountSignal, recordSignals } from '../signals/index.js';

/** How a change of a service account reaches its tokens. */
export interface AccountChangeEffect {
  /** Bump the token version: every token minted before the change is refused (a reset, a removed key, a disable). */
  revoke: boolean;
  /** Also mark the principal deleted. */
  deleted?: boolean;
  /** The Shared Signals events the change causes, queued in its transaction (signal-outbox.ts). */
  signals?: readonly AccountSignal[];
}

/** Thrown inside a transaction to roll it back when the account vanished under the lock (it cannot: kept as a guard). */
class NoLiveAccount extends Error {}

/**
 * Runs `apply` on the locked account row in one transaction, counts a credential change
 * (`credentials_revision`, which the credential cache compares) and, for a revoking change,
 * bumps the token version with it, and queues the change's security events (the outbox). `apply` may answer a refusal (a string), which rolls
 * nothing back because it wrote nothing. Undefined when there is no such account.
 */
export async function changeAccount<R extends string = never>(
  db: Knex,
  realm: string,
  sub: string,
  effect: AccountChangeEffect,
  apply: (trx: Knex.Transaction) => Promise<R | undefined>,
): Promise<RevocationEntry | R | undefined> {
  try {
    return await db.transaction(async (trx) => {
      const locked = await trx('service_accounts').where({ realm, sub }).forUpdate().first('sub');
      if (locked === undefined) return undefined;
      const refusal = await apply(trx);
      if (typeof refusal === 'string') return refusal;
      if (effect.signals !== undefined) await recordSignals(trx, realm, sub, effect.signals);
      if (!effect.deleted)
        await trx('service_accounts').where({ sub }).increment('credentials_revision', 1);
      const entry = effect.revoke
        ? await bumpTokenVersion(trx, realm, sub, { deleted: effect.deleted ?? false })
        : await findLiveEntry(trx, realm, sub);
      if (!entry) throw new NoLiveAccount();
      return entry;
    });
  } catch (err) {
    if (err instanceof NoLiveAccount) return undefined;
    throw err;
  }
}
