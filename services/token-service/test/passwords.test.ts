import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { defaultPasswordCheckers, PasswordCheckers } from '../src/passwords/password-checkers.js';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../src/passwords/passwords.js';

const checkers: PasswordCheckers[] = [];
afterAll(async () => {
  await Promise.all(checkers.map((c) => c.close()));
});

describe('password checks', () => {
  test('When every checker thread is busy, then the next check is refused, not queued, until one is done; the threads stay at the bound', async () => {
    const two = new PasswordCheckers(2);
    checkers.push(two);
    const stored = await hashPassword('a password');

    const running = [two.tryVerify('a password', stored), two.tryVerify('wrong', stored)];
    const third = two.tryVerify('a password', stored);
    const fullWhileRunning = two.full;
    const results = await Promise.all(running);
    const afterwards = await Promise.all([
      two.tryVerify('a password', stored),
      two.tryVerify('a password', stored),
    ]);

    expect({ third, fullWhileRunning, results, afterwards, full: two.full }).toEqual({
      third: undefined,
      fullWhileRunning: true,
      results: [true, false],
      afterwards: [true, true],
      full: false,
    });
  });

  test('When a checker is held for a sign-in, then it counts against the bound until used or let go, once; a used slot checks nothing more', async () => {
    const one = new PasswordCheckers(1);
    checkers.push(one);
    const stored = await hashPassword('a password');

    const held = one.reserve();
    const whileHeld = { other: one.reserve(), check: one.tryVerify('a password', stored) };
    held!.release();
    held!.release();
    const afterRelease = one.reserve();
    const checked = await afterRelease!.verify('a password', stored);
    const reused = await afterRelease!
      .verify('a password', stored)
      .catch((err: Error) => err.message);

    expect({ whileHeld, checked, reused, full: one.full }).toEqual({
      whileHeld: { other: undefined, check: undefined },
      checked: true,
      reused: 'password checker slot already used',
      full: false,
    });
  });

  test('When a stored hash is not ours, then the check is false and its thread is free again', async () => {
    const one = new PasswordCheckers(1);
    checkers.push(one);

    const results = [
      await one.tryVerify('x', 'bcrypt$whatever'),
      await one.tryVerify('x', DUMMY_PASSWORD_HASH),
    ];

    expect({ results, full: one.full }).toEqual({ results: [false, false], full: false });
  });

  test('When the checkers were closed, then the next check starts a fresh thread and is answered', async () => {
    const one = new PasswordCheckers(1);
    checkers.push(one);
    const stored = await hashPassword('a password');
    await one.tryVerify('a password', stored);

    await one.close();
    const after = await one.tryVerify('a password', stored);

    expect(after).toBe(true);
  });

  test('When a checker thread runs, then it runs at the lowest priority while the rest of the process keeps its own', async () => {
    const one = new PasswordCheckers(1);
    checkers.push(one);
    await one.tryVerify('x', DUMMY_PASSWORD_HASH);

    const niceOf = (tid: string) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const nice = readdirSync('/proc/self/task').map((tid) => ({ tid, nice: niceOf(tid) }));

    expect(nice.find((t) => t.tid === String(process.pid))?.nice).toBe(0);
    expect(nice.filter((t) => t.nice === 19).length).toBeGreaterThanOrEqual(1);
  });

  test('When the checkers are not configured, then one core is kept for the event loop, with at least one checker', () => {
    expect([
      defaultPasswordCheckers(1),
      defaultPasswordCheckers(2),
      defaultPasswordCheckers(8),
    ]).toEqual([1, 1, 7]);
  });

  test('When an unknown email is checked against the dummy hash, then it has the parameters of a real hash and no password matches it', async () => {
    const real = await hashPassword('a password');
    const params = (stored: string) => stored.split('$').slice(0, 4);

    expect(params(DUMMY_PASSWORD_HASH)).toEqual(params(real));
    expect(await verifyPassword('a password', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('a password', real)).toBe(true);
  });
});
