/**
 * Who may act for others: an Account Admin allows a service account to exchange subjects'
 * tokens (RFC 8693) for one target audience at a time, with at most a scope. The permissions
 * ride with the account's cached credential, so a change is a change of the account
 * (changes/change-effects.ts: `delegation-grant` revokes nothing, `delegation-revoke` revokes
 * the account's older tokens, and every token exchanged with it as actor carries its version).
 */
import { BadRequest } from '@plant/shared/api';
import type { Delegation, DelegationChange } from '@plant/shared/token-service-client';
import { ServiceAccountNotFound, type IdentityContext } from '../platform/index.js';
import { assertTenantExists } from '../realms/index.js';
import type { DelegationRow } from './delegation-repository.js';

type DelegationContext = Pick<IdentityContext, 'delegations' | 'realms' | 'publisher'>;

const toDelegation = (row: DelegationRow): Delegation => ({
  audience: row.audience,
  scope: row.scope,
  created_at: row.created_at === null ? null : new Date(row.created_at).toISOString(),
  created_by: row.created_by,
});

/** The same URL, as the token endpoint compares resource indicators and audiences (a trailing slash on an empty path is the same). */
export function sameAudience(a: string, b: string): boolean {
  if (a === b) return true; // the usual case (the default resource): no URL parsing per grant
  const left = URL.parse(a);
  const right = URL.parse(b);
  return left !== null && right !== null && left.href === right.href;
}

export async function getDelegations(
  ctx: Pick<DelegationContext, 'delegations' | 'realms'>,
  tenant: string,
  clientId: string,
): Promise<Delegation[]> {
  const rows = await ctx.delegations.list(tenant, clientId);
  if (rows === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return rows.map(toDelegation);
}

/**
 * Puts the account's whole set of permissions in place. Each audience must be one the realm
 * issues service-account tokens for (`audiences`: the Plant Store's and `API_AUDIENCES`),
 * written as configured; never account-admin's (automation never manages accounts).
 */
export async function setDelegations(
  ctx: DelegationContext,
  tenant: string,
  clientId: string,
  change: readonly DelegationChange[],
  audiences: readonly string[],
  actor: string | null,
): Promise<Delegation[]> {
  const next = change.map((d) => {
    const audience = audiences.find((known) => sameAudience(known, d.audience));
    if (audience === undefined)
      throw new BadRequest(`audience ${JSON.stringify(d.audience)} is not an API of this platform`);
    return { audience, scope: d.scope };
  });
  if (new Set(next.map((d) => d.audience)).size !== next.length)
    throw new BadRequest('delegations must not repeat an audience');
  const entry = await ctx.delegations.replace(tenant, clientId, next, actor);
  if (entry === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
  return getDelegations(ctx, tenant, clientId);
}
