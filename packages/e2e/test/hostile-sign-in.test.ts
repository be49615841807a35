/**
 * Password guessing at the real sign-in form (portal → `/login?tenant=` → the token service's
 * interaction page), in bursts: the failure budget must hold whatever the concurrency, because
 * a check that reads a counter before the password hash and writes it after lets a whole burst
 * through. Each burst comes from a loopback address of its own (TRUST_PROXY is off, so that is
 * the address the service counts), on this file's own redis-server.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPlatform, USER_PASSWORD, type Answer, type Platform } from '../src/index.js';

/** Short, so the test can wait for the window to pass; long enough for a burst to land inside one. */
const WINDOW_SECONDS = 10;
const BURST = 60;
const PER_ACCOUNT = 5;

let p: Platform;
let tenant: string;
let email: string;

beforeAll(async () => {
  p = await startPlatform({
    accountAdmin: true,
    serviceEnv: {
      // Password checkers to spare: this file tests the failure budget, token-service's sign-in-bursts.test.ts the checkers' bound.
      'token-service': {
        THROTTLE_WINDOW_SECONDS: String(WINDOW_SECONDS),
        SIGN_IN_FAILURES_PER_ACCOUNT: String(PER_ACCOUNT),
        SIGN_IN_CONCURRENT_HASHES: '64',
      },
    },
  });
  tenant = await p.createTenant('si');
  email = await p.createUser(tenant, 'Edit');
}, 90_000);

afterAll(() => p?.close());

/** Every connection from `address`, all of a burst at once. */
const from = (address: string) =>
  new Agent({ keepAlive: true, maxSockets: BURST, localAddress: address });

/** How the burst was answered: status counts, and whether every 429 said when to come back and why. */
function tally(answers: Answer[]) {
  const statuses: Record<number, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const refused = answers.filter((a) => a.status === 429);
  return {
    statuses,
    checked: statuses[401] ?? 0,
    everyRefusalExplained: refused.every((a) => {
      const wait = Number(a.headers['retry-after']);
      return (
        Number.isInteger(wait) &&
        wait >= 1 &&
        wait <= WINDOW_SECONDS &&
        a.text.includes(`try again in ${wait === 1 ? '1 second' : `${wait} seconds`}`)
      );
    }),
    longestWait: Math.max(0, ...refused.map((a) => Number(a.headers['retry-after']))),
  };
}

describe('Password guessing bursts at the sign-in form', () => {
  test('When one address sends 60 wrong passwords for one account at once through one form, then at most 5 are checked (401) and the rest get 429 with Retry-After; after the window the right password signs in', async () => {
    const attacker = from('127.0.0.2');
    const form = await p.openSignInForm(tenant);

    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) => form.post(email, `wrong password ${i}`, attacker)),
    );
    const rightTooSoon = await form.post(email, USER_PASSWORD, attacker);
    const burst = tally(answers);
    await sleep(
      (Math.max(burst.longestWait, Number(rightTooSoon.headers['retry-after'])) + 1) * 1000,
    );
    const rightLater = await form.post(email, USER_PASSWORD, attacker);
    attacker.destroy();

    expect(burst.checked).toBeGreaterThanOrEqual(1);
    expect(burst.checked).toBeLessThanOrEqual(PER_ACCOUNT);
    expect(burst).toMatchObject({
      statuses: { 401: burst.checked, 429: BURST - burst.checked },
      everyRefusalExplained: true,
    });
    // The budget is spent: from this address, even the right password waits for the window.
    expect(rightTooSoon.status).toBe(429);
    expect({ status: rightLater.status, location: rightLater.headers.location }).toEqual({
      status: 303,
      location: expect.stringMatching(
        new RegExp(`^${p.authUrl}/realms/${tenant}/protocol/openid-connect/auth/[A-Za-z0-9_-]+$`),
      ),
    });
  }, 90_000);

  test('When the email is unknown, then a burst spends the same budget: at most 5 checks, the rest 429', async () => {
    const attacker = from('127.0.0.3');
    const form = await p.openSignInForm(tenant);

    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        form.post(`nobody-${tenant}@example.test`, `wrong password ${i}`, attacker),
      ),
    );
    attacker.destroy();
    const burst = tally(answers);

    expect(burst.checked).toBeGreaterThanOrEqual(1);
    expect(burst.checked).toBeLessThanOrEqual(PER_ACCOUNT);
    expect(burst).toMatchObject({
      statuses: { 401: burst.checked, 429: BURST - burst.checked },
      everyRefusalExplained: true,
    });
  }, 60_000);
});
