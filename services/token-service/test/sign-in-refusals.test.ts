import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request, { type Response } from 'supertest';
import { TEST_REDIS_URL } from '@plant/test-kit';
import { startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { portalDriver, type PortalDriver, type StartedSignIn } from './helpers/portal-driver.js';

/**
 * What a refused sign-in costs the token service: a storm of wrong passwords, each from an
 * address of its own, is answered mostly with refusals, and every refusal's work is taken from
 * the grants beside it. A refusal (every password checker busy, or the source's budget spent)
 * is decided before the interaction is read and before any account is looked up or counted,
 * and answers a form that needs nothing stored.
 */
const PER_IP = 2;

let h: Harness;
let tenant: string;
let driver: PortalDriver;
let redis: Redis;

beforeAll(async () => {
  // One password checker; the source's budget small, the account's out of the way.
  h = await startHarness({
    SIGN_IN_CONCURRENT_HASHES: '1',
    SIGN_IN_FAILURES_PER_IP: String(PER_IP),
    SIGN_IN_FAILURES_PER_ACCOUNT: '1000',
  });
  ({ tenant } = await h.createTenant());
  driver = portalDriver(h, tenant);
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
});

afterAll(async () => {
  redis.disconnect();
  await h.close();
});

const nobody = () => `nobody-${randomBytes(6).toString('hex')}@example.test`;
/** The source's failure counter (rate-limiter-flexible's key, sign-in-failure-repository.ts). */
const sourceCounter = (ip: string) => redis.get(`plantstore:signin-fail:ip:${ip}`);
/** The passkey challenge pending for a sign-in (webauthn-challenge-repository.ts). */
const pendingChallenge = (started: StartedSignIn) => {
  const uid = started.interactionPath.split('/').pop()!;
  const digest = createHash('sha256').update(`${tenant}\u0000${uid}`).digest('base64url');
  return redis.get(`plantstore:webauthn-challenge:authenticate:${digest}`);
};

/** What every refusal of the password form answers alike. */
function refusalShape(res: Response) {
  return {
    status: res.status,
    type: res.headers['content-type'],
    cache: res.headers['cache-control'],
    csp: res.headers['content-security-policy'],
    frame: res.headers['x-frame-options'],
  };
}

describe('refused sign-ins (a storm of wrong passwords)', () => {
  test('When more sign-ins arrive at once than there are password checkers, then each refused one was refused before anything was counted for it, and only the checked ones spent a point', async () => {
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    const ips = Array.from({ length: 20 }, () => uniqueIp());

    const answers = await Promise.all(
      ips.map((ip) =>
        b
          .post(`${started.interactionPath}/login`)
          .set('x-forwarded-for', ip)
          .type('form')
          .send({ csrf: started.csrf, email: nobody(), password: 'not the password' }),
      ),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    const counters = await Promise.all(ips.map(sourceCounter));
    // A refusal leaves no counter behind (not even one taken and given back); a check keeps its point.
    expect(counters).toEqual(statuses.map((s) => (s === 401 ? '1' : null)));
  });

  test('When a source whose budget is spent posts the form, then it gets 429 before its sign-in is read: the same answer with or without the sign-in cookie, and no passkey challenge replaced', async () => {
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    for (let i = 0; i < PER_IP; i += 1) {
      const wrong = await b
        .post(`${started.interactionPath}/login`)
        .type('form')
        .send({ csrf: started.csrf, email: nobody(), password: `wrong ${i}` });
      expect(wrong.status).toBe(401);
    }
    expect(await sourceCounter(b.ip)).toBe(String(PER_IP));
    const challenge = await pendingChallenge(started);
    expect(challenge).not.toBeNull();
    const email = nobody();

    const refused = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email, password: 'another guess' });
    // The same form posted without the browser's cookies: oidc-provider could not find its sign-in.
    const cookieless = await request(h.publicUrl)
      .post(`${started.interactionPath}/login`)
      .set('x-forwarded-for', b.ip)
      .type('form')
      .send({ csrf: started.csrf, email, password: 'another guess' });

    for (const res of [refused, cookieless]) {
      expect(refusalShape(res)).toEqual({
        status: 429,
        type: expect.stringMatching(/^text\/html/),
        cache: 'no-store',
        csp: expect.stringContaining("default-src 'none'"),
        frame: 'DENY',
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.text).toContain('Too many failed sign-ins. Signing in is paused');
      // The form again, with the email kept and the CSRF field of this sign-in.
      expect(res.text).toContain(`value="${email}"`);
      expect(res.text).toContain(`name="csrf" value="${started.csrf}"`);
      expect(res.text).toContain(`action="${started.interactionPath}/login"`);
      // A passkey is one link away (the sign-in page makes its challenge), not a challenge stored here.
      expect(res.text).toContain(`href="${started.interactionPath}"`);
      expect(res.text).not.toContain('data-options=');
    }
    expect(cookieless.text).toBe(refused.text);
    expect(await pendingChallenge(started)).toBe(challenge);
  });

  test('When a sign-in is refused because every checker is busy or because its source is paused, then both answer the same shape: 429, Retry-After, the form with the email kept and the way to a passkey', async () => {
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    const ips = Array.from({ length: 12 }, () => uniqueIp());
    const burst = await Promise.all(
      ips.map((ip) =>
        b
          .post(`${started.interactionPath}/login`)
          .set('x-forwarded-for', ip)
          .type('form')
          .send({ csrf: started.csrf, email: 'someone@example.test', password: 'a guess' }),
      ),
    );
    const busy = burst.find((a) => a.status === 429);
    expect(busy).toBeDefined();

    for (const res of [busy!]) {
      expect(refusalShape(res)).toEqual({
        status: 429,
        type: expect.stringMatching(/^text\/html/),
        cache: 'no-store',
        csp: expect.stringContaining("default-src 'none'"),
        frame: 'DENY',
      });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.text).toContain('Too many sign-ins at this moment. Try again in a few seconds.');
      expect(res.text).toContain('value="someone@example.test"');
      expect(res.text).toContain(`href="${started.interactionPath}"`);
      expect(res.text).not.toContain('data-options=');
    }
    // The link leads to the full form, whose passkey challenge is made there.
    const again = await b.get(started.interactionPath);
    expect(again.status).toBe(200);
    expect(again.text).toContain('data-options=');
  });
});
