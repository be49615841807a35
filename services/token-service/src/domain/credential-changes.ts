import type { RevocationEntry } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { assertTenantExists } from './tenants.js';
import type { IdentityContext } from './identity-context.js';

type ErrorClass = new () => Error;

/**
 * What every credential change does with the repository's answer: no account is 404 (or an
 * unknown tenant's 404), a refusal throws its error, and a change is published after commit:
 * every replica's credential cache drops the account at once (this one before the answer),
 * and resource servers apply the version, which only a revoking change (a removed credential,
 * disabling) has bumped. Shared by every credential change: service-account-credentials.ts,
 * add-service-account-key.ts, add-service-account-trust.ts, and disabling in service-accounts.ts.
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
