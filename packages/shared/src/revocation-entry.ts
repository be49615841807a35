/**
 * Revocation state as it arrives from outside (docs/architecture.md): messages on the Redis
 * channel `plantstore:revocations`, the list of `GET /internal/v1/revocations`, the answer of
 * `GET /internal/v1/realms/:tenant/principals/:sub`. Anything not exactly an entry is rejected:
 * every reader of the channel or the internal API validates with these, one way.
 */
import type { RevocationEntry } from './internal-api-types.js';

const MAX_NAME_LENGTH = 255;
/** Far longer than any real entry; bounds the parse cost of a hostile or broken publisher. */
const MAX_MESSAGE_LENGTH = 4096;

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_LENGTH;
}

/** The entry, or undefined when `value` is not exactly a well-formed `RevocationEntry`. Extra fields are dropped. */
export function toRevocationEntry(value: unknown): RevocationEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tenant, sub, version, deleted } = value as Record<string, unknown>;
  if (!isName(tenant) || !isName(sub)) return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return undefined;
  if (typeof deleted !== 'boolean') return undefined;
  return { tenant, sub, version, deleted };
}

/** Parses a channel message; undefined for anything malformed (the reader counts and ignores it). */
export function parseRevocationMessage(message: string): RevocationEntry | undefined {
  if (message.length > MAX_MESSAGE_LENGTH) return undefined;
  try {
    return toRevocationEntry(JSON.parse(message));
  } catch {
    return undefined;
  }
}

/**
 * The snapshot's entries, or undefined when the body is not `{entries: RevocationEntry[]}`.
 * One bad entry rejects the whole snapshot: skipping it could leave a revoked principal
 * looking valid, so the caller keeps its previous state and retries instead.
 */
export function parseRevocationSnapshot(body: unknown): RevocationEntry[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { entries } = body as { entries?: unknown };
  if (!Array.isArray(entries)) return undefined;
  const parsed: RevocationEntry[] = [];
  for (const item of entries) {
    const entry = toRevocationEntry(item);
    if (entry === undefined) return undefined;
    parsed.push(entry);
  }
  return parsed;
}
