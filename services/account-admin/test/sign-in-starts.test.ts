import { request as httpRequest } from 'node:http';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, TEST_REDIS_URL } from '@plant/test-kit';
import { Redis } from 'ioredis';
import {
  createTenant,
  startPortal,
  startTokenService,
  type Platform,
  type PortalHandle,
  type TestTenant,
} from './helpers/platform.js';

const PER_IP = 3;
/**
 * The portal's Redis database of its own (sessions, pending sign-ins, its start counters), so
 * the pending sign-ins this file leaves can be counted without another suite's in between.
 */
const PORTAL_REDIS_URL = `${TEST_REDIS_URL.replace(/\/\d*$/, '')}/13`;

let ts: Platform;
let portal: PortalHandle;
let acme: TestTenant;
let redis: Redis;

beforeAll(async () => {
  ts = await startTokenService();
  portal = await startPortal(ts, {
    env: { REDIS_URL: PORTAL_REDIS_URL, SIGN_IN_STARTS_PER_IP: String(PER_IP) },
  });
  acme = await createTenant(ts);
  redis = new Redis(PORTAL_REDIS_URL, { maxRetriesPerRequest: 2 });
}, 60_000);

afterAll(async () => {
  await redis?.quit();
  await portal?.stop();
  await ts?.close();
});

/** A loopback address of its own (the portal trusts no proxy here: the socket's address is the source). */
function uniqueLoopback(): string {
  return `127.31.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** GET from `localAddress`: the portal sees that address as the client's. */
function getFrom(localAddress: string, url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function pendingSignIns(): Promise<number> {
  let count = 0;
  for await (const keys of redis.scanStream({ match: 'plantstore:admin:signin:*', count: 500 }))
    count += (keys as string[]).length;
  return count;
}

describe('sign-ins started at the portal', () => {
  test('When one address starts more sign-ins than its budget, then the extra ones get 429 with Retry-After and a page, and no pending sign-in is stored for them', async () => {
    const attacker = uniqueLoopback();
    const before = await pendingSignIns();

    const answers: Answer[] = [];
    for (let i = 0; i < PER_IP; i += 1)
      answers.push(await getFrom(attacker, `${portal.url}/login?tenant=${acme.tenant}`));
    // Refusals are held a second each (a flood is slowed): the rest at once.
    answers.push(
      ...(await Promise.all(
        Array.from({ length: 5 }, () =>
          getFrom(attacker, `${portal.url}/login?tenant=${acme.tenant}`),
        ),
      )),
    );

    expect(answers.slice(0, PER_IP).map((a) => a.status)).toEqual(Array(PER_IP).fill(303));
    for (const refused of answers.slice(PER_IP)) {
      expect({
        status: refused.status,
        type: refused.headers['content-type'],
        cache: refused.headers['cache-control'],
        cookie: refused.headers['set-cookie'],
      }).toEqual({
        status: 429,
        type: expect.stringMatching(/^text\/html/),
        cache: 'no-store',
        cookie: undefined,
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.text).toContain('Too many sign-ins were started from this network.');
    }
    expect((await pendingSignIns()) - before).toBe(PER_IP);
  });

  test('When one address floods the sign-in start, then another address still starts a sign-in', async () => {
    const attacker = uniqueLoopback();
    const flood = await Promise.all(
      Array.from({ length: 20 }, () =>
        getFrom(attacker, `${portal.url}/login?tenant=${acme.tenant}`),
      ),
    );

    const other = await getFrom(uniqueLoopback(), `${portal.url}/login?tenant=${acme.tenant}`);

    expect(flood.filter((a) => a.status === 303)).toHaveLength(PER_IP);
    expect(flood.filter((a) => a.status === 429)).toHaveLength(20 - PER_IP);
    expect(other.status).toBe(303);
    expect(String(other.headers.location)).toContain(
      `/realms/${acme.tenant}/protocol/openid-connect/auth?`,
    );
  });

  test('When the tenant picker is opened without a tenant, then it spends nothing: it stores nothing', async () => {
    const source = uniqueLoopback();
    for (let i = 0; i < PER_IP + 2; i += 1)
      expect((await getFrom(source, `${portal.url}/login`)).status).toBe(200);

    expect((await getFrom(source, `${portal.url}/login?tenant=${acme.tenant}`)).status).toBe(303);
  });

  test('When many addresses together start more sign-ins than the total budget, then the extra ones get 429', async () => {
    const capped = await startPortal(ts, {
      port: await freePort(),
      env: { REDIS_URL: PORTAL_REDIS_URL, SIGN_IN_STARTS_TOTAL: '4' },
    });
    try {
      const answers: Answer[] = [];
      for (let i = 0; i < 4; i += 1)
        answers.push(await getFrom(uniqueLoopback(), `${capped.url}/login?tenant=${acme.tenant}`));
      answers.push(
        ...(await Promise.all([
          getFrom(uniqueLoopback(), `${capped.url}/login?tenant=${acme.tenant}`),
          getFrom(uniqueLoopback(), `${capped.url}/login?tenant=${acme.tenant}`),
        ])),
      );

      expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 303, 429, 429]);
    } finally {
      await capped.stop();
    }
  });
});
