/**
 * The OpenAPI operations of portal sessions (session-routes.ts), registered into the account
 * admin API's document.
 */
import {
  errorResponses,
  jsonResponse,
  responseSchema,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import { z } from 'zod';
import type { SessionView } from './portal-sessions.js';
import type { OperationErrors } from '../platform/index.js';

export const SessionSchema = responseSchema<SessionView>()(
  z
    .object({
      id: z.string().meta({
        description:
          'An opaque handle naming the session (never its cookie): pass it to DELETE /me/sessions/{id}',
      }),
      browser: z
        .string()
        .nullable()
        .meta({ description: 'The User-Agent at sign-in, cut to 256 characters' }),
      address: z.string().nullable().meta({ description: 'The address it was last seen from' }),
      started_at: z.iso.datetime(),
      last_seen_at: z.iso
        .datetime()
        .meta({ description: 'The last request with it, to within a minute' }),
      current: z.boolean().meta({ description: 'The session making this request' }),
    })
    .meta({ id: 'PortalSession' }),
);

const SignedOutSchema = z
  .object({ sessions_ended: z.int().min(0) })
  .meta({ id: 'SignedOutEverywhere' });

const SessionPath = z.object({ id: z.string().max(64) });
const UserPath = z.object({ id: z.string().max(64) });

export function registerSessionOperations(
  registry: OpenAPIRegistry,
  { common, management }: OperationErrors,
): void {
  registry.registerPath({
    method: 'get',
    path: '/me/sessions',
    summary: "The caller's own portal sessions, newest first (a bearer caller has none)",
    operationId: 'listMySessions',
    responses: {
      200: jsonResponse('Live portal sessions', z.array(SessionSchema)),
      ...errorResponses(common),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/me/sessions/{id}',
    summary: 'End one of your own portal sessions (the current one too: a sign-out); audited',
    operationId: 'endMySession',
    request: { params: SessionPath },
    responses: {
      204: { description: 'Ended: its next request is signed out' },
      ...errorResponses({
        404: 'No live session of yours has this id',
        ...common,
        403: 'Missing or mismatched X-CSRF-Token on a session request',
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/users/{id}/sessions',
    summary:
      "Sign a person out everywhere: every portal session ends, their tokens are revoked and the realm's sign-in sessions end; audited",
    operationId: 'signOutEverywhere',
    request: { params: UserPath },
    responses: {
      200: jsonResponse('Signed out', SignedOutSchema),
      ...errorResponses({ 404: 'No such person in this tenant', ...management }),
    },
  });
}
