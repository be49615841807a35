import type { ServiceAccountCredentials } from '@plant/shared';
import type { Actor } from './actor.js';
import { assertClientId, type ServiceAccountDeps } from './service-accounts.js';

/** Every credential of the account (the secret only as its dates): readable by every role, like the account itself. */
export async function getServiceAccountCredentials(deps: ServiceAccountDeps, actor: Actor, clientId: string): Promise<ServiceAccountCredentials> {
  assertClientId(clientId);
  return deps.tokenService.getCredentials(actor.tenant, clientId);
}
