/**
 * Portal sessions and pending sign-ins, server-side in Redis. The browser holds only a
 * random id; Redis keys are an HMAC of it under SESSION_SECRET, so a Redis dump yields no
 * usable cookie and a guessed key cannot be turned back into one.
 *
 * Redis is not trusted with the records either: each is stored as `<mac>.<expires>.<json>`,
 * the MAC (HMAC-SHA-256 under a key derived from SESSION_SECRET) covering the Redis key, the
 * expiry and the JSON. Whoever can write to Redis but lacks the secret cannot make a session
 * (or raise its role, or move its role re-check into the future), cannot move a record to
 * another key (another browser's cookie), and cannot keep one alive past its expiry by
 * raising the key's TTL. A record that fails the check reads as no session: sign in again.
 *
 * A session's ID token (the hint its sign-out hands the realm) is encrypted besides: it names
 * the user and the realm signed it, so a Redis dump must not yield it. AES-256-GCM under another
 * key derived from SESSION_SECRET, bound to the record's Redis key like the MAC.
 *
 * A person's sessions are found through a per-person index (a sorted set under an HMAC of the
 * tenant and the person's id): members `<handle> <record key>`, scored by the record's expiry.
 * The handle is what the API shows (another HMAC of the session id, so neither the cookie nor
 * the Redis key can be derived from it); the record holds its own handle under its MAC, so an
 * index entry written into Redis by someone else never makes a record of another person count
 * as this person's, and ending a session by handle checks the record names that person.
 *
 * Bound of an index: the person's live sessions (at most MAX_SESSIONS_PER_PERSON: a new sign-in
 * beyond it ends the person's oldest session), plus entries of sessions that expired since the
 * last sweep; every sign-in and every listing sweeps (expired entries and entries whose record
 * is gone are dropped), and the index key itself expires with the person's last session.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { Redis } from 'ioredis';
import { SessionStoreUnavailable } from '../platform/index.js';

export interface Session {
  tenant: string;
  sub: string;
  email: string | null;
  role: 'View' | 'Edit' | 'Account Admin';
  /**
   * The person's token version when the role was last confirmed: every request checks it
   * against the revocation map (a role change, disable, removal or sign-out-everywhere bumps it).
   * Absent in records written before it existed: read as 0.
   */
  tokenVersion?: number;
  /** When role and version were last read from the token service (ms since epoch); absent: at sign-in. */
  confirmedAt?: number;
  /**
   * The person's factor generation at sign-in (moved each time a factor is taken away from
   * them): a session that meets a later one ends. Absent in older records: read as 0.
   */
  factorGeneration?: number;
  /** Sign-in (ms since epoch). */
  createdAt: number;
  /** The last request seen with this session (ms since epoch), written at most once a minute. */
  lastSeenAt: number;
  /** The browser's User-Agent at sign-in, cut to USER_AGENT_MAX characters. */
  userAgent: string | null;
  /** The address the session was last seen from. */
  address: string | null;
  /** When the realm last verified a second factor of this person in this session (ms since epoch). */
  factorAt?: number;
  /** Whether sensitive actions need a recent second factor (the person has one, or the policy requires one). */
  stepUpRequired?: boolean;
  /** The ID token of the sign-in: sign-out sends it to the realm as `id_token_hint`, so the realm ends its session without asking. */
  idToken?: string;
  /** The opaque handle the API names this session by; set by the store when it creates the session. */
  handle?: string;
}

/** A session with its handle, as a person's listing gives it. */
export type ListedSession = Session & { handle: string };

/** A session as Redis holds it: the ID token encrypted. */
type SessionRecord = Omit<Session, 'idToken'> & { idTokenSealed?: string };

/** What a session keeps of the User-Agent header: enough to name the browser, never unbounded. */
export const USER_AGENT_MAX = 256;
/** A person's live sessions at most: a sign-in beyond it ends their oldest session (bounds the per-person index). */
export const MAX_SESSIONS_PER_PERSON = 100;

export interface PendingSignIn {
  tenant: string;
  codeVerifier: string;
  nonce: string;
  /** A same-origin relative path to land on after sign-in. */
  returnTo: string;
  /** HMAC of the browser-binding cookie: the callback must come from the browser that started. */
  binding: string;
  /**
   * `step-up`: the callback verifies the same person as `stepUpSession` (the handle of the session
   * that asked) and refreshes that session's factor time instead of opening a new session.
   * Absent: a sign-in.
   */
  purpose?: 'sign-in' | 'step-up';
  stepUpSession?: string;
}

export interface SessionStore {
  /** Stores a new session under a fresh random id (returned) and adds it to its person's index. */
  create(session: Session, ttlSeconds: number): Promise<string>;
  get(id: string): Promise<Session | undefined>;
  update(id: string, session: Session): Promise<void>;
  /** Ends the session (and drops it from its person's index). */
  destroy(id: string): Promise<void>;
  /** The person's live sessions, newest first; sweeps the person's index as it reads it. */
  listForPerson(tenant: string, sub: string): Promise<ListedSession[]>;
  /** Ends the person's session with this handle; false when the person has no such live session. */
  destroyByHandle(tenant: string, sub: string, handle: string): Promise<boolean>;
  /** Ends every session of the person; how many there were. */
  destroyAllForPerson(tenant: string, sub: string): Promise<number>;
  savePendingSignIn(state: string, pending: PendingSignIn, ttlSeconds: number): Promise<void>;
  /** Returns and deletes it: a state is good for one callback only. */
  takePendingSignIn(state: string): Promise<PendingSignIn | undefined>;
  ping(): Promise<void>;
}

const PREFIX = 'plantstore:admin:';

const randomId = () => randomBytes(32).toString('base64url');

function unavailable(err: unknown): never {
  throw new SessionStoreUnavailable({ cause: err });
}

/** Seals and opens records: the MAC binds each to its Redis key and its expiry. */
function recordSeal(secret: string) {
  const macKey = createHmac('sha256', secret).update('plantstore:admin:record-mac').digest();
  const macOf = (redisKey: string, expires: string, json: string) =>
    createHmac('sha256', macKey).update(`${redisKey}\n${expires}\n${json}`).digest();
  return {
    seal(redisKey: string, value: unknown, expiresAt: number): string {
      const json = JSON.stringify(value);
      const expires = String(expiresAt);
      return `${macOf(redisKey, expires, json).toString('base64url')}.${expires}.${json}`;
    },
    /** The record's value and expiry, or undefined when it was not sealed here for this key or has expired. */
    open<T>(redisKey: string, raw: string | null): { value: T; expiresAt: number } | undefined {
      if (raw === null) return undefined;
      const [mac = '', expires = '', ...rest] = raw.split('.');
      const json = rest.join('.');
      const expected = macOf(redisKey, expires, json);
      const given = Buffer.from(mac, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const expiresAt = Number(expires);
      if (!(expiresAt > Date.now())) return undefined;
      try {
        return { value: JSON.parse(json) as T, expiresAt };
      } catch {
        return undefined;
      }
    },
  };
}

/** Encrypts and decrypts a session's ID token, bound to the record's Redis key. */
function idTokenBox(secret: string) {
  const encryptionKey = createHmac('sha256', secret)
    .update('plantstore:admin:id-token-key')
    .digest();
  return {
    toRecord({ idToken, ...session }: Session, redisKey: string): SessionRecord {
      if (idToken === undefined) return session;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv).setAAD(Buffer.from(redisKey));
      const sealed = Buffer.concat([
        iv,
        cipher.update(idToken, 'utf8'),
        cipher.final(),
        cipher.getAuthTag(),
      ]);
      return { ...session, idTokenSealed: sealed.toString('base64url') };
    },
    /** The session; without its ID token when that cannot be decrypted (sign-out then asks the realm to confirm). */
    fromRecord({ idTokenSealed, ...session }: SessionRecord, redisKey: string): Session {
      // Records written before these fields existed read as seen at sign-in, from nowhere known.
      session.lastSeenAt ??= session.createdAt;
      session.userAgent ??= null;
      session.address ??= null;
      if (typeof idTokenSealed !== 'string') return session;
      const sealed = Buffer.from(idTokenSealed, 'base64url');
      if (sealed.length < 12 + 16) return session;
      try {
        const decipher = createDecipheriv('aes-256-gcm', encryptionKey, sealed.subarray(0, 12))
          .setAAD(Buffer.from(redisKey))
          .setAuthTag(sealed.subarray(-16));
        return {
          ...session,
          idToken: Buffer.concat([
            decipher.update(sealed.subarray(12, -16)),
            decipher.final(),
          ]).toString('utf8'),
        };
      } catch {
        return session;
      }
    },
  };
}

// long: the SessionStore object, one short method per operation, over the Redis keys they share.
export function createSessionStore(redis: Redis, secret: string): SessionStore {
  const mac = (input: string) => createHmac('sha256', secret).update(input).digest('base64url');
  const key = (kind: string, id: string) => `${PREFIX}${kind}:${mac(`${kind}:${id}`)}`;
  const handleOf = (id: string) => mac(`handle:${id}`);
  const indexKey = (tenant: string, sub: string) =>
    `${PREFIX}person:${mac(`person:${tenant}\n${sub}`)}`;
  const { seal, open } = recordSeal(secret);
  const { toRecord, fromRecord } = idTokenBox(secret);
  const write = (k: string, value: unknown, ttlSeconds: number) =>
    redis
      .set(k, seal(k, value, Date.now() + ttlSeconds * 1000), 'EX', ttlSeconds)
      .catch(unavailable);
  const read = async (k: string): Promise<Session | undefined> => {
    const record = open<SessionRecord>(k, await redis.get(k).catch(unavailable))?.value;
    return record === undefined ? undefined : fromRecord(record, k);
  };
  const belongsTo = (session: Session | undefined, tenant: string, sub: string) =>
    session !== undefined && session.tenant === tenant && session.sub === sub;

  /** The index's entries: `{member, handle, recordKey, expiresAt}`, expired ones dropped first. */
  async function entriesOf(index: string) {
    await redis.zremrangebyscore(index, '-inf', Date.now()).catch(unavailable);
    const raw = await redis.zrange(index, 0, -1, 'WITHSCORES').catch(unavailable);
    const entries: Array<{ member: string; handle: string; recordKey: string; expiresAt: number }> =
      [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const member = raw[i]!;
      const [handle = '', recordKey = ''] = member.split(' ');
      entries.push({ member, handle, recordKey, expiresAt: Number(raw[i + 1]) });
    }
    return entries;
  }

  /** The index's live sessions of this person (oldest first); entries without one are dropped. */
  async function sweep(tenant: string, sub: string) {
    const index = indexKey(tenant, sub);
    const live: Array<{ member: string; recordKey: string; session: ListedSession }> = [];
    const dead: string[] = [];
    const entries = (await entriesOf(index)).filter((e) => {
      const ours = e.recordKey.startsWith(`${PREFIX}session:`);
      if (!ours) dead.push(e.member);
      return ours;
    });
    // One round trip for every record of the person (at most MAX_SESSIONS_PER_PERSON and the expired).
    const raws =
      entries.length === 0
        ? []
        : await redis.mget(entries.map((e) => e.recordKey)).catch(unavailable);
    for (const [i, entry] of entries.entries()) {
      const record = open<SessionRecord>(entry.recordKey, raws[i] ?? null)?.value;
      const session = record === undefined ? undefined : fromRecord(record, entry.recordKey);
      if (belongsTo(session, tenant, sub) && session!.handle === entry.handle)
        live.push({ ...entry, session: { ...session!, handle: entry.handle } });
      else dead.push(entry.member);
    }
    if (dead.length > 0) await redis.zrem(index, ...dead).catch(unavailable);
    return { index, live };
  }

  async function unindex(session: Session | undefined, recordKey: string): Promise<void> {
    if (session?.handle === undefined) return;
    await redis
      .zrem(indexKey(session.tenant, session.sub), `${session.handle} ${recordKey}`)
      .catch(unavailable);
  }

  return {
    async create(session, ttlSeconds) {
      const id = randomId();
      const k = key('session', id);
      const handle = handleOf(id);
      const expiresAt = Date.now() + ttlSeconds * 1000;
      await write(k, toRecord({ ...session, handle }, k), ttlSeconds);
      const index = indexKey(session.tenant, session.sub);
      await redis
        .multi()
        .zadd(index, expiresAt, `${handle} ${k}`)
        // The index lives as long as the person's newest session (GT: never shortened).
        .pexpireat(index, expiresAt, 'GT')
        .pexpireat(index, expiresAt, 'NX')
        .exec()
        .catch(unavailable);
      const { live } = await sweep(session.tenant, session.sub);
      // Oldest first: beyond the bound, the oldest sessions end.
      for (const extra of live.slice(0, Math.max(0, live.length - MAX_SESSIONS_PER_PERSON))) {
        await redis.del(extra.recordKey).catch(unavailable);
        await redis.zrem(index, extra.member).catch(unavailable);
      }
      return id;
    },
    get(id) {
      return read(key('session', id));
    },
    async update(id, session) {
      // Keeps the record's expiry: a session lives SESSION_TTL_SECONDS from sign-in, whatever is updated.
      const k = key('session', id);
      const current = open<SessionRecord>(k, await redis.get(k).catch(unavailable));
      if (current === undefined) return;
      // The handle is the store's: an update never moves a session to another handle.
      const kept = { ...session, handle: current.value.handle };
      await redis
        .set(k, seal(k, toRecord(kept, k), current.expiresAt), 'KEEPTTL', 'XX')
        .catch(unavailable);
    },
    async destroy(id) {
      const k = key('session', id);
      const record = open<SessionRecord>(k, await redis.getdel(k).catch(unavailable))?.value;
      await unindex(record, k);
    },
    async listForPerson(tenant, sub) {
      const { live } = await sweep(tenant, sub);
      return live.map((l) => l.session).sort((a, b) => b.createdAt - a.createdAt);
    },
    async destroyByHandle(tenant, sub, handle) {
      const index = indexKey(tenant, sub);
      for (const entry of await entriesOf(index)) {
        if (entry.handle !== handle) continue;
        const session = await read(entry.recordKey);
        await redis.zrem(index, entry.member).catch(unavailable);
        if (!belongsTo(session, tenant, sub) || session!.handle !== handle) return false;
        return (await redis.del(entry.recordKey).catch(unavailable)) === 1;
      }
      return false;
    },
    async destroyAllForPerson(tenant, sub) {
      const { index, live } = await sweep(tenant, sub);
      for (const { recordKey, member } of live) {
        await redis.del(recordKey).catch(unavailable);
        await redis.zrem(index, member).catch(unavailable);
      }
      return live.length;
    },
    async savePendingSignIn(state, pending, ttlSeconds) {
      await write(key('signin', state), pending, ttlSeconds);
    },
    async takePendingSignIn(state) {
      const k = key('signin', state);
      return open<PendingSignIn>(k, await redis.getdel(k).catch(unavailable))?.value;
    },
    async ping() {
      await redis.ping();
    },
  };
}
