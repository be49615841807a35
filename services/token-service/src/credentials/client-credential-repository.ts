import type { Knex } from '@plant/shared/db';
import type {
  ClientCredentialRepository,
  ClientCredentialRow,
  CredentialCacheLimits,
} from './client-credentials.js';
import { RealmClientIds, GRANTS_JSON } from '../service-accounts/index.js';

export type {
  ClientCredentialRepository,
  ClientCredentialRow,
  CredentialCacheLimits,
  CredentialKey,
  CredentialSecret,
  CredentialTrust,
} from './client-credentials.js';

const DEFAULT_LIMITS: CredentialCacheLimits = {
  ttlMs: 600_000,
  unknownTtlMs: 3_000,
  maxUnknown: 10_000,
  maxKnown: 100_000,
};
/** A read overtaken by a change this many times in a row is handed out retired (the grant fails) rather than tried forever. */
const MAX_READS = 5;
// Our client_ids are 35 characters; anything far longer names nothing and must not fill the cache.
const MAX_CLIENT_ID_LENGTH = 128;
// Postgres text cannot hold NUL (a query with one fails): such an id names nothing either.
const NUL = '\u0000';
const NO_ROW = Object.freeze({ row: undefined });

interface KnownEntry {
  readonly row: ClientCredentialRow;
  expires: number;
}

/** A read in flight; `stale` once a change was heard after it began (its answer may predate the change). */
interface CredentialRead {
  stale: boolean;
  answer: Promise<ClientCredentialRow | undefined>;
}

const keyOf = (realm: string, clientId: string) => `${realm}\u0000${clientId}`;
const digestsOf = (row: ClientCredentialRow) => row.secrets.map((s) => s.digest).join(' ');
const sameCredential = (a: ClientCredentialRow, b: ClientCredentialRow) =>
  a.token_version === b.token_version &&
  digestsOf(a) === digestsOf(b) &&
  a.credentials_revision === b.credentials_revision;
/** The account's own quota, else the realm's, else the default (off). The override is both columns or neither. */
const QUOTA_COLUMNS = `coalesce(sa.quota_per_minute, cp.quota_per_minute, 600) as quota_per_minute,
  coalesce(sa.quota_mode, cp.quota_mode, 'off') as quota_mode`;
const KEYS_JSON = `coalesce((select json_agg(json_build_object('id', k.id, 'alg', k.alg, 'public_jwk', k.public_jwk) order by k.created_at, k.id)
  from service_account_keys k where k.sub = sa.sub), '[]'::json) as keys`;
const SECRETS_JSON = `coalesce((select json_agg(json_build_object('id', s.id, 'digest', s.digest, 'created_at', s.created_at, 'expires_at', s.expires_at) order by s.created_at, s.id)
  from service_account_secrets s where s.sub = sa.sub), '[]'::json) as secrets`;
const TRUSTS_JSON = `coalesce((select json_agg(json_build_object('id', t.id, 'issuer', t.issuer, 'subject', t.subject, 'audience', t.audience) order by t.created_at, t.id)
  from service_account_trusts t where t.sub = sa.sub), '[]'::json) as trusts`;
/** Token exchange's permissions ride with the credential: a change to them is a change of the account, announced like any (token-exchange/). */
const DELEGATIONS_JSON = `coalesce((select json_agg(json_build_object('audience', d.audience, 'scope', d.scope) order by d.audience)
  from service_account_delegations d where d.sub = sa.sub), '[]'::json) as delegations`;

/**
 * Service-account credentials, cached so a token costs no query in the steady state. Every
 * change (reset, delete, role, grants) is announced as a revocation event; each replica hears
 * it (`forget`), and the replica that made the change hears it before its API answers. From
 * then on:
 *  - the entry is gone, and its row is retired: a grant that already holds it (it compared the
 *    old secret before the change) is refused when it asks `isCurrent` before answering;
 *  - a read that was in flight is marked stale: its answer may predate the commit, so it is
 *    neither cached nor returned, and the read is made again.
 * So once this replica has heard a change, it issues no token with the old credential. While it
 * cannot hear changes (its subscription is down: a Redis restart or failover), it caches
 * nothing and reads every credential from Postgres, so a reset made through another replica
 * meanwhile takes effect here at once too. Should an event be lost, the change feed's follower
 * (credentials/follow-credential-changes.ts) forgets the account within seconds, and the TTL is the
 * last backstop (a token minted from a stale entry carries the old `ver` and is refused by
 * resource servers anyway). Unknown ids are cached too, briefly and
 * apart from real accounts (a flood of guesses cannot push a real account out), so repeating a
 * guess costs no query; `findListed` makes new guesses cheap too.
 */
class CachedClientCredentials implements ClientCredentialRepository {
  /** Bound: accounts that exist (an entry goes when its account changes or is found gone), `maxKnown` at most. */
  readonly #known = new Map<string, KnownEntry>();
  /** Bound: `maxUnknown`, oldest first out. */
  readonly #unknown = new Map<string, number>();
  /** Bound: the ids being read right now; each leaves when its read settles. */
  readonly #reads = new Map<string, CredentialRead>();
  readonly #retired = new WeakSet<ClientCredentialRow>();
  readonly #listings: RealmClientIds;
  /** False while change events cannot be heard: then nothing is cached or answered from the cache. */
  #trusted = true;

  constructor(
    private readonly db: Knex,
    private readonly limits: CredentialCacheLimits,
  ) {
    this.#listings = new RealmClientIds(db);
  }

  cached(
    realm: string,
    clientId: string,
  ): { readonly row: ClientCredentialRow | undefined } | undefined {
    if (clientId.length > MAX_CLIENT_ID_LENGTH || clientId.includes(NUL)) return NO_ROW;
    if (!this.#trusted) return undefined;
    const key = keyOf(realm, clientId);
    const now = Date.now();
    const entry = this.#known.get(key);
    if (entry !== undefined) return entry.expires > now ? entry : undefined;
    const until = this.#unknown.get(key);
    return until !== undefined && until > now ? NO_ROW : undefined;
  }

  find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    const hit = this.cached(realm, clientId);
    if (hit !== undefined) return Promise.resolve(hit.row);
    // Untrusted, each lookup reads for itself: no event would mark a read shared with an earlier one stale.
    if (!this.#trusted) return this.#query(realm, clientId);
    const key = keyOf(realm, clientId);
    return (this.#reads.get(key) ?? this.#startRead(key, realm, clientId)).answer;
  }

  async findListed(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    const hit = this.cached(realm, clientId);
    if (hit !== undefined) return hit.row;
    const listed = await this.#listings.of(realm);
    return listed.has(clientId) ? this.find(realm, clientId) : undefined;
  }

  isCurrent(row: ClientCredentialRow): boolean {
    return !this.#retired.has(row);
  }

  forget(realm: string, clientId: string): void {
    const key = keyOf(realm, clientId);
    const entry = this.#known.get(key);
    if (entry !== undefined) {
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
    this.#unknown.delete(key);
    const read = this.#reads.get(key);
    if (read !== undefined) read.stale = true;
    this.#listings.forget(realm);
  }

  forgetAll(): void {
    for (const entry of this.#known.values()) this.#retired.add(entry.row);
    this.#known.clear();
    this.#unknown.clear();
    for (const read of this.#reads.values()) read.stale = true;
  }

  distrust(): void {
    this.#trusted = false;
    this.forgetAll();
  }

  trust(): void {
    this.forgetAll();
    this.#trusted = true;
  }

  #startRead(key: string, realm: string, clientId: string): CredentialRead {
    const read: CredentialRead = { stale: false, answer: Promise.resolve(undefined) };
    read.answer = this.#read(read, key, realm, clientId).finally(() => {
      if (this.#reads.get(key) === read) this.#reads.delete(key);
    });
    this.#reads.set(key, read);
    return read;
  }

  async #read(
    read: CredentialRead,
    key: string,
    realm: string,
    clientId: string,
  ): Promise<ClientCredentialRow | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      read.stale = false;
      const row = await this.#query(realm, clientId);
      if (!read.stale) return this.#trusted ? this.#remember(key, row) : row;
      if (attempt === MAX_READS) {
        if (row !== undefined) this.#retired.add(row);
        return row;
      }
    }
  }

  async trustingAccounts(
    realm: string,
    workload: { issuer: string; subject: string; audiences: readonly string[] },
  ): Promise<string[]> {
    const { issuer, subject, audiences } = workload;
    // Postgres text cannot hold NUL: such a claim names no trust (and must not fail the query).
    if ([issuer, subject, ...audiences].some((v) => v.includes(NUL)) || audiences.length === 0)
      return [];
    const rows: { sub: string }[] = await this.db('service_account_trusts')
      .where({ realm, issuer, subject })
      .whereIn('audience', [...audiences])
      .distinct('sub')
      .orderBy('sub')
      .limit(2);
    return rows.map((r) => r.sub);
  }

  #query(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    return this.db('service_accounts as sa')
      .join('principals as p', 'p.sub', 'sa.sub')
      .leftJoin('realm_credential_policies as cp', 'cp.realm', 'sa.realm')
      .where({ 'sa.realm': realm, 'sa.sub': clientId })
      .whereNull('p.deleted_at')
      .whereNull('sa.disabled_at')
      .first(
        'sa.sub',
        'sa.realm',
        'sa.role',
        this.db.raw(SECRETS_JSON),
        'cp.secret_max_age_days',
        this.db.raw(QUOTA_COLUMNS),
        'sa.credentials_revision',
        'sa.dpop_bound_access_tokens',
        'sa.receive_signals',
        'p.token_version',
        this.db.raw(GRANTS_JSON),
        this.db.raw(KEYS_JSON),
        this.db.raw(TRUSTS_JSON),
        this.db.raw(DELEGATIONS_JSON),
      );
  }

  /** Caches a read that no change overtook; an unchanged credential keeps its row object (and the client built from it). */
  #remember(key: string, row: ClientCredentialRow | undefined): ClientCredentialRow | undefined {
    const now = Date.now();
    const entry = this.#known.get(key);
    if (row === undefined) {
      if (entry !== undefined) {
        this.#retired.add(entry.row);
        this.#known.delete(key);
      }
      if (this.#unknown.size >= this.limits.maxUnknown)
        this.#unknown.delete(this.#unknown.keys().next().value!);
      this.#unknown.set(key, now + this.limits.unknownTtlMs);
      return undefined;
    }
    this.#unknown.delete(key);
    if (entry !== undefined && sameCredential(entry.row, row)) {
      entry.expires = now + this.limits.ttlMs;
      return entry.row;
    }
    if (entry !== undefined) this.#retired.add(entry.row);
    else if (this.#known.size >= this.limits.maxKnown) this.#evictKnown(now);
    this.#known.set(key, { row, expires: now + this.limits.ttlMs });
    return row;
  }

  /** Drops entries expired for a whole TTL (no grant still holds their row), then the oldest, until there is room. */
  #evictKnown(now: number): void {
    for (const [key, entry] of this.#known) {
      if (entry.expires > now - this.limits.ttlMs) continue;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
    for (const [key, entry] of this.#known) {
      if (this.#known.size < this.limits.maxKnown) break;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
  }
}

/** `limits` default to production's; tests make them small. */
export function createClientCredentialRepository(
  db: Knex,
  limits: Partial<CredentialCacheLimits> = {},
): ClientCredentialRepository {
  return new CachedClientCredentials(db, { ...DEFAULT_LIMITS, ...limits });
}
