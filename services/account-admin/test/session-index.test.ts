/**
 * A person's sessions through the store's per-person index, in the real Redis: listing, ending
 * by handle, ending all, the index's bound, and index entries forged by someone who can write
 * to Redis but lacks SESSION_SECRET.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, test } from '@jest/globals';
import { eventually, TEST_REDIS_URL } from '@plant/test-kit';
import { Redis } from 'ioredis';
import {
  createSessionStore,
  MAX_SESSIONS_PER_PERSON,
  type Session,
} from '../src/sessions/session-store.js';

const SECRET = 'session-index-test-secret-0123456789abcdef';
const redis = new Redis(TEST_REDIS_URL);
const store = createSessionStore(redis, SECRET);
afterAll(() => redis.quit());

const mac = (input: string) => createHmac('sha256', SECRET).update(input).digest('base64url');
const indexKeyOf = (tenant: string, sub: string) =>
  `plantstore:admin:person:${mac(`person:${tenant}\n${sub}`)}`;
const recordKeyOf = (id: string) => `plantstore:admin:session:${mac(`session:${id}`)}`;

function person(tenant = 'idx') {
  const sub = randomUUID();
  const session = (userAgent = 'agent'): Session => ({
    tenant,
    sub,
    email: `${sub}@idx.test`,
    role: 'Account Admin',
    tokenVersion: 1,
    createdAt: Date.now(),
    lastSeenAt: Date.now(),
    userAgent,
    address: '127.0.0.9',
  });
  return { tenant, sub, session };
}

describe("a person's sessions", () => {
  test('When a person signs in from two browsers, then both are listed newest first under handles that are neither the cookie nor the Redis key', async () => {
    const p = person();
    const first = await store.create(p.session('first'), 60);
    await new Promise((r) => setTimeout(r, 5));
    const second = await store.create(p.session('second'), 60);

    const listed = await store.listForPerson(p.tenant, p.sub);

    expect(listed.map((s) => s.userAgent)).toEqual(['second', 'first']);
    for (const s of listed) {
      expect(s.handle).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect([first, second]).not.toContain(s.handle);
      expect(recordKeyOf(first)).not.toContain(s.handle);
      expect(recordKeyOf(second)).not.toContain(s.handle);
    }
    expect(listed[0]!.handle).toBe((await store.get(second))!.handle);
  });

  test('When a session is ended by its handle, then it no longer loads and the other stays', async () => {
    const p = person();
    const a = await store.create(p.session('a'), 60);
    const b = await store.create(p.session('b'), 60);
    const handleA = (await store.get(a))!.handle!;

    expect(await store.destroyByHandle(p.tenant, p.sub, handleA)).toBe(true);

    expect(await store.get(a)).toBeUndefined();
    expect(await store.get(b)).toBeDefined();
    expect((await store.listForPerson(p.tenant, p.sub)).map((s) => s.userAgent)).toEqual(['b']);
    expect(await store.destroyByHandle(p.tenant, p.sub, handleA)).toBe(false);
  });

  test("When another person's handle, a made-up handle or the session id itself is used, then nothing ends", async () => {
    const victim = person();
    const attacker = person();
    const victimId = await store.create(victim.session(), 60);
    await store.create(attacker.session(), 60);
    const victimHandle = (await store.get(victimId))!.handle!;

    expect(await store.destroyByHandle(attacker.tenant, attacker.sub, victimHandle)).toBe(false);
    expect(await store.destroyByHandle(attacker.tenant, attacker.sub, 'A'.repeat(43))).toBe(false);
    expect(await store.destroyByHandle(victim.tenant, victim.sub, victimId)).toBe(false);
    const otherTenant = person('idx-other');
    expect(await store.destroyByHandle(otherTenant.tenant, victim.sub, victimHandle)).toBe(false);

    expect(await store.get(victimId)).toBeDefined();
  });

  test("When an entry naming another person's session is written into a person's index, then it is neither listed nor ended, and the sweep drops it", async () => {
    const victim = person();
    const attacker = person();
    const victimId = await store.create(victim.session(), 60);
    await store.create(attacker.session(), 60);
    const victimHandle = (await store.get(victimId))!.handle!;
    const attackerIndex = indexKeyOf(attacker.tenant, attacker.sub);
    await redis.zadd(
      attackerIndex,
      Date.now() + 60_000,
      `${victimHandle} ${recordKeyOf(victimId)}`,
    );

    expect(await store.destroyByHandle(attacker.tenant, attacker.sub, victimHandle)).toBe(false);
    const listed = await store.listForPerson(attacker.tenant, attacker.sub);

    expect(listed).toHaveLength(1);
    expect(listed[0]!.handle).not.toBe(victimHandle);
    expect(await store.get(victimId)).toBeDefined();
    expect(await redis.zcard(attackerIndex)).toBe(1);
  });

  test('When a session expires, then its index entry is dropped at the next listing and the index key expires with the last session', async () => {
    const p = person();
    const id = await store.create(p.session('short'), 1);
    const index = indexKeyOf(p.tenant, p.sub);
    expect(await redis.zcard(index)).toBe(1);
    expect(await redis.pttl(index)).toBeGreaterThan(0);

    await eventually(async () => (await store.get(id)) === undefined, 'the session expired');
    await redis.persist(index); // as if another, longer session kept the index alive
    expect(await store.listForPerson(p.tenant, p.sub)).toEqual([]);

    expect(await redis.zcard(index)).toBe(0);
  });

  test('When a session record is gone before its index entry expires (sign-out elsewhere, eviction), then the listing drops the entry', async () => {
    const p = person();
    const id = await store.create(p.session(), 60);
    await redis.del(recordKeyOf(id));

    expect(await store.listForPerson(p.tenant, p.sub)).toEqual([]);
    expect(await redis.zcard(indexKeyOf(p.tenant, p.sub))).toBe(0);
  });

  test('When a person signs out, then the index entry goes with the session', async () => {
    const p = person();
    const id = await store.create(p.session(), 60);

    await store.destroy(id);

    expect(await redis.zcard(indexKeyOf(p.tenant, p.sub))).toBe(0);
  });

  test(`When a person opens more than ${MAX_SESSIONS_PER_PERSON} sessions, then their oldest ends and the index holds ${MAX_SESSIONS_PER_PERSON}`, async () => {
    const p = person();
    const ids: string[] = [];
    for (let i = 0; i <= MAX_SESSIONS_PER_PERSON; i += 1)
      ids.push(await store.create({ ...p.session(`s${i}`), createdAt: Date.now() + i }, 60 + i));

    expect(await store.get(ids[0]!)).toBeUndefined();
    expect(await store.get(ids[1]!)).toBeDefined();
    expect(await store.get(ids[MAX_SESSIONS_PER_PERSON]!)).toBeDefined();
    expect(await store.listForPerson(p.tenant, p.sub)).toHaveLength(MAX_SESSIONS_PER_PERSON);
    expect(await redis.zcard(indexKeyOf(p.tenant, p.sub))).toBe(MAX_SESSIONS_PER_PERSON);
  });

  test("When a person is signed out everywhere, then every session of theirs ends and nobody else's", async () => {
    const p = person();
    const other = person();
    const mine = [await store.create(p.session(), 60), await store.create(p.session(), 60)];
    const theirs = await store.create(other.session(), 60);

    expect(await store.destroyAllForPerson(p.tenant, p.sub)).toBe(2);

    for (const id of mine) expect(await store.get(id)).toBeUndefined();
    expect(await store.get(theirs)).toBeDefined();
    expect(await store.listForPerson(p.tenant, p.sub)).toEqual([]);
  });

  test('When a session is updated, then it keeps its handle whatever the update says', async () => {
    const p = person();
    const id = await store.create(p.session(), 60);
    const before = (await store.get(id))!;

    await store.update(id, { ...before, handle: 'B'.repeat(43), lastSeenAt: Date.now() });

    expect((await store.get(id))!.handle).toBe(before.handle);
  });
});
