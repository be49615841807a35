/** A person's own portal sessions, and an Account Admin's "sign out everywhere" of a person. */
import type { RouteTable } from '@plant/shared/http';
import {
  endOwnSession,
  listOwnSessions,
  type SessionAdminDeps,
  signOutEverywhere,
} from './portal-sessions.js';
import { actorOf, noStore, requestMeta } from '../platform/index.js';

export function sessionRoutes(deps: SessionAdminDeps, apiBase: string): RouteTable {
  return [
    {
      method: 'GET',
      path: `${apiBase}/me/sessions`,
      handlers: [
        async (req, res) => {
          noStore(res).json(await listOwnSessions(deps.store, actorOf(req), req.sessionHandle));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${apiBase}/me/sessions/:id`,
      handlers: [
        async (req, res) => {
          await endOwnSession(deps, actorOf(req), requestMeta(req), String(req.params.id));
          noStore(res).status(204).end();
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${apiBase}/users/:id/sessions`,
      handlers: [
        async (req, res) => {
          noStore(res).json(
            await signOutEverywhere(deps, actorOf(req), requestMeta(req), String(req.params.id)),
          );
        },
      ],
    },
  ];
}
