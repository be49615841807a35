/**
 * Who may act for others (token exchange, RFC 8693): an Account Admin allows a service account
 * to exchange its callers' tokens for tokens to one target API, with at most a scope. The token
 * service keeps the permissions and decides each exchange; here the change is checked (Account
 * Admin, a recent second factor: it grants access), asked and recorded in the audit trail.
 * A change that grants anything new is undone when its event cannot be written, like adding a
 * key; one that only narrows revokes the account's older tokens (every token it exchanged among
 * them) and cannot be undone, so its event is retried (record-audit-event.ts).
 */
import type { Delegation, DelegationChange } from '@plant/shared/token-service-client';
import { recordIrreversible, recordOrUndo } from '../audit/index.js';
import {
  actorLabel,
  assertCanManage,
  assertRecentFactor,
  type Actor,
  type RequestMeta,
} from '../platform/index.js';
import { assertClientId, auditEvent, type ServiceAccountDeps } from './managed-service-accounts.js';

/** Where the account may act for others; every role of the tenant may read it, as its credentials. */
export async function getDelegations(
  deps: ServiceAccountDeps,
  actor: Actor,
  clientId: string,
): Promise<Delegation[]> {
  assertClientId(clientId);
  return deps.tokenService.getDelegations(actor.tenant, clientId);
}

const scopesOf = (scope: string) => new Set(scope.split(' '));

/** True when `next` allows something `before` did not: an audience, or a scope at one. */
function grantsMore(before: readonly Delegation[], next: readonly DelegationChange[]): boolean {
  return next.some((d) => {
    const had = before.find((b) => b.audience === d.audience);
    if (had === undefined) return true;
    const held = scopesOf(had.scope);
    return [...scopesOf(d.scope)].some((scope) => !held.has(scope));
  });
}

const summary = (list: readonly { audience: string; scope: string }[]) =>
  list.map((d) => ({ audience: d.audience, scope: d.scope }));

/** Puts the whole set in place (an empty list: it may act for no one). */
export async function setDelegations(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  next: DelegationChange[],
): Promise<Delegation[]> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'change-delegations');
  assertClientId(clientId);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const before = await deps.tokenService.getDelegations(actor.tenant, clientId);
  const after = await deps.tokenService.setDelegations(
    actor.tenant,
    clientId,
    next,
    actorLabel(actor),
  );
  const event = auditEvent(actor, meta, 'service_account.delegation_change', account, {
    delegations: { from: summary(before), to: summary(after) },
  });
  if (grantsMore(before, next))
    await recordOrUndo(deps, event, async () => {
      await deps.tokenService.setDelegations(
        actor.tenant,
        clientId,
        summary(before),
        actorLabel(actor),
      );
    });
  else await recordIrreversible(deps, event);
  return after;
}
