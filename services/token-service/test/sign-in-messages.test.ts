/**
 * What the sign-in form says: a wrong password (fields marked, the email kept), a paused
 * sign-in (when to come back, the throttle's own wait), and that a paused sign-in reads the same
 * for a registered email and for one that is not: the page tells no more than `Retry-After`.
 */
import { describe, expect, test } from '@jest/globals';
import { waitWording } from '../src/platform/wait-wording.js';
import { pausedMessage } from '../src/sign-in/sign-in-form.js';
import { useHarness, type Harness } from './helpers/harness.js';
import {
  portalDriver,
  type Browser,
  type PortalDriver,
  type StartedSignIn,
} from './helpers/portal-driver.js';

const PER_ACCOUNT = 3;
let h: Harness;
let tenant: string;
let driver: PortalDriver;
useHarness(
  (started, first) => {
    [h, tenant] = [started, first];
    driver = portalDriver(h, tenant);
  },
  { SIGN_IN_FAILURES_PER_ACCOUNT: String(PER_ACCOUNT) },
);

const post = (b: Browser, started: StartedSignIn, email: string, password: string) =>
  b
    .post(`${started.interactionPath}/login`)
    .type('form')
    .send({ csrf: started.csrf, email, password });

/** The alert of a form page: its text without markup. */
const alertOf = (page: string) =>
  /<p id="sign-in-error" class="alert alert-error" role="alert">(.*?)<\/p>/s
    .exec(page)?.[1]
    ?.replace(/<[^>]+>/g, '');

describe('the wait, in words', () => {
  test('When the throttle says how long, then the words round up to what a person reads', () => {
    expect([1, 2, 59, 60, 61, 899, 900].map(waitWording)).toEqual([
      '1 second',
      '2 seconds',
      '59 seconds',
      '1 minute',
      '2 minutes',
      '15 minutes',
      '15 minutes',
    ]);
  });

  test('When the wait ends within a minute, then the clock time given is the next whole minute after it, in UTC', () => {
    const now = Date.parse('2026-11-24T13:59:30.000Z');

    expect(pausedMessage(45, now).value).toContain(
      'try again in 45 seconds (after <time datetime="2026-11-24T14:01:00.000Z">14:01 UTC</time>)',
    );
    expect(pausedMessage(900, now).value).toContain(
      'try again in 15 minutes (after <time datetime="2026-11-24T14:15:00.000Z">14:15 UTC</time>)',
    );
  });
});

describe('the sign-in form after an attempt', () => {
  test('When the password is wrong, then the form says so in an alert tied to both fields, keeps the email and focuses the password', async () => {
    const user = await h.createUser(tenant, 'View');
    const b = driver.browser();
    const started = await driver.startSignIn(b);

    const res = await post(b, started, user.email, 'not the password');

    expect(res.status).toBe(401);
    expect(alertOf(res.text)).toBe('Email or password is incorrect. Check both and try again.');
    expect(res.text).toContain(
      `value="${user.email}" aria-invalid="true" aria-describedby="sign-in-error">`,
    );
    expect(res.text).toMatch(
      /id="password"[^>]* aria-invalid="true" aria-describedby="sign-in-error" autofocus>/,
    );
    expect(res.text).not.toContain('not the password');
  });

  test('When sign-in is paused for an account, then the form says when to come back, the same wait as Retry-After', async () => {
    const user = await h.createUser(tenant, 'Edit');
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    for (let i = 0; i < PER_ACCOUNT; i += 1)
      expect((await post(b, started, user.email, `guess ${i}`)).status).toBe(401);

    const paused = await post(b, started, user.email, user.password);

    expect(paused.status).toBe(429);
    const wait = Number(paused.headers['retry-after']);
    expect(alertOf(paused.text)).toMatch(
      new RegExp(
        `^Too many failed sign-ins\\. Signing in is paused for your protection: try again in ${waitWording(wait)} \\(after \\d\\d:\\d\\d UTC\\)\\.$`,
      ),
    );
    // Not an invalid-field state: the fields were not checked.
    expect(paused.text).not.toContain('aria-invalid');
  });

  test('When a registered and an unregistered email are paused the same way, then their pages are the same but for the email and the form binding', async () => {
    const user = await h.createUser(tenant, 'View');
    const unknown = `nobody-${user.email}`;
    const pausedPage = async (email: string) => {
      const b = driver.browser();
      const started = await driver.startSignIn(b);
      const firstGuessAt = Date.now();
      for (let i = 0; i < PER_ACCOUNT; i += 1) await post(b, started, email, `guess ${i}`);
      const res = await post(b, started, email, 'one more guess');
      const took = Math.ceil((Date.now() - firstGuessAt) / 1000);
      const normalized = res.text
        .replaceAll(email, '<email>')
        .replaceAll(started.csrf, '<csrf>')
        .replaceAll(started.interactionPath, '<interaction>')
        // Every form carries a new passkey challenge of its own.
        .replace(/data-options="[^"]+"/, 'data-options="<challenge>"')
        // The clock moves between the two attempts; the wait is compared through Retry-After.
        .replace(
          /try again in [^<]+\(after <time datetime="[^"]+">\d\d:\d\d UTC<\/time>\)/,
          'try again in <wait>',
        );
      return { status: res.status, wait: Number(res.headers['retry-after']), took, normalized };
    };

    const [registered, unregistered] = [await pausedPage(user.email), await pausedPage(unknown)];

    expect(registered.status).toBe(429);
    expect(unregistered.status).toBe(429);
    // The same pause: each wait is the pause less the time its window had run when it was read,
    // which is at most what that page took (plus a second of rounding). Measured, not assumed:
    // a loaded machine can take any time between the two.
    expect(registered.wait - unregistered.wait).toBeLessThanOrEqual(unregistered.took + 1);
    expect(unregistered.wait - registered.wait).toBeLessThanOrEqual(registered.took + 1);
    expect(unregistered.normalized).toBe(registered.normalized);
  });
});
