import { etagOf, fieldsOf, jsonBody, type RouteTable } from '@plant/shared/http';
import { INVITATION_REVISION } from '@plant/shared/token-service-client';
import {
  changePerson,
  getPerson,
  invitePerson,
  listInvitations,
  listPeople,
  removePerson,
  revokeInvitation,
  type PeopleDeps,
} from './people.js';
import {
  InvitationsQueryParams,
  InviteBody,
  parseInvitationsQuery,
  UpdateUserBody,
} from './people-validators.js';
import { actorOf, etagged, noStore, requestMeta } from '../platform/index.js';

/** `/users` and `/invitations` under the API base: parse, one use case, answer. `portalUrl` makes the next page's link. */
// long: one route table, an entry per operation; each handler is parse, one use case, answer.
export function peopleRoutes(people: PeopleDeps, base: string, portalUrl: string): RouteTable {
  const user = `${base}/users/:id`;
  const idOf = (params: Record<string, unknown>) => String(params.id);
  return [
    {
      method: 'GET',
      path: `${base}/users`,
      handlers: [
        async (req, res) => {
          noStore(res).json(await listPeople(people, actorOf(req)));
        },
      ],
    },
    {
      method: 'POST',
      path: `${base}/users`,
      input: { body: { type: 'json', fields: fieldsOf(InviteBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = InviteBody.parse(req.body);
          const answer = await invitePerson(people, actorOf(req), requestMeta(req), input);
          noStore(res)
            .status(201)
            .setHeader(
              'location',
              `${base}/invitations/${encodeURIComponent(answer.invitation.id)}`,
            )
            // The invitation's (it is never changed): its revocation may be conditional on it.
            .setHeader('etag', etagOf(INVITATION_REVISION))
            .json(answer);
        },
      ],
    },
    {
      method: 'GET',
      path: user,
      handlers: [
        async (req, res) => {
          noStore(res).json(etagged(res, await getPerson(people, actorOf(req), idOf(req.params))));
        },
      ],
    },
    {
      method: 'PATCH',
      path: user,
      input: { body: { type: 'json', fields: fieldsOf(UpdateUserBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = UpdateUserBody.parse(req.body);
          const changed = await changePerson(
            people,
            actorOf(req),
            requestMeta(req),
            idOf(req.params),
            input,
          );
          noStore(res).json(etagged(res, changed));
        },
      ],
    },
    {
      method: 'DELETE',
      path: user,
      handlers: [
        async (req, res) => {
          await removePerson(people, actorOf(req), requestMeta(req), idOf(req.params));
          noStore(res).status(204).end();
        },
      ],
    },
    {
      method: 'GET',
      path: `${base}/invitations`,
      input: { query: fieldsOf(InvitationsQueryParams) },
      handlers: [
        async (req, res) => {
          const query = parseInvitationsQuery(req.query);
          const page = await listInvitations(people, actorOf(req), query);
          if (page.nextCursor !== undefined) {
            const next = `${portalUrl.replace(/\/+$/, '')}${base}/invitations?limit=${query.limit}&cursor=${page.nextCursor}`;
            res.setHeader('link', `<${next}>; rel="next"`);
          }
          noStore(res).json(page.invitations);
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${base}/invitations/:id`,
      handlers: [
        async (req, res) => {
          await revokeInvitation(people, actorOf(req), requestMeta(req), idOf(req.params));
          noStore(res).status(204).end();
        },
      ],
    },
  ];
}
