import { startWorkloadIssuer, type WorkloadIssuer } from '@plant/test-kit';
import type { Test } from 'supertest';
import { sendAssertion } from './assertion-client.js';
import type { Harness } from './harness.js';
import { internal, type CreatedAccount } from './internal-client.js';

/** Federation as the tests run it: a local issuer on 127.0.0.1 over http, short limits. */
export const FEDERATION_TEST_ENV = {
  FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
  FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
  FEDERATION_FETCH_TIMEOUT_MS: '1000',
  FEDERATION_JWKS_REFETCH_SECONDS: '1',
};

/** A workload of a platform, trusted by a service account: what its platform's tokens must say. */
export interface TrustedWorkload {
  account: CreatedAccount;
  issuer: WorkloadIssuer;
  subject: string;
  audience: string;
  trustId: string;
}

/** A new account that trusts `subject` of `issuer` for the realm's issuer as audience. */
export async function trustedWorkload(
  h: Harness,
  tenant: string,
  issuer: WorkloadIssuer,
  subject = `system:serviceaccount:jobs:${Math.random().toString(36).slice(2, 8)}`,
): Promise<TrustedWorkload> {
  const account = await internal(h).createServiceAccount(tenant);
  const audience = h.issuer(tenant);
  const added = await internal(h).addTrust(tenant, account.client_id, {
    issuer: issuer.issuer,
    subject,
    audience,
  });
  if (added.status !== 201)
    throw new Error(`add trust failed: ${added.status} ${JSON.stringify(added.body)}`);
  return { account, issuer, subject, audience, trustId: added.body.id };
}

/** The workload presents a token of its platform (default: about itself, for its audience) as the client assertion. */
export function workloadGrant(
  h: Harness,
  tenant: string,
  workload: TrustedWorkload,
  claims: Record<string, unknown> = {},
): Test {
  const token = workload.issuer.mint({
    subject: workload.subject,
    audience: workload.audience,
    claims,
  });
  return sendAssertion(h, tenant, workload.account.client_id, token);
}

export { startWorkloadIssuer };
