import type { RevocationEntry } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';

type ErrorClass = new () => Error;

/**
 * What every credential change does with the repository's answer: no account is 404 (or an
 * unknown tenant's 404), a refusal throws its error, and a change is published after commit:
 * every replica's credential cache drops the account at once (this one before the answer),
 * and resource servers apply the version, which only a revoking change (a removed credential,
 * disabling) has bumped. Shared by the use cases beside this file.
 */
export async function publishChange<R extends string>(
  ctx: Pick<IdentityContext, 'realms' | 'publisher'>,
  tenant: string,
  outcome: RevocationEntry | R | undefined,
  refusals: Record<R, ErrorClass>,
): Promise<void> {
  if (outcome === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  if (typeof outcome === 'string') throw new refusals[outcome]();
  await ctx.publisher.publish(outcome);
}
