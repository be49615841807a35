import { isStorableText } from '@plant/shared/api';
import { isLosslessNumber } from '@plant/shared/http';
import { z } from 'zod';

export const PUSH_METHOD = 'urn:ietf:rfc:8935';
export const POLL_METHOD = 'urn:ietf:rfc:8936';

/** Bounds of what a receiver stores with us: every one is small next to the body limit. */
export const STREAM_BOUNDS = {
  eventsRequested: 32,
  eventType: 256,
  endpointUrl: 2048,
  authorizationHeader: 1024,
  description: 255,
  state: 256,
  subjectsPerStream: 100,
  subjectMember: 255,
  /** A poll answers at most this many SETs whatever `maxEvents` asks (RFC 8936 lets it answer fewer). */
  pollEvents: 100,
  /** A poll acknowledges at most this many jtis at once. */
  pollAcks: 1000,
} as const;

const streamId = z
  .string({ error: 'stream_id must be a string' })
  .min(1, { error: 'stream_id must not be empty' })
  .max(64, { error: 'stream_id is not a stream of this transmitter' })
  .refine(isStorableText, { error: 'stream_id is not a stream of this transmitter' });

/** No control characters: an Authorization header with CR or LF would split the request. */
const headerValue = z
  .string({ error: 'delivery.authorization_header must be a string' })
  .max(STREAM_BOUNDS.authorizationHeader, {
    error: `delivery.authorization_header must be at most ${STREAM_BOUNDS.authorizationHeader} characters`,
  })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), {
    error: 'delivery.authorization_header must not contain control characters',
  });

const DeliverySchema = z.object(
  {
    method: z.enum([PUSH_METHOD, POLL_METHOD], {
      error: `delivery.method must be ${PUSH_METHOD} (push) or ${POLL_METHOD} (poll)`,
    }),
    endpoint_url: z
      .string({ error: 'delivery.endpoint_url must be a string' })
      .max(STREAM_BOUNDS.endpointUrl, {
        error: `delivery.endpoint_url must be at most ${STREAM_BOUNDS.endpointUrl} characters`,
      })
      .optional(),
    authorization_header: headerValue.optional(),
  },
  { error: 'delivery must be an object' },
);

const EventsRequested = z
  .array(
    z
      .string({ error: 'events_requested must be an array of strings' })
      .max(STREAM_BOUNDS.eventType, {
        error: `an event type must be at most ${STREAM_BOUNDS.eventType} characters`,
      }),
    { error: 'events_requested must be an array of strings' },
  )
  .max(STREAM_BOUNDS.eventsRequested, {
    error: `events_requested holds at most ${STREAM_BOUNDS.eventsRequested} event types`,
  });

const Description = z
  .string({ error: 'description must be a string' })
  .max(STREAM_BOUNDS.description, {
    error: `description must be at most ${STREAM_BOUNDS.description} characters`,
  });

/**
 * Stream configuration from a receiver (SSF 1.0 §8.1.1): its own members only. The
 * transmitter's (`iss`, `aud`, `events_supported`, `events_delivered`,
 * `min_verification_interval`) may be sent back as read and are ignored, as SSF allows.
 */
export const CreateStreamSchema = z.object(
  {
    delivery: DeliverySchema,
    events_requested: EventsRequested.optional(),
    description: Description.optional(),
  },
  { error: 'body must be a JSON object' },
);

export const ReplaceStreamSchema = CreateStreamSchema.extend({ stream_id: streamId });

export const UpdateStreamSchema = z.object(
  {
    stream_id: streamId,
    delivery: DeliverySchema.optional(),
    events_requested: EventsRequested.optional(),
    description: Description.optional(),
  },
  { error: 'body must be a JSON object' },
);

export const StreamQuerySchema = z.object({ stream_id: streamId.optional() });
export const RequiredStreamQuerySchema = z.object({ stream_id: streamId });

export const StatusUpdateSchema = z.object(
  {
    stream_id: streamId,
    status: z.enum(['enabled', 'paused', 'disabled'], {
      error: 'status must be enabled, paused or disabled',
    }),
    reason: Description.optional(),
  },
  { error: 'body must be a JSON object' },
);

const SubjectMember = z.string().min(1).max(STREAM_BOUNDS.subjectMember);

/** Only `iss_sub` names a service account (the interoperability profile's subject); other formats are refused. */
export const SubjectSchema = z.object(
  {
    format: z.literal('iss_sub', { error: 'subject.format must be iss_sub' }),
    iss: SubjectMember,
    sub: SubjectMember,
  },
  { error: 'subject must be an object {format: "iss_sub", iss, sub}' },
);

export const SubjectRequestSchema = z.object(
  {
    stream_id: streamId,
    subject: SubjectSchema,
    verified: z.boolean({ error: 'verified must be true or false' }).optional(),
  },
  { error: 'body must be a JSON object' },
);

export const VerificationRequestSchema = z.object(
  {
    stream_id: streamId,
    state: z
      .string({ error: 'state must be a string' })
      .max(STREAM_BOUNDS.state, {
        error: `state must be at most ${STREAM_BOUNDS.state} characters`,
      })
      .optional(),
  },
  { error: 'body must be a JSON object' },
);

/** JSON numbers arrive lossless (json-body.ts); a poll's `maxEvents` is a small integer. */
const MaxEvents = z.preprocess(
  (v) => (isLosslessNumber(v) ? Number((v as { value: string }).value) : v),
  z
    .number({ error: 'maxEvents must be a non-negative integer' })
    .int({ error: 'maxEvents must be a non-negative integer' })
    .min(0, { error: 'maxEvents must be a non-negative integer' }),
);

const Jti = z.string({ error: 'ack must be an array of jti strings' }).max(128);

/** RFC 8936 §2.4: the poll request. */
export const PollRequestSchema = z.object(
  {
    maxEvents: MaxEvents.optional(),
    returnImmediately: z.boolean({ error: 'returnImmediately must be true or false' }).optional(),
    ack: z
      .array(Jti, { error: 'ack must be an array of jti strings' })
      .max(STREAM_BOUNDS.pollAcks, { error: `ack holds at most ${STREAM_BOUNDS.pollAcks} jtis` })
      .optional(),
    setErrs: z
      .record(Jti, z.unknown(), { error: 'setErrs must be an object keyed by jti' })
      .refine((v) => Object.keys(v).length <= STREAM_BOUNDS.pollAcks, {
        error: `setErrs holds at most ${STREAM_BOUNDS.pollAcks} jtis`,
      })
      .optional(),
  },
  { error: 'body must be a JSON object' },
);
