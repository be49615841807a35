import type { ServiceAccount } from '@plant/shared';
import type { Actor } from './actor.js';
import { assertClientId, type ServiceAccountDeps } from './service-accounts.js';

export async function getServiceAccount(deps: ServiceAccountDeps, actor: Actor, clientId: string): Promise<ServiceAccount> {
  assertClientId(clientId);
  return deps.tokenService.getServiceAccount(actor.tenant, clientId);
}
