import { fieldsOf, jsonBody } from '@plant/shared/http';
import {
  ActorBodySchema,
  type IdentityContext,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
  optionalJsonBody,
} from '../platform/index.js';
import {
  createInvitation,
  INVITATIONS_QUERY,
  listInvitations,
  parseInvitationsQuery,
  revokeInvitation,
  type InvitationSettings,
} from './invitations.js';
import { CreateInvitationSchema, UpdateUserSchema } from '../service-accounts/index.js';
import {
  listSecurityEvents,
  parseSecurityEventsQuery,
  SECURITY_EVENTS_QUERY,
} from './people-audit.js';
import { getUser, listUsers, removeUser, signOutUserEverywhere, updateUser } from './users.js';

/**
 * People of a realm (account-admin's People page): list, read, change role or status, remove;
 * invitations; the realm's security events. Only account-admin's credential (`admin`).
 */
// long: one route table, an entry per operation; each handler is parse, one use case, answer.
export function peopleRoutes(
  identity: IdentityContext,
  invitations: InvitationSettings,
  base: string,
): InternalRoute[] {
  const user = `${base}/users/:id`;
  return [
    {
      method: 'GET',
      path: `${base}/users`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await listUsers(identity, tenantOf(req)));
        },
      ],
    },
    {
      method: 'GET',
      path: user,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await getUser(identity, tenantOf(req), idOf(req, 'id')));
        },
      ],
    },
    {
      method: 'PATCH',
      path: user,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(UpdateUserSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const id = idOf(req, 'id');
          const { role, status } = UpdateUserSchema.parse(req.body, REPORT_INPUT);
          noStore(res).json(
            await updateUser(identity, tenant, id, {
              ...(role === undefined ? {} : { role }),
              ...(status === undefined ? {} : { status }),
            }),
          );
        },
      ],
    },
    {
      method: 'DELETE',
      path: user,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(ActorBodySchema) } },
      handlers: [
        optionalJsonBody,
        async (req, res) => {
          const tenant = tenantOf(req);
          const id = idOf(req, 'id');
          ActorBodySchema.parse(req.body ?? {}, REPORT_INPUT);
          await removeUser(identity, tenant, id);
          res.status(204).end();
        },
      ],
    },
    {
      method: 'GET',
      path: `${base}/invitations`,
      scope: 'admin',
      input: { query: INVITATIONS_QUERY },
      handlers: [
        async (req, res) => {
          const tenant = tenantOf(req);
          const page = parseInvitationsQuery(req.query);
          noStore(res).json(await listInvitations(identity, tenant, page));
        },
      ],
    },
    {
      method: 'POST',
      path: `${base}/invitations`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(CreateInvitationSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const input = CreateInvitationSchema.parse(req.body, REPORT_INPUT);
          noStore(res)
            .status(201)
            .json(await createInvitation(identity, invitations, tenant, input));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${base}/invitations/:id`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await revokeInvitation(identity, tenantOf(req), uuidOf(req.params.id)));
        },
      ],
    },
    {
      method: 'GET',
      path: `${base}/security-events`,
      scope: 'admin',
      input: { query: SECURITY_EVENTS_QUERY },
      handlers: [
        async (req, res) => {
          const tenant = tenantOf(req);
          const query = parseSecurityEventsQuery(req.query);
          noStore(res).json(await listSecurityEvents(identity, tenant, query));
        },
      ],
    },
  ];
}

/** Ends every session and token of one person (`admin`). */
export function signOutEverywhereRoute(identity: IdentityContext, base: string): InternalRoute {
  return {
    method: 'POST',
    path: `${base}/users/:id/sign-out-everywhere`,
    scope: 'admin',
    handlers: [
      async (req, res) => {
        noStore(res).json(await signOutUserEverywhere(identity, tenantOf(req), idOf(req, 'id')));
      },
    ],
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Invitation ids are uuids (a uuid column): anything else names nothing, and never reaches Postgres (22P02). */
function uuidOf(raw: unknown): string {
  const value = String(raw).toLowerCase();
  return UUID.test(value) ? value : '00000000-0000-0000-0000-000000000000';
}
