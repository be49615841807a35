/** The shape of `GET /audit-events`' items, for the OpenAPI document. */
import { z } from 'zod';
import { AUDIT_ACTIONS, type AuditEvent } from './list-audit-events.js';

/**
 * `AuditEvent.action` is a plain string in the domain while the document names every action
 * (the audit repository's AUDIT_ACTIONS), so the tie is one way: the schema describes every field of the type.
 */
export const AuditEventSchema = z
  .object({
    id: z.string(),
    occurred_at: z.iso.datetime(),
    actor_sub: z.string(),
    actor_email: z.string().nullable(),
    actor_type: z.enum(['user', 'service_account']),
    action: z.string().meta({
      description: `What happened. Account admin's actions: ${AUDIT_ACTIONS.join(', ')}. The realm's own events (prefixed ids \`realm-<n>\`): invitation.accept, user.sign_in (a successful sign-in; \`details\`: \`client_id\`, \`amr\` (RFC 8176), \`step_up\`), and the second-factor events the realm records`,
      examples: ['user.invite', 'invitation.accept'],
    }),
    target_type: z.enum(['service_account', 'user', 'invitation', 'session']).meta({
      description: 'What client_id names: a service account, a person, an invitation or a session',
    }),
    client_id: z.string().meta({ description: "The target's id (kept under this name)" }),
    name: z.string().nullable(),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: 'Non-secret facts of the change, e.g. {role: {from, to}}' }),
    request_id: z.string().nullable(),
    address: z.string().nullable(),
  })
  .meta({ id: 'AuditEvent' }) satisfies z.ZodType<AuditEvent>;
