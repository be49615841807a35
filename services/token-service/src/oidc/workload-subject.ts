/**
 * A trusted workload's platform token as a token exchange's subject (RFC 8693 `jwt` type): the
 * client-auth wing finds the one account whose trust names the workload and verifies the token
 * as that trust's client assertion; here it becomes the principal the exchange narrows, the
 * account exactly as a client-credentials token of its own would name it (role, grants, the
 * role's scope, the version its resource servers check), expiring with the platform token.
 */
import type { Principal } from '@plant/resource-auth';
import type { ClientAuthentication } from '../client-auth/index.js';
import { AssertionRejected, WorkloadTokenRefused } from '../platform/index.js';
import { serviceAccountScope } from './principal-metadata.js';

export async function workloadSubject(
  clientAuth: ClientAuthentication,
  realm: string,
  token: string,
): Promise<Principal> {
  let found: Awaited<ReturnType<ClientAuthentication['workloadSubject']>>;
  try {
    found = await clientAuth.workloadSubject(realm, token);
  } catch (err) {
    if (err instanceof AssertionRejected) throw new WorkloadTokenRefused(err.reason);
    throw err;
  }
  const { credential, exp } = found;
  return {
    tenant: realm,
    sub: credential.sub,
    clientId: credential.sub,
    principalType: 'service_account',
    role: credential.role,
    grants: credential.grants,
    scope: serviceAccountScope(credential.role, credential.grants),
    ver: credential.token_version,
    exp,
  };
}
