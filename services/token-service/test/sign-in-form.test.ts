import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { uniqueName } from '@plant/test-kit';
import { createUser } from '../src/people/users.js';
import { ADMIN_PASSWORD, startHarness, type Harness } from './helpers/harness.js';
import { portalDriver, type PortalDriver } from './helpers/portal-driver.js';

let h: Harness;
let tenant: string;
let adminEmail: string;
let browser: PortalDriver['browser'];
let startSignIn: PortalDriver['startSignIn'];
let completeSignIn: PortalDriver['completeSignIn'];

beforeAll(async () => {
  h = await startHarness({ SIGN_IN_FAILURES_PER_ACCOUNT: '3' });
  ({ tenant, adminEmail } = await h.createTenant());
  ({ browser, startSignIn, completeSignIn } = portalDriver(h, tenant));
});

afterAll(async () => {
  await h.close();
});

describe('the sign-in form (protections)', () => {
  test('When the password is wrong, then the form is shown again with one neutral message and no session', async () => {
    const b = browser();
    const started = await startSignIn(b);

    const res = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: adminEmail, password: 'wrong password' });
    const unknown = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: 'nobody@example.test', password: 'wrong password' });

    expect(res.status).toBe(401);
    expect(res.text).toContain('Email or password is incorrect. Check both and try again.');
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('Email or password is incorrect. Check both and try again.');
  });

  test('When the email contains NUL, then it is a failed sign-in, never a 500', async () => {
    const b = browser();
    const started = await startSignIn(b);

    const res = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send(`csrf=${started.csrf}&email=a%00b%40example.test&password=whatever1`);

    expect(res.status).toBe(401);
    expect(res.text).toContain('Email or password is incorrect. Check both and try again.');
  });

  test('When the CSRF token is missing or wrong, then the sign-in is refused', async () => {
    const b = browser();
    const started = await startSignIn(b);

    const missing = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ email: adminEmail, password: ADMIN_PASSWORD });
    const wrong = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: 'x'.repeat(43), email: adminEmail, password: ADMIN_PASSWORD });

    expect(missing.status).toBe(403);
    expect(wrong.status).toBe(403);
  });

  test('When the form is posted without the interaction cookie (cross-site), then it is refused', async () => {
    const b = browser();
    const started = await startSignIn(b);

    const res = await request(h.publicUrl)
      .post(`${started.interactionPath}/login`)
      .set('x-forwarded-for', b.ip)
      .type('form')
      .send({ csrf: started.csrf, email: adminEmail, password: ADMIN_PASSWORD });

    expect(res.status).toBe(400);
    expect(res.text).toContain('This sign-in has expired');
  });

  test('When an account fails too often from one address, then that address gets 429 with Retry-After while another address still signs in', async () => {
    const user = await h.createUser(tenant, 'Edit');
    const attacker = browser();
    const started = await startSignIn(attacker);
    for (let i = 0; i < 3; i += 1) {
      await attacker
        .post(`${started.interactionPath}/login`)
        .type('form')
        .send({ csrf: started.csrf, email: user.email, password: 'guess' })
        .expect(401);
    }

    const blocked = await attacker
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: user.email, password: user.password });
    const owner = browser();
    const ownerStart = await startSignIn(owner);
    const { callback } = await completeSignIn(owner, ownerStart, user.email, user.password);

    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.text).toContain(
      'Too many failed sign-ins. Signing in is paused for your protection: try again in ',
    );
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
  });

  test('When the email is respelled in ways the user store folds together (case, İ for i), then every spelling spends the one budget of the account', async () => {
    const email = `tim-${uniqueName('r')}@example.test`;
    const password = 'the right password';
    await createUser(h.service.identity, tenant, { email, password, role: 'View' });
    const dotted = email.replace('i', 'İ');
    const owner = browser();
    const ownerStart = await startSignIn(owner);
    // The dotted spelling is the same account: its right password signs in.
    await completeSignIn(owner, ownerStart, dotted, password);
    const attacker = browser();
    const started = await startSignIn(attacker);
    const post = (spelling: string, guess: string) =>
      attacker
        .post(`${started.interactionPath}/login`)
        .type('form')
        .send({ csrf: started.csrf, email: spelling, password: guess });

    const guesses = [
      await post(email, 'guess 1'),
      await post(email.toUpperCase(), 'guess 2'),
      await post(dotted, 'guess 3'),
    ];
    const fourth = await post(dotted, password);

    expect(guesses.map((g) => g.status)).toEqual([401, 401, 401]);
    expect(fourth.status).toBe(429);
    expect(fourth.text).toContain(
      'Too many failed sign-ins. Signing in is paused for your protection: try again in ',
    );
  });
});
