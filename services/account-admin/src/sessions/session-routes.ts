/**
 * A person's own portal sessions, and an Account Admin's "sign out everywhere" of a person.
 * Ending one's own session may be conditional (`If-Match` on the constant `"v1"`, portal-sessions.ts).
 */
import type { ExpressRoute, RouteTable } from '@plant/shared/http';
import {
  endOwnSession,
  listOwnSessions,
  type SessionAdminDeps,
  signOutEverywhere,
} from './portal-sessions.js';
import { actorOf, conditional, noStore, requestMeta } from '../platform/index.js';

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
    conditional<ExpressRoute>({
      method: 'DELETE',
      path: `${apiBase}/me/sessions/:id`,
      handlers: [
        async (req, res) => {
          await endOwnSession(deps, actorOf(req), requestMeta(req), String(req.params.id));
          noStore(res).status(204).end();
        },
      ],
    }),
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
