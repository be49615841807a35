import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { captureLogs, TEST_REDIS_URL, uniqueName } from '@plant/test-kit';
import { Redis } from 'ioredis';
import {
  createSignInFailureRepository,
  type SignInFailureLimits,
} from '../src/sign-in/sign-in-failure-repository.js';
import { createClientSecretDigester } from '../src/credentials/client-secrets.js';
import {
  isRefusal,
  SignInThrottle,
  type Refusal,
  type SignInReservation,
} from '../src/sign-in/sign-in-throttle.js';
import { uniqueIp } from './helpers/harness.js';

const LIMITS: SignInFailureLimits = {
  perAccountIp: 5,
  perAccount: 50,
  perIp: 1000,
  windowSeconds: 60,
};
const { logger } = captureLogs('sign-in-throttle', 'warn');
const secrets = createClientSecretDigester('test-pepper-0123456789-0123456789-0123456789');
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
  // Until the connection is ready the counters are each process's memory (the insurance).
  await redis.ping();
});

afterAll(async () => {
  await redis.quit();
});

/** Both steps of a reservation, as a sign-in takes them. */
async function reserve(
  throttle: SignInThrottle,
  tenant: string,
  ip: string,
  email: string,
): Promise<SignInReservation | Refusal> {
  const source = await throttle.reserveSource(ip);
  return isRefusal(source) ? source : throttle.reserveAccount(source, tenant, email);
}

const granted = (all: Array<SignInReservation | Refusal>) =>
  all.filter((r) => !isRefusal(r)) as SignInReservation[];

describe('the sign-in failure budget (Redis, several replicas)', () => {
  test('When 60 attempts on one account from one address reserve at once on two replicas, then exactly 5 are let through', async () => {
    const [a, b] = [
      new SignInThrottle(createSignInFailureRepository(redis, LIMITS, logger), secrets),
      new SignInThrottle(createSignInFailureRepository(redis, LIMITS, logger), secrets),
    ];
    const [tenant, ip] = [uniqueName('thr'), uniqueIp()];

    const all = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        reserve(i % 2 === 0 ? a : b, tenant, ip, 'victim@example.test'),
      ),
    );

    expect(granted(all)).toHaveLength(5);
    expect(
      all.filter(isRefusal).every((r) => r.retryAfterSeconds >= 1 && r.retryAfterSeconds <= 60),
    ).toBe(true);
  });

  test('When one address sprays 80 accounts at once, then exactly its 50 are let through; when 80 addresses burst at one account at once, then exactly its 50', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, { ...LIMITS, perIp: 50 }, logger),
      secrets,
    );
    const [tenant, sprayer] = [uniqueName('thr'), uniqueIp()];

    const sprayed = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        reserve(throttle, tenant, sprayer, `user-${i}@example.test`),
      ),
    );
    const distributed = await Promise.all(
      Array.from({ length: 80 }, () =>
        reserve(throttle, tenant, uniqueIp(), 'victim@example.test'),
      ),
    );

    expect(granted(sprayed)).toHaveLength(50);
    expect(granted(distributed)).toHaveLength(50);
  });

  test('When one address bursts at an account, then only its checks count against the account: other addresses keep the rest of its budget', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, LIMITS, logger),
      secrets,
    );
    const tenant = uniqueName('thr');
    const attacker = uniqueIp();
    await Promise.all(
      Array.from({ length: 60 }, () => reserve(throttle, tenant, attacker, 'victim@example.test')),
    );

    const others = [];
    for (let i = 0; i < 46; i += 1)
      others.push(await reserve(throttle, tenant, uniqueIp(), 'victim@example.test'));

    expect(granted(others)).toHaveLength(45);
    expect(isRefusal(others[45]!)).toBe(true);
  });

  test('When an account is refused, then the attempt costs its source nothing: the source may still try other accounts', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, { ...LIMITS, perAccount: 10, perIp: 10 }, logger),
      secrets,
    );
    const [tenant, source] = [uniqueName('thr'), uniqueIp()];
    for (let i = 0; i < 10; i += 1)
      await reserve(throttle, tenant, uniqueIp(), 'victim@example.test');

    const refused = [];
    for (let i = 0; i < 20; i += 1)
      refused.push(await reserve(throttle, tenant, source, 'victim@example.test'));
    const elsewhere = await reserve(throttle, tenant, source, 'someone-else@example.test');

    expect(refused.every(isRefusal)).toBe(true);
    expect(isRefusal(elsewhere)).toBe(false);
  });

  test('When IPv6 sources of one /64 guess, then they share one budget', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, LIMITS, logger),
      secrets,
    );
    const tenant = uniqueName('thr');
    const network = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

    const all = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        reserve(
          throttle,
          tenant,
          `${network}:${i + 1}::${randomBytes(2).toString('hex')}`,
          'victim@example.test',
        ),
      ),
    );
    const otherNetwork = await reserve(
      throttle,
      tenant,
      `${network.slice(0, -1)}${network.endsWith('0') ? '1' : '0'}::1`,
      'victim@example.test',
    );

    expect(granted(all)).toHaveLength(5);
    expect(isRefusal(otherNetwork)).toBe(false);
  });

  test('When a sign-in succeeds, then its source starts over on the account; when one is not checked, its points come back', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, LIMITS, logger),
      secrets,
    );
    const [tenant, ip] = [uniqueName('thr'), uniqueIp()];
    for (let i = 0; i < 4; i += 1) await reserve(throttle, tenant, ip, 'owner@example.test');

    await throttle.succeeded(
      (await reserve(throttle, tenant, ip, 'owner@example.test')) as SignInReservation,
    );
    const unchecked = (await reserve(
      throttle,
      tenant,
      ip,
      'owner@example.test',
    )) as SignInReservation;
    await throttle.release(unchecked);
    const after = [];
    for (let i = 0; i < 6; i += 1)
      after.push(await reserve(throttle, tenant, ip, 'owner@example.test'));

    expect(after.map(isRefusal)).toEqual([false, false, false, false, false, true]);
  });

  test('When a point is given back after its counter expired, then nothing is given back (no counter below zero, no budget beyond the limit)', async () => {
    const throttle = new SignInThrottle(
      createSignInFailureRepository(redis, { ...LIMITS, windowSeconds: 1 }, logger),
      secrets,
    );
    const [tenant, ip] = [uniqueName('thr'), uniqueIp()];
    const late = (await reserve(throttle, tenant, ip, 'owner@example.test')) as SignInReservation;
    await sleep(1100);

    await throttle.release(late);
    const after = [];
    for (let i = 0; i < 6; i += 1)
      after.push(await reserve(throttle, tenant, ip, 'owner@example.test'));

    expect(after.map(isRefusal)).toEqual([false, false, false, false, false, true]);
  });
});

describe('the sign-in failure budget without Redis', () => {
  test('When Redis cannot be reached, then each process still lets at most 5 attempts through (its memory counts)', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    down.on('error', () => {});
    const throttle = new SignInThrottle(
      createSignInFailureRepository(down, LIMITS, logger),
      secrets,
    );

    const all = await Promise.all(
      Array.from({ length: 60 }, () => reserve(throttle, 'any', '10.0.0.1', 'victim@example.test')),
    );

    expect(granted(all)).toHaveLength(5);
    down.disconnect();
  });
});
