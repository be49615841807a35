import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { portalDriver, type PortalDriver } from './helpers/portal-driver.js';

let h: Harness;
let tenant: string;
let driver: PortalDriver;

beforeAll(async () => {
  // One password checker and failure budgets out of the way: only the checker can refuse here.
  h = await startHarness({
    SIGN_IN_CONCURRENT_HASHES: '1',
    SIGN_IN_FAILURES_PER_ACCOUNT: '1000',
    SIGN_IN_FAILURES_PER_IP: '1000',
  });
  ({ tenant } = await h.createTenant());
  driver = portalDriver(h, tenant);
});

afterAll(async () => {
  await h.close();
});

describe('password checks at once (the password checkers)', () => {
  test('When more sign-ins arrive at once than there are password checkers, then the extra ones get 429 with Retry-After and the form at once, never a place in a queue', async () => {
    const user = await h.createUser(tenant, 'View');
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    const email = (i: number) =>
      i % 2 === 0 ? user.email : `nobody-${i}-${randomBytes(4).toString('hex')}@example.test`;

    // Each attempt from an address of its own (the harness trusts one proxy hop): no failure budget is shared.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        b
          .post(`${started.interactionPath}/login`)
          .set('x-forwarded-for', uniqueIp())
          .type('form')
          .send({ csrf: started.csrf, email: email(i), password: `wrong ${i}` }),
      ),
    );

    const busy = answers.filter((a) => a.status === 429);
    const checked = answers.filter((a) => a.status === 401);
    expect(busy.length + checked.length).toBe(20);
    expect(checked.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const answer of busy) {
      expect({
        retryAfter: answer.headers['retry-after'],
        type: answer.headers['content-type'],
        cache: answer.headers['cache-control'],
      }).toEqual({
        retryAfter: '1',
        type: expect.stringMatching(/^text\/html/),
        cache: 'no-store',
      });
      expect(answer.text).toContain(
        'Too many sign-ins at this moment. Try again in a few seconds.',
      );
      expect(answer.text).toContain('name="password"');
    }
  });
});
