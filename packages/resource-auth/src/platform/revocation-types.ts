/** The revocation messages and answers of the token service's internal API, as resource servers read them. */
/** The Redis channel on which the token service publishes every `RevocationEntry`. */
export const REVOCATION_CHANNEL = 'plantstore:revocations';

/** The most credentials one entry names (a change names one, or two when every secret goes); bounds a hostile message. */
export const MAX_ENTRY_CREDENTIALS = 16;

/**
 * A principal's token version (tokens with a lower `ver` are revoked) and whether it is deleted;
 * with `credentials`, also the credentials whose tokens are revoked (a token's `cred` claim,
 * `secret:<id>`, `key:<id>` or `trust:<id>`: decision 0035), whatever their `ver`. Resource
 * servers of an earlier release drop the field and apply the version, which such an entry
 * does not raise: the field only ever adds revocations.
 */
export interface RevocationEntry {
  tenant: string;
  sub: string;
  version: number;
  deleted: boolean;
  credentials?: string[];
}

/**
 * An entry of the revocation snapshot or change feed: the fact, and `ttl`, how many more seconds
 * it is needed (until every token minted before it has expired, plus the skew margin). A resource
 * server forgets it after that, counted from when the answer arrived: no clock is compared across
 * machines.
 */
export interface LiveRevocationEntry extends RevocationEntry {
  ttl: number;
}

/**
 * `GET /internal/v1/revocations`: every entry still needed, and the feed position it brings a
 * reader to (a decimal int64 as a string; continue with the changes after it).
 */
export interface RevocationSnapshot {
  position: string;
  entries: LiveRevocationEntry[];
}

/**
 * `GET /internal/v1/revocations/changes?after=<position>`: the changes after `position`, one page
 * (`more`: ask again from the new `position` at once). `reset`: the position cannot be continued
 * (older than what was pruned, or ahead of the feed): load the snapshot instead.
 */
export type RevocationChanges =
  | { reset: false; position: string; more: boolean; entries: LiveRevocationEntry[] }
  | { reset: true };
