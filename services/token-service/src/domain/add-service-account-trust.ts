import { randomBytes } from 'node:crypto';
import { MAX_TRUSTS_PER_SERVICE_ACCOUNT, type ServiceAccountTrust } from '@plant/shared';
import { urlProblem } from '../data-access/issuer-fetch.js';
import { publishChange } from './credential-changes.js';
import { DuplicateTrust, InvalidTrust, TrustedIssuerLimitReached, TrustLimitReached } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccountTrust } from './service-account-view.js';

/** What an issuer URL may be (the fetch policy, checked again at each fetch with the addresses the name resolves to then). */
export interface TrustPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  issuersPerTenant: number;
  /** This service's own base URL: its realms are never trusted issuers (a token of one account would become another's). */
  authUrl: string;
}

/** Why `issuer` cannot be trusted, or undefined. Nothing is fetched here: an issuer is only fetched when a token names it. */
export function issuerProblem(issuer: string, policy: TrustPolicy): string | undefined {
  const url = URL.parse(issuer);
  if (url === null) return 'issuer must be a URL';
  if (url.search !== '') return 'issuer must not have a query';
  const problem = urlProblem(url, policy);
  if (problem !== undefined) return `issuer ${problem}`;
  const own = URL.parse(policy.authUrl);
  if (own !== null && url.origin === own.origin) return "issuer must not be one of this service's own realms";
  return undefined;
}

/**
 * A trusted workload: tokens its platform issues (`iss` = issuer, `sub` = subject, `aud` =
 * audience) authenticate the account, with no secret stored anywhere. Exact strings, as OIDC
 * compares them. At most MAX_TRUSTS_PER_SERVICE_ACCOUNT per account, and `issuersPerTenant`
 * distinct issuers over the tenant (each issuer costs fetches and a cache entry). Adding
 * revokes nothing.
 */
export async function addServiceAccountTrust(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher' | 'trustPolicy'>,
  tenant: string,
  clientId: string,
  input: { issuer: string; subject: string; audience: string; actor?: string | undefined },
): Promise<ServiceAccountTrust> {
  const problem = issuerProblem(input.issuer, ctx.trustPolicy);
  if (problem !== undefined) throw new InvalidTrust(problem);
  const id = `trust-${randomBytes(8).toString('hex')}`;
  const trust = { id, issuer: input.issuer, subject: input.subject, audience: input.audience, createdBy: input.actor ?? null };
  const limits = { perAccount: MAX_TRUSTS_PER_SERVICE_ACCOUNT, issuersPerTenant: ctx.trustPolicy.issuersPerTenant };
  const outcome = await ctx.accountCredentials.addTrust(tenant, clientId, trust, limits);
  await publishChange(ctx, tenant, outcome, { duplicate: DuplicateTrust, 'limit-reached': TrustLimitReached, 'issuer-limit-reached': TrustedIssuerLimitReached });
  const added = (await ctx.accountCredentials.credentials(tenant, clientId))?.trusts.find((t) => t.id === id);
  // Removed again between the insert and this read: a conflict the caller may retry.
  if (added === undefined) throw new DuplicateTrust('The trust was removed again while it was added');
  return toServiceAccountTrust(added);
}

