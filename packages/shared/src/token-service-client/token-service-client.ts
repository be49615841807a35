/**
 * The services' client of the token service's internal API (docs/architecture.md): the reads
 * resource servers make (`TokenServiceReader` of @plant/resource-auth: revocation snapshot and
 * feed, principal lookup, realm list) and the realm, user and service-account routes
 * account-admin manages. Every call goes through `callInternalApi` (credentials, request id,
 * timeout); every failure is an `InternalApiError`, which a caller may turn into its own
 * error with `mapError`.
 */
import type {
  CredentialPolicy,
  CredentialPolicyChange,
  GrantQuota,
  FactorPolicy,
  NewServiceAccountKey,
  NewServiceAccountTrust,
  SecretLeak,
  ServiceAccount,
  ServiceAccountChange,
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountTrust,
  ServiceAccountWithSecret,
  Invitation,
  InvitationPage,
  InvitationWithUrl,
  SecurityEvent,
  User,
  UserChange,
  UserRole,
  UserFactors,
} from './internal-api-types.js';
import {
  answerMessageOf,
  callInternalApi,
  InternalApiError,
  type InternalApiAnswer,
} from '@plant/resource-auth/platform/internal-api-request';
import {
  realmPath as realm,
  TokenServiceReader,
  type TokenServiceClientOptions,
} from '@plant/resource-auth/platform/token-service-reader';
import { currentRequestId } from '../logging/index.js';

export type {
  PrincipalLookup,
  Sized,
  TokenServiceClientOptions,
} from '@plant/resource-auth/platform/token-service-reader';

const readsAnyButNoContent = (status: number) => status !== 204;
const seg = encodeURIComponent;
const account = (tenant: string, clientId: string) =>
  `${realm(tenant)}/service-accounts/${seg(clientId)}`;

/** Only the contract's fields travel on: an extra field from a newer token service never leaks out. */
function serviceAccountOf(body: ServiceAccount): ServiceAccount {
  return {
    name: body.name,
    client_id: body.client_id,
    role: body.role,
    grants: (body.grants ?? []).map((g) => ({ tag: g.tag, permission: g.permission })),
    dpop_bound_access_tokens: body.dpop_bound_access_tokens === true,
    receive_signals: body.receive_signals === true,
    created_at: body.created_at,
    created_by: body.created_by ?? null,
    last_used_at: body.last_used_at ?? null,
    disabled: body.disabled === true,
    disabled_at: body.disabled_at ?? null,
    secret_expires_at: body.secret_expires_at ?? null,
    quota: body.quota == null ? null : quotaOf(body.quota),
  };
}

const quotaOf = (body: GrantQuota): GrantQuota => ({
  per_minute: body.per_minute,
  mode: body.mode,
});
const leakOf = (body: SecretLeak): SecretLeak => ({
  url: body.url,
  source: body.source,
  reporter: body.reporter,
  action: body.action,
  reported_at: body.reported_at,
  secret_current: body.secret_current === true,
});
const policyOf = (body: CredentialPolicy): CredentialPolicy => ({
  secret_max_age_days: body.secret_max_age_days ?? null,
  leak_response: body.leak_response,
  default_quota: quotaOf(body.default_quota),
  updated_at: body.updated_at ?? null,
  updated_by: body.updated_by ?? null,
});

const dates = (body: {
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
}) => ({
  created_at: body.created_at,
  created_by: body.created_by ?? null,
  last_used_at: body.last_used_at ?? null,
});
const keyOf = (body: ServiceAccountKey): ServiceAccountKey => ({
  id: body.id,
  alg: body.alg,
  thumbprint: body.thumbprint,
  ...dates(body),
});
const trustOf = (body: ServiceAccountTrust): ServiceAccountTrust => ({
  id: body.id,
  issuer: body.issuer,
  subject: body.subject,
  audience: body.audience,
  ...dates(body),
});

/** Only the contract's fields travel on. */
function userOf(body: User): User {
  const factors = body.factors ?? { passkeys: 0, totp: false, recovery_codes_left: 0 };
  return {
    id: body.id,
    email: body.email,
    role: body.role,
    status: body.status === 'disabled' ? 'disabled' : 'active',
    created_at: body.created_at,
    last_sign_in_at: body.last_sign_in_at ?? null,
    factors: {
      passkeys: Number(factors.passkeys ?? 0),
      totp: factors.totp === true,
      recovery_codes_left: Number(factors.recovery_codes_left ?? 0),
    },
    token_version: Number(body.token_version ?? 0),
    factor_generation: Number(body.factor_generation ?? 0),
    factor_required: body.factor_required === true,
  };
}

function invitationOf(body: Invitation): Invitation {
  return {
    id: body.id,
    email: body.email,
    role: body.role,
    created_at: body.created_at,
    created_by: body.created_by ?? null,
    expires_at: body.expires_at,
  };
}

/**
 * The services' client: the reads of a resource server (`TokenServiceReader`) and the realm,
 * user and service-account routes account-admin manages. The current request's id goes with
 * every call unless the options name another source.
 */
export class TokenServiceClient extends TokenServiceReader {
  constructor(options: TokenServiceClientOptions) {
    super({ requestId: currentRequestId, ...options });
  }

  // ---- Management (account-admin) ----------------------------------------------------

  getTenant(tenant: string): Promise<{ tenant: string; created_at: string }> {
    return this.mapped(() => this.#json('GET', realm(tenant)));
  }

  listServiceAccounts(tenant: string): Promise<ServiceAccount[]> {
    return this.mapped(async () =>
      (await this.#json<ServiceAccount[]>('GET', `${realm(tenant)}/service-accounts`)).map(
        serviceAccountOf,
      ),
    );
  }

  getServiceAccount(tenant: string, clientId: string): Promise<ServiceAccount> {
    return this.mapped(async () =>
      serviceAccountOf(
        await this.#json('GET', `${realm(tenant)}/service-accounts/${seg(clientId)}`),
      ),
    );
  }

  createServiceAccount(
    tenant: string,
    name: string,
    actor: string,
  ): Promise<ServiceAccountWithSecret> {
    return this.mapped(async () => {
      const created = await this.#json<ServiceAccountWithSecret>(
        'POST',
        `${realm(tenant)}/service-accounts`,
        { name, actor },
      );
      return { ...serviceAccountOf(created), secret: created.secret };
    });
  }

  updateServiceAccount(
    tenant: string,
    clientId: string,
    change: ServiceAccountChange,
    actor: string,
  ): Promise<ServiceAccount> {
    return this.mapped(async () =>
      serviceAccountOf(
        await this.#json('PATCH', `${realm(tenant)}/service-accounts/${seg(clientId)}`, {
          ...change,
          actor,
        }),
      ),
    );
  }

  resetSecret(tenant: string, clientId: string, actor: string): Promise<ServiceAccountWithSecret> {
    return this.mapped(async () => {
      const reset = await this.#json<ServiceAccountWithSecret>(
        'POST',
        `${realm(tenant)}/service-accounts/${seg(clientId)}/reset-secret`,
        { actor },
      );
      return { ...serviceAccountOf(reset), secret: reset.secret };
    });
  }

  deleteServiceAccount(tenant: string, clientId: string): Promise<void> {
    return this.mapped(() =>
      this.#json<void>('DELETE', `${realm(tenant)}/service-accounts/${seg(clientId)}`),
    );
  }

  getCredentials(tenant: string, clientId: string): Promise<ServiceAccountCredentials> {
    return this.mapped(async () => {
      const body = await this.#json<ServiceAccountCredentials>(
        'GET',
        `${account(tenant, clientId)}/credentials`,
      );
      const secret =
        body.secret === null
          ? null
          : {
              created_at: body.secret.created_at,
              last_used_at: body.secret.last_used_at ?? null,
              expires_at: body.secret.expires_at ?? null,
            };
      return {
        client_id: body.client_id,
        disabled: body.disabled === true,
        secret,
        keys: body.keys.map(keyOf),
        trusts: body.trusts.map(trustOf),
        leaks: (body.leaks ?? []).map(leakOf),
      };
    });
  }

  addKey(
    tenant: string,
    clientId: string,
    key: NewServiceAccountKey,
    actor: string,
  ): Promise<ServiceAccountKey> {
    return this.mapped(async () =>
      keyOf(await this.#json('POST', `${account(tenant, clientId)}/keys`, { ...key, actor })),
    );
  }

  removeKey(tenant: string, clientId: string, keyId: string): Promise<void> {
    return this.mapped(() =>
      this.#json<void>('DELETE', `${account(tenant, clientId)}/keys/${seg(keyId)}`),
    );
  }

  addTrust(
    tenant: string,
    clientId: string,
    trust: NewServiceAccountTrust,
    actor: string,
  ): Promise<ServiceAccountTrust> {
    return this.mapped(async () =>
      trustOf(await this.#json('POST', `${account(tenant, clientId)}/trusts`, { ...trust, actor })),
    );
  }

  removeTrust(tenant: string, clientId: string, trustId: string): Promise<void> {
    return this.mapped(() =>
      this.#json<void>('DELETE', `${account(tenant, clientId)}/trusts/${seg(trustId)}`),
    );
  }

  removeSecret(tenant: string, clientId: string): Promise<void> {
    return this.mapped(() => this.#json<void>('DELETE', `${account(tenant, clientId)}/secret`));
  }

  /** Disable (every token refused, no credential works) or enable again. */
  setDisabled(
    tenant: string,
    clientId: string,
    disabled: boolean,
    actor: string,
  ): Promise<ServiceAccount> {
    return this.mapped(async () =>
      serviceAccountOf(
        await this.#json(
          'POST',
          `${account(tenant, clientId)}/${disabled ? 'disable' : 'enable'}`,
          { actor },
        ),
      ),
    );
  }

  /** The tenant's credential policy (maximum secret age, leak response, default quota). */
  getCredentialPolicy(tenant: string): Promise<CredentialPolicy> {
    return this.mapped(async () =>
      policyOf(await this.#json('GET', `${realm(tenant)}/credential-policy`)),
    );
  }

  updateCredentialPolicy(
    tenant: string,
    change: CredentialPolicyChange,
    actor: string,
  ): Promise<CredentialPolicy> {
    return this.mapped(async () =>
      policyOf(
        await this.#json('PATCH', `${realm(tenant)}/credential-policy`, { ...change, actor }),
      ),
    );
  }

  /** The account's own grant quota, or null for the tenant's default. Revokes nothing. */
  setQuota(
    tenant: string,
    clientId: string,
    quota: GrantQuota | null,
    actor: string,
  ): Promise<ServiceAccount> {
    return this.mapped(async () =>
      serviceAccountOf(
        await this.#json('PUT', `${account(tenant, clientId)}/quota`, { quota, actor }),
      ),
    );
  }

  getUser(tenant: string, id: string): Promise<User> {
    return this.mapped(async () =>
      userOf(await this.#json('GET', `${realm(tenant)}/users/${seg(id)}`)),
    );
  }

  listUsers(tenant: string): Promise<User[]> {
    return this.mapped(async () =>
      (await this.#json<User[]>('GET', `${realm(tenant)}/users`)).map(userOf),
    );
  }

  /** A new role or status (one of them); the person as they are now. Refused (409) for the last active Account Admin. */
  updateUser(tenant: string, id: string, change: UserChange, actor: string): Promise<User> {
    return this.mapped(async () =>
      userOf(await this.#json('PATCH', `${realm(tenant)}/users/${seg(id)}`, { ...change, actor })),
    );
  }

  removeUser(tenant: string, id: string, actor: string): Promise<void> {
    return this.mapped(() =>
      this.#json<void>('DELETE', `${realm(tenant)}/users/${seg(id)}`, { actor }),
    );
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
    const params = new URLSearchParams({ limit: String(page.limit) });
    if (page.cursor !== undefined) params.set('cursor', page.cursor);
    return this.mapped(async () => {
      const body = await this.#json<InvitationPage | Invitation[]>(
        'GET',
        `${realm(tenant)}/invitations?${params}`,
      );
      if (Array.isArray(body))
        return { invitations: body.slice(0, page.limit).map(invitationOf), next_cursor: null };
      return {
        invitations: body.invitations.map(invitationOf),
        next_cursor: typeof body.next_cursor === 'string' ? body.next_cursor : null,
      };
    });
  }

  /** The invitation and its link, the one time the link is shown. */
  createInvitation(
    tenant: string,
    input: { email: string; role: UserRole },
    actor: string,
  ): Promise<InvitationWithUrl> {
    return this.mapped(async () => {
      const created = await this.#json<InvitationWithUrl>('POST', `${realm(tenant)}/invitations`, {
        ...input,
        actor,
      });
      return { ...invitationOf(created), url: created.url };
    });
  }

  /** Revokes a pending invitation; the invitation as it was (undefined from a token service that answers 204). */
  revokeInvitation(tenant: string, id: string): Promise<Invitation | undefined> {
    return this.mapped(async () => {
      const revoked = await this.#json<Invitation | undefined>(
        'DELETE',
        `${realm(tenant)}/invitations/${seg(id)}`,
      );
      return revoked === undefined ? undefined : invitationOf(revoked);
    });
  }

  /** The realm's security events, newest first, ids below `before` when given. */
  listSecurityEvents(
    tenant: string,
    query: { before?: string | undefined; limit: number },
  ): Promise<SecurityEvent[]> {
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.before !== undefined) params.set('before', query.before);
    return this.mapped(() =>
      this.#json<SecurityEvent[]>('GET', `${realm(tenant)}/security-events?${params}`),
    );
  }

  /**
   * Signs the person out everywhere: their token version is bumped and published (every
   * replica refuses their older tokens and portal sessions) and the realm's sign-in sessions of
   * the person are deleted. Answers the person.
   */
  signOutEverywhere(tenant: string, id: string): Promise<User> {
    return this.mapped(() =>
      this.#json('POST', `${realm(tenant)}/users/${seg(id)}/sign-out-everywhere`),
    );
  }

  listUserFactors(tenant: string, userId: string): Promise<UserFactors> {
    return this.mapped(() => this.#json('GET', `${realm(tenant)}/users/${seg(userId)}/factors`));
  }

  /** Removes one factor of the person (404 when it is not theirs). */
  removeUserFactor(tenant: string, userId: string, factorId: string, actor: string): Promise<void> {
    return this.mapped(() =>
      this.#json<void>('DELETE', `${realm(tenant)}/users/${seg(userId)}/factors/${seg(factorId)}`, {
        actor,
      }),
    );
  }

  /** Removes every factor and recovery code of the person; their sessions' version moves. */
  resetUserFactors(tenant: string, userId: string, actor: string): Promise<{ removed: number }> {
    return this.mapped(() =>
      this.#json('DELETE', `${realm(tenant)}/users/${seg(userId)}/factors`, { actor }),
    );
  }

  getFactorPolicy(tenant: string): Promise<FactorPolicy> {
    return this.mapped(() => this.#json('GET', `${realm(tenant)}/factor-policy`));
  }

  setFactorPolicy(
    tenant: string,
    requireAdminFactor: boolean,
    actor: string,
  ): Promise<FactorPolicy> {
    return this.mapped(() =>
      this.#json('PUT', `${realm(tenant)}/factor-policy`, {
        require_admin_factor: requireAdminFactor,
        actor,
      }),
    );
  }

  /** A management call: the 2xx body (none for 204), else an `InternalApiError` with the status and the answer's message. */
  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const answer: InternalApiAnswer = await callInternalApi(this.target, {
      method,
      path,
      body,
      timeoutMs: this.timeoutMs,
      readsBody: readsAnyButNoContent,
    });
    const { status } = answer;
    if (status === 204) return undefined as T;
    if (status >= 200 && status < 300) return answer.body as T;
    const answerMessage = answerMessageOf(answer.body);
    throw new InternalApiError(`token service answered ${status}`, {
      status,
      ...(answerMessage === undefined ? {} : { answerMessage }),
    });
  }
}
