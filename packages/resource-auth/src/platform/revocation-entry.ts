/**
 * Revocation state as it arrives from outside (docs/architecture.md): messages on the Redis
 * channel `plantstore:revocations`, the snapshot and the change feed of the internal API, the
 * answer of `GET /internal/v1/realms/:tenant/principals/:sub`. Anything not exactly an entry is
 * rejected: every reader of the channel or the internal API validates with these, one way.
 */
import { INT64_MAX } from './int64.js';
import type {
  LiveRevocationEntry,
  RevocationChanges,
  RevocationEntry,
  RevocationSnapshot,
} from './revocation-types.js';
import { MAX_ENTRY_CREDENTIALS } from './revocation-types.js';

const MAX_NAME_LENGTH = 255;
/** Far longer than any real entry; bounds the parse cost of a hostile or broken publisher. */
const MAX_MESSAGE_LENGTH = 4096;
/** Above the longest horizon the token service can have (ACCESS_TOKEN_TTL ≤ 86,400 s plus the margin). */
const MAX_TTL_SECONDS = 7 * 86_400;
const POSITION_LITERAL = /^(0|[1-9][0-9]{0,18})$/;

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_LENGTH;
}

/** `credentials` when absent (undefined), or a short list of names; false when malformed. */
function credentialsOf(value: unknown): string[] | undefined | false {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > MAX_ENTRY_CREDENTIALS || !value.every(isName))
    return false;
  return value.length === 0 ? undefined : [...(value as string[])];
}

/** The entry, or undefined when `value` is not exactly a well-formed `RevocationEntry`. Extra fields are dropped. */
export function toRevocationEntry(value: unknown): RevocationEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tenant, sub, version, deleted, credentials } = value as Record<string, unknown>;
  if (!isName(tenant) || !isName(sub)) return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1)
    return undefined;
  if (typeof deleted !== 'boolean') return undefined;
  const named = credentialsOf(credentials);
  if (named === false) return undefined;
  return named === undefined
    ? { tenant, sub, version, deleted }
    : { tenant, sub, version, deleted, credentials: named };
}

/** An entry of the snapshot or the feed: a `RevocationEntry` with its `ttl`, a whole number of seconds ≥ 1. */
export function toLiveRevocationEntry(value: unknown): LiveRevocationEntry | undefined {
  const entry = toRevocationEntry(value);
  const { ttl } = value as { ttl?: unknown };
  if (
    entry === undefined ||
    typeof ttl !== 'number' ||
    !Number.isSafeInteger(ttl) ||
    ttl < 1 ||
    ttl > MAX_TTL_SECONDS
  )
    return undefined;
  return { ...entry, ttl };
}

/**
 * A change-feed position: the decimal form of an int64 from 0 up, exactly as the token service
 * writes it (no sign, no leading zero, no exponent); undefined for anything else.
 */
export function parseFeedPosition(value: unknown): string | undefined {
  if (typeof value !== 'string' || !POSITION_LITERAL.test(value) || BigInt(value) > INT64_MAX)
    return undefined;
  return value;
}

/** Parses a channel message; undefined for anything malformed (the reader counts and ignores it). */
export function parseRevocationMessage(message: string): RevocationEntry | undefined {
  return parseRevocationEnvelope(message)?.entry;
}

/**
 * A channel message as the token service writes it: the entry, and beside it (optional: older
 * publishers and republished entries have neither) the W3C trace context of the change that
 * published it and when it was published (`published_ms`, Unix milliseconds), for the
 * propagation delay a resource server measures.
 */
export interface RevocationEnvelope {
  entry: RevocationEntry;
  traceparent?: string;
  tracestate?: string;
  publishedMs?: number;
}

/** `version-traceid-parentid-flags`, lower-case hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** The W3C limit on `tracestate`. */
const MAX_TRACESTATE_LENGTH = 512;

/** The message's entry and what came with it; undefined when the entry is malformed. A malformed extra is dropped, not fatal. */
export function parseRevocationEnvelope(message: string): RevocationEnvelope | undefined {
  if (message.length > MAX_MESSAGE_LENGTH) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  const entry = toRevocationEntry(value);
  if (entry === undefined) return undefined;
  const { traceparent, tracestate, published_ms } = value as Record<string, unknown>;
  const envelope: RevocationEnvelope = { entry };
  if (typeof traceparent === 'string' && TRACEPARENT.test(traceparent)) {
    envelope.traceparent = traceparent;
    if (typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE_LENGTH)
      envelope.tracestate = tracestate;
  }
  if (typeof published_ms === 'number' && Number.isSafeInteger(published_ms) && published_ms > 0)
    envelope.publishedMs = published_ms;
  return envelope;
}

/** The channel message of `entry`, with the trace context and publication time `parseRevocationEnvelope` reads. */
export function revocationMessage(
  entry: RevocationEntry,
  extras: { traceparent?: string; tracestate?: string; publishedMs?: number } = {},
): string {
  const { traceparent, tracestate, publishedMs } = extras;
  return JSON.stringify({
    ...entry,
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(tracestate === undefined ? {} : { tracestate }),
    ...(publishedMs === undefined ? {} : { published_ms: publishedMs }),
  });
}

/** Every item of `items` as a live entry, or undefined when one is not (the whole answer is then refused). */
function liveEntries(items: unknown): LiveRevocationEntry[] | undefined {
  if (!Array.isArray(items)) return undefined;
  const parsed: LiveRevocationEntry[] = [];
  for (const item of items) {
    const entry = toLiveRevocationEntry(item);
    if (entry === undefined) return undefined;
    parsed.push(entry);
  }
  return parsed;
}

/**
 * The snapshot, or undefined when the body is not `{position, entries: LiveRevocationEntry[]}`.
 * One bad entry rejects the whole snapshot: skipping it could leave a revoked principal
 * looking valid, so the caller keeps its previous state and retries instead.
 */
export function parseRevocationSnapshot(body: unknown): RevocationSnapshot | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { position: rawPosition, entries: rawEntries } = body as {
    position?: unknown;
    entries?: unknown;
  };
  const position = parseFeedPosition(rawPosition);
  const entries = liveEntries(rawEntries);
  return position === undefined || entries === undefined ? undefined : { position, entries };
}

/** A page of the change feed, or undefined when the body is not one (the same all-or-nothing rule). */
export function parseRevocationChanges(body: unknown): RevocationChanges | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const {
    reset,
    position: rawPosition,
    more,
    entries: rawEntries,
  } = body as Record<string, unknown>;
  if (reset === true) return { reset: true };
  const position = parseFeedPosition(rawPosition);
  const entries = liveEntries(rawEntries);
  if (
    reset !== false ||
    typeof more !== 'boolean' ||
    position === undefined ||
    entries === undefined
  )
    return undefined;
  return { reset: false, position, more, entries };
}
