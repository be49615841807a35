/**
 * What every change to a person's factors writes with it, in the change's own transaction: the
 * check that no reset or removal moved the person's factor generation meanwhile, and the
 * person's trail event (people-audit), never a code, a secret, a challenge or a proof.
 */
import type { Knex } from '@plant/shared/db';
import type { PersonChangeEvent } from '../people/index.js';
import { insertPeopleAuditEvent } from '../people-audit/index.js';
import { StaleFactorGeneration } from '../platform/index.js';

/** A factor change for the people audit trail (`user_security_events`, people-audit/people-audit-repository.ts); the realm is the call's. Never a code, a secret, a challenge or a proof. */
export interface FactorAuditEvent {
  action: string;
  actorSub: string | null;
  actorEmail?: string | null;
  targetSub: string;
  targetEmail?: string | null;
  details?: Record<string, unknown>;
  address?: string | null;
}

/** A factor change's event: its action is the effects table's (changes/change-effects.ts). */
export type FactorChangeEvent = Omit<FactorAuditEvent, 'action'>;

export interface PolicyEvent {
  actorSub: string | null;
  actorEmail?: string | null;
  address?: string | null;
}

export /**
 * Holds the person's row (a reset or removal, which moves the generation, waits for this
 * transaction, and then takes the new factor away too) and refuses when the generation moved.
 */
async function assertGeneration(
  trx: Knex,
  realm: string,
  sub: string,
  generation: number | undefined,
): Promise<void> {
  if (generation === undefined) return;
  const row = await trx('users').where({ realm, sub }).forUpdate().first('factor_generation');
  if (row === undefined || Number(row.factor_generation) !== generation)
    throw new StaleFactorGeneration();
}

export /** A factor change's event as the people audit trail takes it (no request id). */
function personEvent(event: FactorChangeEvent): PersonChangeEvent {
  return {
    actorSub: event.actorSub,
    actorEmail: event.actorEmail ?? null,
    targetSub: event.targetSub,
    targetEmail: event.targetEmail ?? null,
    details: event.details ?? {},
    address: event.address ?? null,
    requestId: null,
  };
}

export function insertEvent(trx: Knex, realm: string, event: FactorAuditEvent): Promise<void> {
  return insertPeopleAuditEvent(trx, { ...personEvent(event), realm, action: event.action });
}
