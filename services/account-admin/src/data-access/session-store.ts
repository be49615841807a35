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
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '@plant/shared/api';

/** Redis (sessions, pending sign-ins) cannot be reached: 503, sign in or try again shortly. */
export class SessionStoreUnavailable extends AppError {
  constructor(options: { cause?: unknown } = {}) {
    super(503, 'Sessions are temporarily unavailable; try again', {
      expose: true,
      headers: { 'retry-after': '1' },
      cause: options.cause,
    });
    this.name = 'SessionStoreUnavailable';
  }
}

export interface Session {
  tenant: string;
  sub: string;
  email: string | null;
  role: 'View' | 'Edit' | 'Account Admin';
  /** When the role was last confirmed with the token service (ms since epoch). */
  checkedAt: number;
  createdAt: number;
  /** The ID token of the sign-in: sign-out sends it to the realm as `id_token_hint`, so the realm ends its session without asking. */
  idToken?: string;
}

/** A session as Redis holds it: the ID token encrypted. */
type SessionRecord = Omit<Session, 'idToken'> & { idTokenSealed?: string };

export interface PendingSignIn {
  tenant: string;
  codeVerifier: string;
  nonce: string;
  /** A same-origin relative path to land on after sign-in. */
  returnTo: string;
  /** HMAC of the browser-binding cookie: the callback must come from the browser that started. */
  binding: string;
}

export interface SessionStore {
  create(session: Session, ttlSeconds: number): Promise<string>;
  get(id: string): Promise<Session | undefined>;
  update(id: string, session: Session): Promise<void>;
  destroy(id: string): Promise<void>;
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

export function createSessionStore(redis: Redis, secret: string): SessionStore {
  const key = (kind: string, id: string) =>
    `${PREFIX}${kind}:${createHmac('sha256', secret).update(`${kind}:${id}`).digest('base64url')}`;
  const { seal, open } = recordSeal(secret);
  const { toRecord, fromRecord } = idTokenBox(secret);
  const write = (k: string, value: unknown, ttlSeconds: number) =>
    redis
      .set(k, seal(k, value, Date.now() + ttlSeconds * 1000), 'EX', ttlSeconds)
      .catch(unavailable);
  return {
    async create(session, ttlSeconds) {
      const id = randomId();
      const k = key('session', id);
      await write(k, toRecord(session, k), ttlSeconds);
      return id;
    },
    async get(id) {
      const k = key('session', id);
      const record = open<SessionRecord>(k, await redis.get(k).catch(unavailable))?.value;
      return record === undefined ? undefined : fromRecord(record, k);
    },
    async update(id, session) {
      // Keeps the record's expiry: a session lives SESSION_TTL_SECONDS from sign-in, whatever is updated.
      const k = key('session', id);
      const current = open<SessionRecord>(k, await redis.get(k).catch(unavailable));
      if (current === undefined) return;
      await redis
        .set(k, seal(k, toRecord(session, k), current.expiresAt), 'KEEPTTL', 'XX')
        .catch(unavailable);
    },
    async destroy(id) {
      await redis.del(key('session', id)).catch(unavailable);
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
