/**
 * The services' client of the token service's internal API (docs/architecture.md): the reads
 * resource servers make (`TokenServiceReader` of @plant/resource-auth: revocation snapshot and
 * feed, principal lookup, realm list) and the realm, user and service-account routes
 * account-admin manages. Every call goes through `callInternalApi` (credentials, request id,
 * timeout); every failure is an `InternalApiError`, which a caller may turn into its own
 * error with `mapError`. The management calls live in modules by what they manage (*-calls.ts).
 */
import type {
  CredentialPolicy,
  Delegation,
  DelegationChange,
  CredentialPolicyChange,
  GrantQuota,
  FactorPolicy,
  NewServiceAccountKey,
  NewServiceAccountSecret,
  ServiceAccountSecretWithValue,
  NewServiceAccountTrust,
  ServiceAccount,
  ServiceAccountChange,
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountTrust,
  ServiceAccountWithSecret,
  Invitation,
  InvitationPage,
  InvitationWithUrl,
  RealmSecurityEvent,
  User,
  UserChange,
  UserRole,
  UserFactors,
} from './internal-api-types.js';
import {
  TokenServiceReader,
  type TokenServiceClientOptions,
} from '@plant/resource-auth/platform/token-service-reader';
import { currentRequestId } from '../logging/index.js';
import * as credentials from './credential-calls.js';
import * as delegations from './delegation-calls.js';
import * as factors from './factor-calls.js';
import { type ManagementApi, managementJson } from './management-call.js';
import * as people from './people-calls.js';
import * as accounts from './service-account-calls.js';

export type {
  PrincipalLookup,
  Sized,
  TokenServiceClientOptions,
} from '@plant/resource-auth/platform/token-service-reader';

/**
 * The services' client: the reads of a resource server (`TokenServiceReader`) and the realm,
 * user and service-account routes account-admin manages. The current request's id goes with
 * every call unless the options name another source.
 */
export class TokenServiceClient extends TokenServiceReader {
  readonly #api: ManagementApi = {
    json: (method, path, body) => managementJson(this.target, this.timeoutMs, method, path, body),
    mapped: (call) => this.mapped(call),
  };

  constructor(options: TokenServiceClientOptions) {
    super({ requestId: currentRequestId, ...options });
  }

  // ---- Management (account-admin) ----------------------------------------------------

  getTenant(tenant: string): Promise<{ tenant: string; created_at: string }> {
    return people.getTenant(this.#api, tenant);
  }

  listServiceAccounts(tenant: string): Promise<ServiceAccount[]> {
    return accounts.listServiceAccounts(this.#api, tenant);
  }

  getServiceAccount(tenant: string, clientId: string): Promise<ServiceAccount> {
    return accounts.getServiceAccount(this.#api, tenant, clientId);
  }

  createServiceAccount(
    tenant: string,
    name: string,
    actor: string,
  ): Promise<ServiceAccountWithSecret> {
    return accounts.createServiceAccount(this.#api, tenant, name, actor);
  }

  updateServiceAccount(
    tenant: string,
    clientId: string,
    change: ServiceAccountChange,
    actor: string,
  ): Promise<ServiceAccount> {
    return accounts.updateServiceAccount(this.#api, tenant, clientId, change, actor);
  }

  resetSecret(tenant: string, clientId: string, actor: string): Promise<ServiceAccountWithSecret> {
    return accounts.resetSecret(this.#api, tenant, clientId, actor);
  }

  deleteServiceAccount(tenant: string, clientId: string): Promise<void> {
    return accounts.deleteServiceAccount(this.#api, tenant, clientId);
  }

  getCredentials(tenant: string, clientId: string): Promise<ServiceAccountCredentials> {
    return credentials.getCredentials(this.#api, tenant, clientId);
  }

  addKey(
    tenant: string,
    clientId: string,
    key: NewServiceAccountKey,
    actor: string,
  ): Promise<ServiceAccountKey> {
    return credentials.addKey(this.#api, tenant, clientId, key, actor);
  }

  removeKey(tenant: string, clientId: string, keyId: string): Promise<void> {
    return credentials.removeKey(this.#api, tenant, clientId, keyId);
  }

  addTrust(
    tenant: string,
    clientId: string,
    trust: NewServiceAccountTrust,
    actor: string,
  ): Promise<ServiceAccountTrust> {
    return credentials.addTrust(this.#api, tenant, clientId, trust, actor);
  }

  removeTrust(tenant: string, clientId: string, trustId: string): Promise<void> {
    return credentials.removeTrust(this.#api, tenant, clientId, trustId);
  }

  removeSecret(tenant: string, clientId: string): Promise<void> {
    return credentials.removeSecret(this.#api, tenant, clientId);
  }

  addSecret(
    tenant: string,
    clientId: string,
    secret: NewServiceAccountSecret,
    actor: string,
  ): Promise<ServiceAccountSecretWithValue> {
    return credentials.addSecret(this.#api, tenant, clientId, secret, actor);
  }

  removeSecretById(tenant: string, clientId: string, secretId: string): Promise<void> {
    return credentials.removeSecretById(this.#api, tenant, clientId, secretId);
  }

  /** Disable (every token refused, no credential works) or enable again. */
  setDisabled(
    tenant: string,
    clientId: string,
    disabled: boolean,
    actor: string,
  ): Promise<ServiceAccount> {
    return accounts.setDisabled(this.#api, tenant, clientId, disabled, actor);
  }

  /** The tenant's credential policy (maximum secret age, leak response, default quota). */
  getCredentialPolicy(tenant: string): Promise<CredentialPolicy> {
    return credentials.getCredentialPolicy(this.#api, tenant);
  }

  updateCredentialPolicy(
    tenant: string,
    change: CredentialPolicyChange,
    actor: string,
  ): Promise<CredentialPolicy> {
    return credentials.updateCredentialPolicy(this.#api, tenant, change, actor);
  }

  /** The account's own grant quota, or null for the tenant's default. Revokes nothing. */
  setQuota(
    tenant: string,
    clientId: string,
    quota: GrantQuota | null,
    actor: string,
  ): Promise<ServiceAccount> {
    return accounts.setQuota(this.#api, tenant, clientId, quota, actor);
  }

  /** Where the account may act for others (token exchange), per target audience. */
  getDelegations(tenant: string, clientId: string): Promise<Delegation[]> {
    return delegations.getDelegations(this.#api, tenant, clientId);
  }

  /** Puts the whole set in place; an audience removed or a scope narrowed revokes the account's older tokens. */
  setDelegations(
    tenant: string,
    clientId: string,
    change: DelegationChange[],
    actor: string,
  ): Promise<Delegation[]> {
    return delegations.setDelegations(this.#api, tenant, clientId, change, actor);
  }

  getUser(tenant: string, id: string): Promise<User> {
    return people.getUser(this.#api, tenant, id);
  }

  listUsers(tenant: string): Promise<User[]> {
    return people.listUsers(this.#api, tenant);
  }

  /** A new role or status (one of them); the person as they are now. Refused (409) for the last active Account Admin. */
  updateUser(tenant: string, id: string, change: UserChange, actor: string): Promise<User> {
    return people.updateUser(this.#api, tenant, id, change, actor);
  }

  removeUser(tenant: string, id: string, actor: string): Promise<void> {
    return people.removeUser(this.#api, tenant, id, actor);
  }

  /**
   * A page of the realm's pending invitations, newest first: `limit` of them after `cursor` (the
   * `next_cursor` of the page before, opaque). A token service from before pages answers the
   * whole list as an array: read as one last page.
   */
  listInvitations(
    tenant: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<InvitationPage> {
    return people.listInvitations(this.#api, tenant, page);
  }

  /** The invitation and its link, the one time the link is shown. */
  createInvitation(
    tenant: string,
    input: { email: string; role: UserRole },
    actor: string,
  ): Promise<InvitationWithUrl> {
    return people.createInvitation(this.#api, tenant, input, actor);
  }

  /** Revokes a pending invitation; the invitation as it was (undefined from a token service that answers 204). */
  revokeInvitation(tenant: string, id: string): Promise<Invitation | undefined> {
    return people.revokeInvitation(this.#api, tenant, id);
  }

  /** The realm's security events, newest first, ids below `before` when given. */
  listSecurityEvents(
    tenant: string,
    query: { before?: string | undefined; limit: number },
  ): Promise<RealmSecurityEvent[]> {
    return people.listSecurityEvents(this.#api, tenant, query);
  }

  /**
   * Signs the person out everywhere: their token version is bumped and published (every
   * replica refuses their older tokens and portal sessions) and the realm's sign-in sessions of
   * the person are deleted. Answers the person.
   */
  signOutEverywhere(tenant: string, id: string): Promise<User> {
    return people.signOutEverywhere(this.#api, tenant, id);
  }

  listUserFactors(tenant: string, userId: string): Promise<UserFactors> {
    return factors.listUserFactors(this.#api, tenant, userId);
  }

  /** Removes one factor of the person (404 when it is not theirs). */
  removeUserFactor(tenant: string, userId: string, factorId: string, actor: string): Promise<void> {
    return factors.removeUserFactor(this.#api, tenant, userId, factorId, actor);
  }

  /** Removes every factor and recovery code of the person; their sessions' version moves. */
  resetUserFactors(tenant: string, userId: string, actor: string): Promise<{ removed: number }> {
    return factors.resetUserFactors(this.#api, tenant, userId, actor);
  }

  getFactorPolicy(tenant: string): Promise<FactorPolicy> {
    return factors.getFactorPolicy(this.#api, tenant);
  }

  setFactorPolicy(
    tenant: string,
    requireAdminFactor: boolean,
    actor: string,
  ): Promise<FactorPolicy> {
    return factors.setFactorPolicy(this.#api, tenant, requireAdminFactor, actor);
  }
}
