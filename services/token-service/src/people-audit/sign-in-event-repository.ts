/**
 * Successful sign-ins in the people trail (`user.sign_in`): who signed in, when, to which
 * client, with which methods (RFC 8176 `amr`), from which address, the way every other entry
 * of the trail records its source. Failed sign-ins are never written: anyone can post the form
 * for any email (docs/decisions/0040-activity-shows-changes-and-sign-ins.md).
 *
 * A person with a password can sign in as often as they like, so the rows are bounded by what
 * exists, not by how often it happens: each sign-in, in its own transaction, keeps only the
 * person's newest `SIGN_IN_EVENTS_PER_PERSON` and deletes up to `SIGN_IN_EXPIRED_PER_WRITE` of
 * the realm's sign-ins older than `SIGN_IN_RETENTION_DAYS`. The trail's sign-ins are then at most
 * (people who signed in within the retention) × the per-person bound, and a flood of sign-ins
 * replaces rows instead of adding them. No job has to run: a realm nobody signs in to keeps at
 * most its last rows per person.
 */
import type { Knex } from '@plant/shared/db';
import { SIGN_IN_EVENT_RETENTION } from '@plant/shared/token-service-client';
import { insertPeopleAuditEvent } from './people-audit-repository.js';

export const SIGN_IN_ACTION = 'user.sign_in';
/** Enough to see a person's recent pattern on Activity; People shows the last one. */
export const SIGN_IN_EVENTS_PER_PERSON = SIGN_IN_EVENT_RETENTION.perPerson;
/** As long as an admin would look back for "who was in"; older sign-ins are deleted. */
export const SIGN_IN_RETENTION_DAYS = SIGN_IN_EVENT_RETENTION.days;
/** More than one, so the expired rows of people who stopped signing in drain faster than one sign-in adds. */
export const SIGN_IN_EXPIRED_PER_WRITE = 10;

export interface SignInEvent {
  realm: string;
  sub: string;
  email: string | null;
  /** The OAuth client the person signed in to (the portal, plantctl). */
  clientId: string | null;
  /** The methods verified (RFC 8176): never a code, a password or a credential id. */
  amr: readonly string[];
  /** The realm already had this person signed in: a factor confirmed for a sensitive action. */
  stepUp: boolean;
  address: string | null;
}

/** In the caller's transaction: the sign-in recorded, the person's and the realm's excess pruned. */
export async function insertSignInEvent(trx: Knex, event: SignInEvent): Promise<void> {
  await insertPeopleAuditEvent(trx, {
    realm: event.realm,
    action: SIGN_IN_ACTION,
    actorSub: event.sub,
    actorEmail: event.email,
    targetSub: event.sub,
    targetEmail: event.email,
    details: { client_id: event.clientId, amr: [...event.amr], step_up: event.stepUp },
    address: event.address,
    requestId: null,
  });
  await trx.raw(
    `delete from user_security_events where id in (
       select id from user_security_events
        where realm = ? and target_sub = ? and action = ?
        order by id desc offset ?)`,
    [event.realm, event.sub, SIGN_IN_ACTION, SIGN_IN_EVENTS_PER_PERSON],
  );
  await trx.raw(
    `delete from user_security_events where id in (
       select id from user_security_events
        where realm = ? and action = ? and occurred_at < now() - make_interval(days => ?)
        order by occurred_at limit ?)`,
    [event.realm, SIGN_IN_ACTION, SIGN_IN_RETENTION_DAYS, SIGN_IN_EXPIRED_PER_WRITE],
  );
}
