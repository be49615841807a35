/**
 * Forged session records, written straight into the real Redis as an attacker with write
 * access to Redis (but without SESSION_SECRET) would: none of them reads as a session.
 */
import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, test } from '@jest/globals';
import { TEST_REDIS_URL } from '@plant/test-kit';
import { Redis } from 'ioredis';
import {
  createSessionStore,
  type PendingSignIn,
  type Session,
} from '../src/sessions/session-store.js';

const SECRET = 'session-store-test-secret-0123456789abcdef';
const redis = new Redis(TEST_REDIS_URL);
const store = createSessionStore(redis, SECRET);
afterAll(() => redis.quit());

const keyOf = (kind: string, id: string) =>
  `plantstore:admin:${kind}:${createHmac('sha256', SECRET).update(`${kind}:${id}`).digest('base64url')}`;
const viewer = (): Session => ({
  tenant: 'forge',
  sub: 'u-1',
  email: 'v@forge.test',
  role: 'View',
  createdAt: Date.now(),
  lastSeenAt: Date.now(),
  userAgent: 'test-agent',
  address: '127.0.0.1',
  tokenVersion: 1,
});

describe('session records in Redis', () => {
  test('When a session is created, updated and read, then it reads back as written', async () => {
    const id = await store.create(viewer(), 60);
    const updated = { ...viewer(), role: 'Edit' as const };
    await store.update(id, updated);

    expect(await store.get(id)).toEqual({ ...updated, handle: expect.any(String) });
  });

  test('When the JSON of a sealed record is edited in Redis (role raised, token version raised, factor time moved into the future), then it is no session', async () => {
    for (const edit of [
      (s: Session) => ({ ...s, role: 'Account Admin' }),
      (s: Session) => ({ ...s, tokenVersion: 1_000_000 }),
      (s: Session) => ({ ...s, factorAt: Date.now() + 365 * 86_400_000 }),
    ]) {
      const id = await store.create(viewer(), 60);
      const raw = (await redis.get(keyOf('session', id)))!;
      const [mac, expires] = raw.split('.');
      await redis.set(
        keyOf('session', id),
        `${mac}.${expires}.${JSON.stringify(edit(viewer()))}`,
        'EX',
        60,
      );

      expect(await store.get(id)).toBeUndefined();
    }
  });

  test('When Redis holds a plain or self-sealed record under a session key, then it is no session', async () => {
    const id = 'an-id-the-attacker-chose';
    const admin = JSON.stringify({ ...viewer(), role: 'Account Admin' });
    const expires = String(Date.now() + 60_000);
    const sealedWithGuess = `${createHmac('sha256', 'guessed-secret')
      .update(`${keyOf('session', id)}\n${expires}\n${admin}`)
      .digest('base64url')}.${expires}.${admin}`;
    for (const forged of [admin, sealedWithGuess, `.${expires}.${admin}`, '', 'x.y.z']) {
      await redis.set(keyOf('session', id), forged, 'EX', 60);
      expect(await store.get(id)).toBeUndefined();
    }
  });

  test("When an admin's sealed record is copied under another browser's session key, then that browser has no session", async () => {
    const adminId = await store.create({ ...viewer(), role: 'Account Admin' }, 60);
    const attackerId = await store.create(viewer(), 60);
    await redis.set(
      keyOf('session', attackerId),
      (await redis.get(keyOf('session', adminId)))!,
      'EX',
      60,
    );

    expect(await store.get(attackerId)).toBeUndefined();
    expect(await store.get(adminId)).toMatchObject({ role: 'Account Admin' });
  });

  test("When a session key's TTL is removed in Redis, then the session still ends when it was sealed to end", async () => {
    const id = await store.create(viewer(), 1);
    await redis.persist(keyOf('session', id));
    await new Promise((resolve) => setTimeout(resolve, 1100));

    expect(await redis.exists(keyOf('session', id))).toBe(1);
    expect(await store.get(id)).toBeUndefined();
  });

  test('When a session keeps its ID token, then it reads back through updates and Redis holds it only encrypted', async () => {
    const idToken = `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: 'u-1', email: 'v@forge.test' })).toString('base64url')}.c2lnbmF0dXJl`;
    const id = await store.create({ ...viewer(), idToken }, 60);
    await store.update(id, { ...(await store.get(id))!, role: 'Edit' });
    const raw = (await redis.get(keyOf('session', id)))!;

    expect(await store.get(id)).toMatchObject({ role: 'Edit', idToken });
    expect(raw).not.toContain(idToken.split('.')[1]);
    expect(raw).not.toContain('c2lnbmF0dXJl');
  });

  test('When a pending sign-in is edited in Redis (another landing page, another browser binding), then the callback finds none', async () => {
    const pending: PendingSignIn = {
      tenant: 'forge',
      codeVerifier: 'v',
      nonce: 'n',
      returnTo: '/activity',
      binding: 'b',
    };
    await store.savePendingSignIn('state-1', pending, 60);
    const raw = (await redis.get(keyOf('signin', 'state-1')))!;
    const [mac, expires] = raw.split('.');
    await redis.set(
      keyOf('signin', 'state-1'),
      `${mac}.${expires}.${JSON.stringify({ ...pending, returnTo: '//evil.example', binding: 'x' })}`,
      'EX',
      60,
    );

    expect(await store.takePendingSignIn('state-1')).toBeUndefined();
    await store.savePendingSignIn('state-2', pending, 60);
    expect(await store.takePendingSignIn('state-2')).toEqual(pending);
    expect(await store.takePendingSignIn('state-2')).toBeUndefined();
  });
});
