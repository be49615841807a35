import type { ServiceAccount } from '@plant/shared';
import type { Actor } from './actor.js';
import type { ServiceAccountDeps } from './service-accounts.js';

/** The caller's tenant's service accounts (name order); anyone signed in to the tenant may list them. */
export async function listServiceAccounts(deps: ServiceAccountDeps, actor: Actor): Promise<ServiceAccount[]> {
  return deps.tokenService.listServiceAccounts(actor.tenant);
}
