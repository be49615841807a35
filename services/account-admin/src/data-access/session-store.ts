/**
 * Portal sessions and pending sign-ins, server-side in Redis. The browser holds only a
 * random id; Redis keys are an HMAC of it under SESSION_SECRET, so a Redis dump yields no
 * usable cookie and a guessed key cannot be turned back into one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '@plant/shared';

/** Redis (sessions, pending sign-ins) cannot be reached: 503, sign in or try again shortly. */
export class SessionStoreUnavailable extends AppError {
  constructor(options: { cause?: unknown } = {}) {
    super(503, 'Sessions are temporarily unavailable; try again', { expose: true, headers: { 'retry-after': '1' }, cause: options.cause });
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
}

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

export function createSessionStore(redis: Redis, secret: string): SessionStore {
  const key = (kind: string, id: string) => `${PREFIX}${kind}:${createHmac('sha256', secret).update(`${kind}:${id}`).digest('base64url')}`;
  const read = async <T>(k: string): Promise<T | undefined> => {
    const raw = await redis.get(k).catch(unavailable);
    if (raw === null) return undefined;
    try {
      return JSON.parse(raw) as T;
    } catch {
      return undefined;
    }
  };
  return {
    async create(session, ttlSeconds) {
      const id = randomId();
      await redis.set(key('session', id), JSON.stringify(session), 'EX', ttlSeconds).catch(unavailable);
      return id;
    },
    get: (id) => read<Session>(key('session', id)),
    async update(id, session) {
      await redis.set(key('session', id), JSON.stringify(session), 'KEEPTTL', 'XX').catch(unavailable);
    },
    async destroy(id) {
      await redis.del(key('session', id)).catch(unavailable);
    },
    async savePendingSignIn(state, pending, ttlSeconds) {
      await redis.set(key('signin', state), JSON.stringify(pending), 'EX', ttlSeconds).catch(unavailable);
    },
    async takePendingSignIn(state) {
      const raw = await redis.getdel(key('signin', state)).catch(unavailable);
      if (raw === null) return undefined;
      try {
        return JSON.parse(raw) as PendingSignIn;
      } catch {
        return undefined;
      }
    },
    async ping() {
      await redis.ping();
    },
  };
}
