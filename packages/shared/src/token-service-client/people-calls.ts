/** The client's realm and people calls: the tenant, users, invitations, security events, signing out. */
import type {
  Invitation,
  InvitationPage,
  InvitationWithUrl,
  RealmSecurityEvent,
  User,
  UserChange,
  UserRole,
} from './internal-api-types.js';
import { userOf, invitationOf } from './contract-fields.js';
import { realm, seg, type ManagementApi } from './management-call.js';

export function getTenant(
  api: ManagementApi,
  tenant: string,
): Promise<{ tenant: string; created_at: string }> {
  return api.mapped(() => api.json('GET', realm(tenant)));
}

export function getUser(api: ManagementApi, tenant: string, id: string): Promise<User> {
  return api.mapped(async () => userOf(await api.json('GET', `${realm(tenant)}/users/${seg(id)}`)));
}

export function listUsers(api: ManagementApi, tenant: string): Promise<User[]> {
  return api.mapped(async () =>
    (await api.json<User[]>('GET', `${realm(tenant)}/users`)).map(userOf),
  );
}

export function updateUser(
  api: ManagementApi,
  tenant: string,
  id: string,
  change: UserChange,
  actor: string,
): Promise<User> {
  return api.mapped(async () =>
    userOf(await api.json('PATCH', `${realm(tenant)}/users/${seg(id)}`, { ...change, actor })),
  );
}

export function removeUser(
  api: ManagementApi,
  tenant: string,
  id: string,
  actor: string,
): Promise<void> {
  return api.mapped(() => api.json<void>('DELETE', `${realm(tenant)}/users/${seg(id)}`, { actor }));
}

export function listInvitations(
  api: ManagementApi,
  tenant: string,
  page: { limit: number; cursor?: string | undefined },
): Promise<InvitationPage> {
  const params = new URLSearchParams({ limit: String(page.limit) });
  if (page.cursor !== undefined) params.set('cursor', page.cursor);
  return api.mapped(async () => {
    const body = await api.json<InvitationPage | Invitation[]>(
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

export function createInvitation(
  api: ManagementApi,
  tenant: string,
  input: { email: string; role: UserRole },
  actor: string,
): Promise<InvitationWithUrl> {
  return api.mapped(async () => {
    const created = await api.json<InvitationWithUrl>('POST', `${realm(tenant)}/invitations`, {
      ...input,
      actor,
    });
    return { ...invitationOf(created), url: created.url };
  });
}

export function revokeInvitation(
  api: ManagementApi,
  tenant: string,
  id: string,
): Promise<Invitation | undefined> {
  return api.mapped(async () => {
    const revoked = await api.json<Invitation | undefined>(
      'DELETE',
      `${realm(tenant)}/invitations/${seg(id)}`,
    );
    return revoked === undefined ? undefined : invitationOf(revoked);
  });
}

export function listSecurityEvents(
  api: ManagementApi,
  tenant: string,
  query: { before?: string | undefined; limit: number },
): Promise<RealmSecurityEvent[]> {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.before !== undefined) params.set('before', query.before);
  return api.mapped(() =>
    api.json<RealmSecurityEvent[]>('GET', `${realm(tenant)}/security-events?${params}`),
  );
}

export function signOutEverywhere(api: ManagementApi, tenant: string, id: string): Promise<User> {
  return api.mapped(() =>
    api.json('POST', `${realm(tenant)}/users/${seg(id)}/sign-out-everywhere`),
  );
}
