import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { Secret, TOTP } from 'otpauth';
import request, { type Response } from 'supertest';
import {
  ADMIN_PASSWORD,
  decodeJwt,
  startHarness,
  TEST_ENV,
  type Harness,
} from './helpers/harness.js';
import {
  portalDriver,
  REDIRECT_URI,
  type Browser,
  type PortalDriver,
} from './helpers/portal-driver.js';

/**
 * Second factors at the realm, driven as a browser would: enrolment forced by the policy,
 * TOTP codes computed here with otpauth, recovery codes, step-up from the realm's session,
 * throttles, and a disabled person. Codes are computed from the secret the enrolment page shows.
 */
let h: Harness;
let driver: PortalDriver;
let tenant: string;
let adminEmail: string;

const FACTOR_ACR = 'urn:plantstore:acr:factor';
const PASSWORD_ACR = 'urn:plantstore:acr:password';

beforeAll(async () => {
  // Enough password checkers that the parallel sign-ins below are never refused as busy.
  h = await startHarness({
    SIGN_IN_FAILURES_PER_ACCOUNT: '3',
    SIGN_IN_FAILURES_PER_IP: '8',
    SIGN_IN_CONCURRENT_HASHES: '8',
  });
  ({ tenant, adminEmail } = await h.createTenant(undefined, { requireAdminFactor: true }));
  driver = portalDriver(h, tenant);
});

afterAll(async () => {
  await h.close();
});

function codeAt(secret: string, offsetSeconds = 0): string {
  return new TOTP({
    secret: Secret.fromBase32(secret),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  }).generate({
    timestamp: Date.now() + offsetSeconds * 1000,
  });
}

/** Waits until the current 30 s step has at least a few seconds on either side, so the server's step is the test's. */
async function awayFromStepEdge(): Promise<void> {
  for (;;) {
    const into = (Date.now() / 1000) % 30;
    if (into > 2 && into < 26) return;
    await sleep(500);
  }
}

const csrfOf = (page: Response) => /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';

interface Step {
  b: Browser;
  verifier: string;
  interactionPath: string;
  page: Response;
}

/** Starts a sign-in and posts the password; returns the page that follows (a 303 is followed once). */
async function password(
  b: Browser,
  email: string,
  pass: string,
  extra: Record<string, string> = {},
): Promise<Step> {
  const started = await driver.startSignIn(b, extra);
  const login = await b
    .post(`${started.interactionPath}/login`)
    .type('form')
    .send({ csrf: started.csrf, email, password: pass });
  const page = await follow(b, login);
  return { b, verifier: started.verifier, interactionPath: started.interactionPath, page };
}

/** Follows redirects inside the realm; stops at a page or at the portal's callback. */
async function follow(b: Browser, res: Response): Promise<Response> {
  let current = res;
  while (current.status === 303 || current.status === 302) {
    const location = current.headers.location!;
    if (location.startsWith('http') && !location.startsWith(h.publicUrl)) return current;
    current = await b.get(driver.pathOf(location));
  }
  return current;
}

async function post(step: Step, action: string, fields: Record<string, string>): Promise<Response> {
  const res = await step.b
    .post(`${step.interactionPath}/${action}`)
    .type('form')
    .send({ csrf: csrfOf(step.page), ...fields });
  return follow(step.b, res);
}

/** The ID token of a sign-in that reached the portal's callback. */
async function idTokenOf(step: Step, end: Response): Promise<Record<string, unknown>> {
  expect(end.status).toBe(303);
  const callback = new URL(end.headers.location!);
  const code = callback.searchParams.get('code');
  expect(code).toBeTruthy();
  const tokens = await driver.exchange(code!, step.verifier);
  expect(tokens.status).toBe(200);
  return decodeJwt(tokens.body.id_token).payload;
}

const secretOf = (page: Response) =>
  /id="totp-secret" type="text" readonly value="([A-Z2-7]+)"/.exec(page.text)?.[1] ?? '';
const recoveryCodesOf = (page: Response) =>
  [...page.text.matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!);

/** Arrange: the person's authenticator app has accepted no code yet (as right after a day's pause). */
async function forgetSpentSteps(sub: string): Promise<void> {
  await h.service.db('user_factors').where({ sub, kind: 'totp' }).update({ totp_last_step: null });
}

/** An admin of a realm with the policy on, enrolled with TOTP; returns the secret and recovery codes. */
async function enrolledAdmin(): Promise<{
  email: string;
  pass: string;
  sub: string;
  secret: string;
  codes: string[];
}> {
  const user = await h.createUser(tenant, 'Account Admin');
  const step = await password(driver.browser(), user.email, user.password);
  const secret = secretOf(step.page);
  await awayFromStepEdge();
  const shown = await post(step, 'enrol-totp', { code: codeAt(secret) });
  const codes = recoveryCodesOf(shown);
  const end = await post({ ...step, page: shown }, 'continue', {});
  expect(end.status).toBe(303);
  return { email: user.email, pass: user.password, sub: user.id, secret, codes };
}

describe('second factors at sign-in', () => {
  test('When an Account Admin without a factor signs in where the policy requires one, then the enrolment page shows the key and an otpauth URI, and the first code finishes with acr factor, amr, auth_time and factors_enrolled', async () => {
    const step = await password(driver.browser(), adminEmail, ADMIN_PASSWORD);

    expect(step.page.status).toBe(200);
    expect(step.page.text).toContain('requires a second factor for Account Admins');
    const secret = secretOf(step.page);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(step.page.text).toContain(
      `otpauth://totp/Plant%20Store%20(${tenant}):${encodeURIComponent(adminEmail)}?issuer=Plant%20Store%20(${tenant})&amp;secret=${secret}`,
    );
    expect(step.page.text).toContain('data-passkey="register"');
    await awayFromStepEdge();
    const shown = await post(step, 'enrol-totp', { code: codeAt(secret) });
    expect(shown.status).toBe(200);
    const codes = recoveryCodesOf(shown);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const before = Math.floor(Date.now() / 1000);
    const end = await post({ ...step, page: shown }, 'continue', {});
    const claims = await idTokenOf(step, end);

    expect(claims).toMatchObject({
      acr: FACTOR_ACR,
      amr: ['pwd', 'otp', 'mfa'],
      factors_enrolled: true,
    });
    expect(claims.auth_time).toBeGreaterThanOrEqual(before - 1);
    const row = await h.service.db('users').where({ email: adminEmail }).first('last_sign_in_at');
    expect(row.last_sign_in_at).toBeInstanceOf(Date);
    const events = await h.service
      .db('user_security_events')
      .where({ realm: tenant, action: 'factor.enrol', target_email: adminEmail })
      .select('details');
    expect(events).toEqual([{ details: { kind: 'totp', factor_id: expect.any(String) } }]);
    // The secret is stored sealed, never in clear.
    const stored = await h.service.db('user_factors').where({ realm: tenant, kind: 'totp' });
    for (const factor of stored)
      expect(Buffer.from(factor.totp_secret_encrypted).toString('latin1')).not.toContain(secret);
  });

  test('When a person with an authenticator app signs in, then the code page follows the password, a wrong code is 401, and the right code signs in with acr factor', async () => {
    const person = await enrolledAdmin();
    await forgetSpentSteps(person.sub);
    const step = await password(driver.browser(), person.email, person.pass);
    expect(step.page.status).toBe(200);
    expect(step.page.text).toContain('Confirm it is you');

    await awayFromStepEdge();
    const right = codeAt(person.secret);
    const wrong = await post(step, 'factor', { code: right === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That code is not right');
    const end = await post({ ...step, page: wrong }, 'factor', { code: right });
    const claims = await idTokenOf(step, end);
    expect(claims).toMatchObject({
      acr: FACTOR_ACR,
      amr: ['pwd', 'otp', 'mfa'],
      factors_enrolled: true,
    });
  });

  test('When a code is used twice in its window, then the second sign-in refuses it', async () => {
    const person = await enrolledAdmin();
    await forgetSpentSteps(person.sub);
    const first = await password(driver.browser(), person.email, person.pass);
    const second = await password(driver.browser(), person.email, person.pass);
    await awayFromStepEdge();
    const code = codeAt(person.secret);

    const ok = await post(first, 'factor', { code });
    const reused = await post(second, 'factor', { code });

    expect(ok.status).toBe(303);
    expect(reused.status).toBe(401);
  });

  test('When codes of the steps around now are typed, then one step early or late is accepted and two steps are refused', async () => {
    const person = await enrolledAdmin();
    const attempt = async (offset: number) => {
      await forgetSpentSteps(person.sub);
      const step = await password(driver.browser(), person.email, person.pass);
      await awayFromStepEdge();
      return (await post(step, 'factor', { code: codeAt(person.secret, offset) })).status;
    };

    expect(await attempt(-60)).toBe(401);
    expect(await attempt(60)).toBe(401);
    expect(await attempt(-30)).toBe(303);
    expect(await attempt(30)).toBe(303);
  });

  test('When a recovery code signs in, then it works once and is recorded, never in clear', async () => {
    const person = await enrolledAdmin();
    const code = person.codes[3]!;

    const first = await password(driver.browser(), person.email, person.pass);
    const end = await post(first, 'factor', { code: code.toUpperCase() });
    const claims = await idTokenOf(first, end);
    const again = await post(
      await password(driver.browser(), person.email, person.pass),
      'factor',
      { code },
    );

    expect(claims).toMatchObject({ acr: FACTOR_ACR });
    expect(again.status).toBe(401);
    const events = await h.service
      .db('user_security_events')
      .where({ realm: tenant, action: 'factor.recovery_code_used', target_sub: person.sub })
      .select('details', 'address');
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain(code);
    const left = await h.service
      .db('user_recovery_codes')
      .where({ sub: person.sub })
      .whereNull('used_at');
    expect(left).toHaveLength(9);
    expect(JSON.stringify(left)).not.toContain(code.replace(/-/g, ''));
  });

  test('When one recovery code is sent by two sign-ins at once, then exactly one succeeds', async () => {
    const person = await enrolledAdmin();
    const steps = await Promise.all(
      Array.from({ length: 4 }, () => password(driver.browser(), person.email, person.pass)),
    );

    const results = await Promise.all(
      steps.map((s) => post(s, 'factor', { code: person.codes[0]! })),
    );

    expect(results.filter((r) => r.status === 303)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(3);
  });
});

describe('access tokens of a sign-in (RFC 9068 §2.2.1)', () => {
  /** Exchanges the code of a sign-in that asked for the account-admin API; the access token's and the ID token's claims. */
  async function tokensOf(step: Step, end: Response) {
    expect(end.status).toBe(303);
    const code = new URL(end.headers.location!).searchParams.get('code');
    const tokens = await request(h.publicUrl).post(h.tokenUrl(tenant)).type('form').send({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT_URI,
      client_id: 'portal',
      code_verifier: step.verifier,
      resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
    });
    expect(tokens.status).toBe(200);
    return {
      access: decodeJwt(tokens.body.access_token).payload,
      id: decodeJwt(tokens.body.id_token).payload,
    };
  }
  const forTheApi = {
    resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
    scope: 'openid email profile plants:read plants:write',
  };

  test("When a person signs in with password and a code for the account-admin API, then the access token carries acr factor and the sign-in's auth_time, as the ID token does", async () => {
    const person = await enrolledAdmin();
    const step = await password(driver.browser(), person.email, person.pass, forTheApi);

    const { access, id } = await tokensOf(
      step,
      await post(step, 'factor', { code: person.codes[3]! }),
    );

    expect(access).toMatchObject({ sub: person.sub, acr: FACTOR_ACR, principal_type: 'user' });
    expect(access.auth_time).toEqual(expect.any(Number));
    expect(access.auth_time).toBe(id.auth_time);
  });

  test('When a person without a factor signs in with the password alone, then the access token says acr password with its auth_time', async () => {
    const user = await h.createUser(tenant, 'Edit');
    const before = Math.floor(Date.now() / 1000);
    const step = await password(driver.browser(), user.email, user.password, forTheApi);

    const { access } = await tokensOf(step, step.page);

    expect(access).toMatchObject({ sub: user.id, acr: PASSWORD_ACR });
    expect(access.auth_time).toBeGreaterThanOrEqual(before - 1);
  });
});

describe('throttles of code attempts', () => {
  test('When one source sends wrong codes past the limit, then it gets 429 with Retry-After, and the right person from another source still signs in', async () => {
    const person = await enrolledAdmin();
    const attacker = driver.browser();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const step = await password(attacker, person.email, person.pass);
      const res = await post(step, 'factor', { code: `wrong-${i}` });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const owner = await password(driver.browser(), person.email, person.pass);
    const recovered = await post(owner, 'factor', { code: person.codes[1]! });

    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(recovered.status).toBe(303);
  });

  test('When a source sprays wrong codes over several people, then the source is stopped for all of them', async () => {
    const people = await Promise.all([enrolledAdmin(), enrolledAdmin(), enrolledAdmin()]);
    const source = driver.browser();
    const statuses: number[] = [];
    for (const person of people) {
      for (let i = 0; i < 3; i += 1) {
        const step = await password(source, person.email, person.pass);
        statuses.push((await post(step, 'factor', { code: 'abcd-efgh-ijkl' })).status);
      }
    }
    // Eight points per source: the ninth attempt is refused before any check.
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(401));
    expect(statuses[8]).toBe(429);
  });
});

describe('step-up and enrolment from the realm session', () => {
  test('When the portal asks for a factor again (acr_values + max_age=0) in a browser the realm knows, then only the factor is asked and the new sign-in has a fresh auth_time', async () => {
    const person = await enrolledAdmin();
    const b = driver.browser();
    const first = await password(b, person.email, person.pass);
    await idTokenOf(first, await post(first, 'factor', { code: person.codes[5]! }));

    const started = await driver.startSignIn(b, {
      acr_values: FACTOR_ACR,
      max_age: '0',
      login_hint: person.email,
    });
    expect(started.form.status).toBe(303);
    const page = await follow(b, started.form);
    expect(page.text).toContain('Confirm it is you');
    expect(page.text).not.toContain('name="password"');
    const step: Step = {
      b,
      verifier: started.verifier,
      interactionPath: started.interactionPath,
      page,
    };
    const end = await post(step, 'factor', { code: person.codes[6]! });
    const claims = await idTokenOf(step, end);

    expect(claims).toMatchObject({ sub: person.sub, acr: FACTOR_ACR, factors_enrolled: true });
  });

  test('When the portal asks for new recovery codes (plant_action), then the factor is asked, ten new codes are shown once, and the old ones stop working', async () => {
    const person = await enrolledAdmin();
    const b = driver.browser();
    const first = await password(b, person.email, person.pass);
    await idTokenOf(first, await post(first, 'factor', { code: person.codes[0]! }));

    const started = await driver.startSignIn(b, {
      acr_values: FACTOR_ACR,
      max_age: '0',
      plant_action: 'recovery-codes',
    });
    const page = await follow(b, started.form);
    const step: Step = {
      b,
      verifier: started.verifier,
      interactionPath: started.interactionPath,
      page,
    };
    const shown = await post(step, 'factor', { code: person.codes[1]! });
    const fresh = recoveryCodesOf(shown);
    const end = await post({ ...step, page: shown }, 'continue', {});
    await idTokenOf(step, end);
    const oldCode = await post(
      await password(driver.browser(), person.email, person.pass),
      'factor',
      {
        code: person.codes[2]!,
      },
    );
    const newCode = await post(
      await password(driver.browser(), person.email, person.pass),
      'factor',
      {
        code: fresh[0]!,
      },
    );

    expect(fresh).toHaveLength(10);
    expect(oldCode.status).toBe(401);
    expect(newCode.status).toBe(303);
  });

  test('When forged passkey answers are posted (not JSON, an unknown credential, a replayed challenge), then each is 401 on the page it came from and the source runs out of attempts', async () => {
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    const forged = [
      'not json',
      '[]',
      JSON.stringify({ id: 'no-such-credential', response: {} }),
      JSON.stringify({ id: 'x'.repeat(5000), response: { clientDataJSON: 'AAAA' } }),
    ];
    const statuses: number[] = [];
    for (const response of forged) {
      const res = await b
        .post(`${started.interactionPath}/passkey`)
        .type('form')
        .send({ csrf: started.csrf, response });
      statuses.push(res.status);
      if (res.status === 401) expect(res.text).toContain('That passkey could not be verified');
    }
    const more: number[] = [];
    for (let i = 0; i < 6; i += 1)
      more.push(
        (
          await b
            .post(`${started.interactionPath}/passkey`)
            .type('form')
            .send({ csrf: started.csrf, response: '{}' })
        ).status,
      );

    expect(statuses).toEqual([401, 401, 401, 401]);
    // Eight points per source: the ninth answer is refused before any work.
    expect(more).toEqual([401, 401, 401, 401, 429, 429]);
  });

  test('When a factor form is posted before the password was checked, then it is refused as not valid', async () => {
    const b = driver.browser();
    const started = await driver.startSignIn(b);

    const res = await b
      .post(`${started.interactionPath}/factor`)
      .type('form')
      .send({ csrf: started.csrf, code: '123456' });

    expect(res.status).toBe(403);
  });
});

describe('policy and people', () => {
  test('When the policy is off, then an Account Admin without a factor signs in with the password alone and acr password', async () => {
    const other = await h.createTenant();
    const d = portalDriver(h, other.tenant);
    const b = d.browser();
    const started = await d.startSignIn(b);

    const { callback } = await d.completeSignIn(b, started, other.adminEmail, ADMIN_PASSWORD);
    const tokens = await d.exchange(callback.searchParams.get('code')!, started.verifier);

    expect(decodeJwt(tokens.body.id_token).payload).toMatchObject({
      acr: PASSWORD_ACR,
      amr: ['pwd'],
      factors_enrolled: false,
    });
  });

  test('When a View person without a factor signs in where the policy is on, then no enrolment is asked', async () => {
    const user = await h.createUser(tenant, 'View');
    const b = driver.browser();
    const started = await driver.startSignIn(b);

    const { callback } = await driver.completeSignIn(b, started, user.email, user.password);

    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  test('When a disabled person gives the right password or a right code, then the sign-in is refused', async () => {
    const person = await enrolledAdmin();
    const pending = await password(driver.browser(), person.email, person.pass);
    await h.service.db('users').where({ sub: person.sub }).update({ disabled_at: new Date() });

    const withPassword = await password(driver.browser(), person.email, person.pass);
    const withCode = await post(pending, 'factor', { code: person.codes[0]! });

    expect([401, 403]).toContain(withPassword.page.status);
    expect(withPassword.page.text).not.toContain('Confirm it is you');
    expect(withCode.status).toBe(403);
    const unused = await h.service
      .db('user_recovery_codes')
      .where({ sub: person.sub })
      .whereNull('used_at');
    expect(unused).toHaveLength(10);
  });
});
