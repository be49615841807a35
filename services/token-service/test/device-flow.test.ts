/**
 * plantctl's device authorization grant (RFC 8628) at a realm: the person enters the code, sees
 * who asks and approves with a fresh sign-in; the CLI gets an account-admin token and a refresh
 * token bound to its DPoP key, which `logout` revokes. And the attacker's side: codes guessed,
 * approved in another realm, redeemed twice, expired, flooded.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { dpopKey, type DpopKey } from '@plant/test-kit';
import {
  ADMIN_PASSWORD,
  decodeJwt,
  startHarness,
  TEST_ENV,
  uniqueIp,
  type Harness,
} from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';
import { pkce, portalDriver, type Browser } from './helpers/portal-driver.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let h: Harness;
let tenant: string;
let adminEmail: string;
let other: { tenant: string; adminEmail: string };
let browser: () => Browser;
let pathOf: (location: string) => string;

beforeAll(async () => {
  h = await startHarness({ DEVICE_CODES_PER_IP: '5', DEVICE_CODE_ENTRIES_PER_IP: '6' });
  ({ tenant, adminEmail } = await h.createTenant());
  other = await h.createTenant('ES256');
  ({ browser, pathOf } = portalDriver(h, tenant));
});

afterAll(async () => {
  await h.close();
});

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval?: number;
}

async function startDevice(
  realm = tenant,
  ip = uniqueIp(),
): Promise<{
  status: number;
  body: DeviceAuthorization & { error?: string };
  headers: Record<string, string>;
}> {
  const res = await request(h.publicUrl)
    .post(`/realms/${realm}/protocol/openid-connect/auth/device`)
    .set('x-forwarded-for', ip)
    .set('user-agent', 'plantctl/1.0 (test)')
    .type('form')
    .send({
      client_id: 'plantctl',
      scope: 'openid offline_access',
      resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
    });
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string> };
}

const xsrfOf = (text: string) => /name="xsrf" value="([^"]+)"/.exec(text)?.[1];

/** The person's browser at the realm's device page: enters the code, reads the confirmation page. */
async function enterCode(b: Browser, realm: string, userCode: string) {
  const form = await b.get(`/realms/${realm}/device`);
  expect(form.status).toBe(200);
  const xsrf = xsrfOf(form.text)!;
  const confirm = await b
    .post(`/realms/${realm}/device`)
    .type('form')
    .send({ xsrf, user_code: userCode });
  return { xsrf, confirm };
}

/** Enters the code, approves, signs in with a password; the last page. */
async function approve(b: Browser, realm: string, userCode: string, email: string) {
  const { confirm } = await enterCode(b, realm, userCode);
  expect(confirm.status).toBe(200);
  const xsrf = xsrfOf(confirm.text)!;
  const approved = await b
    .post(`/realms/${realm}/device`)
    .type('form')
    .send({ xsrf, user_code: userCode, confirm: 'yes' });
  expect(approved.status).toBe(303);
  const interactionPath = pathOf(approved.headers.location!);
  expect(interactionPath).toMatch(new RegExp(`^/realms/${realm}/interaction/[A-Za-z0-9_-]+$`));
  const signIn = await b.get(interactionPath);
  const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
  const login = await b
    .post(`${interactionPath}/login`)
    .type('form')
    .send({ csrf, email, password: ADMIN_PASSWORD });
  expect(login.status).toBe(303);
  let res = await b.get(pathOf(login.headers.location!));
  while (res.status === 303) res = await b.get(pathOf(res.headers.location!));
  return { confirm, done: res };
}

function redeem(deviceCode: string, key: DpopKey, realm = tenant) {
  const htu = `${h.publicUrl}${h.tokenUrl(realm)}`;
  return request(h.publicUrl)
    .post(h.tokenUrl(realm))
    .set('dpop', key.proof({ htm: 'POST', htu }))
    .type('form')
    .send({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: 'plantctl' });
}

function refresh(refreshToken: string, key: DpopKey) {
  const htu = `${h.publicUrl}${h.tokenUrl(tenant)}`;
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('dpop', key.proof({ htm: 'POST', htu }))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'plantctl' });
}

describe('device authorization grant for plantctl', () => {
  test('When plantctl asks for a device code, then it gets RFC 8628 fields pointing at the realm’s device page, and discovery names the endpoints', async () => {
    const { status, body } = await startDevice();
    const discovery = await request(h.publicUrl).get(
      `/realms/${tenant}/.well-known/openid-configuration`,
    );

    expect(status).toBe(200);
    expect(body).toEqual({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${h.issuer(tenant)}/device`,
      verification_uri_complete: `${h.issuer(tenant)}/device?user_code=${body.user_code}`,
      expires_in: 600,
    });
    expect(discovery.body).toMatchObject({
      device_authorization_endpoint: `${h.issuer(tenant)}/protocol/openid-connect/auth/device`,
      revocation_endpoint: `${h.issuer(tenant)}/protocol/openid-connect/revoke`,
    });
    expect(discovery.body.grant_types_supported).toContain(DEVICE_GRANT);
  });

  test('When the person approves with a fresh sign-in, then the page showed the client, address and time first, and plantctl gets a DPoP-bound account-admin token with the sign-in’s acr and a refresh token', async () => {
    const cliIp = uniqueIp();
    const { body: started } = await startDevice(tenant, cliIp);
    const key = dpopKey();
    const pending = await redeem(started.device_code, key);

    const { confirm, done } = await approve(browser(), tenant, started.user_code, adminEmail);
    const tokens = await redeem(started.device_code, key);

    expect(pending.body.error).toBe('authorization_pending');
    expect(confirm.text).toContain('Approve this device?');
    expect(confirm.text).toContain('<dd>plantctl</dd>');
    expect(confirm.text).toContain(`<dd>${cliIp}</dd>`);
    expect(confirm.text).toContain('plantctl/1.0 (test)');
    expect(confirm.text).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/);
    expect(confirm.headers['content-security-policy']).toContain("form-action 'self'");
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device approved');
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'DPoP', refresh_token: expect.any(String) });
    const claims = decodeJwt(tokens.body.access_token).payload;
    expect(claims).toMatchObject({
      aud: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      client_id: 'plantctl',
      tenant,
      principal_type: 'user',
      role: 'Account Admin',
      cnf: { jkt: key.thumbprint },
      auth_time: expect.any(Number),
    });
  });

  test('When the refresh token is copied to another key, then it is refused; with its own key it works; once revoked it is refused', async () => {
    const { body: started } = await startDevice();
    const key = dpopKey();
    await approve(browser(), tenant, started.user_code, adminEmail);
    const tokens = await redeem(started.device_code, key);
    const refreshToken = tokens.body.refresh_token as string;

    const stolen = await refresh(refreshToken, dpopKey());
    const own = await refresh(refreshToken, key);
    const latest = (own.body.refresh_token as string | undefined) ?? refreshToken;
    const revoked = await request(h.publicUrl)
      .post(`/realms/${tenant}/protocol/openid-connect/revoke`)
      .type('form')
      .send({ token: latest, token_type_hint: 'refresh_token', client_id: 'plantctl' });
    const afterRevocation = await refresh(latest, key);

    expect({ status: stolen.status, error: stolen.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
    expect(own.status).toBe(200);
    expect(decodeJwt(own.body.access_token).payload).toMatchObject({
      cnf: { jkt: key.thumbprint },
      auth_time: expect.any(Number),
    });
    expect(revoked.status).toBe(200);
    expect(afterRevocation.body.error).toBe('invalid_grant');
  });

  test('When the realm signs ES256, then plantctl’s tokens and ID token are ES256 too', async () => {
    const { body: started } = await startDevice(other.tenant);
    await approve(browser(), other.tenant, started.user_code, other.adminEmail);

    const tokens = await redeem(started.device_code, dpopKey(), other.tenant);

    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.access_token).header.alg).toBe('ES256');
    expect(decodeJwt(tokens.body.id_token).header.alg).toBe('ES256');
  });

  test('When plantctl signs in by loopback redirect (--browser), then any loopback port is accepted, the person signs in afresh although the browser has a session, the sign-in page lets its form end at that port, and the code gives a DPoP-bound access token and refresh token', async () => {
    const b = browser();
    const { body: started } = await startDevice();
    await approve(b, tenant, started.user_code, adminEmail);
    const { verifier, challenge } = pkce();
    const redirectUri = 'http://127.0.0.1:54321/callback';
    const query = new URLSearchParams({
      client_id: 'plantctl',
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'openid offline_access',
      resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st',
    });

    const auth = await b.get(`/realms/${tenant}/protocol/openid-connect/auth?${query}`);
    const interactionPath = pathOf(auth.headers.location!);
    const signIn = await b.get(interactionPath);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
    const login = await b
      .post(`${interactionPath}/login`)
      .type('form')
      .send({ csrf, email: adminEmail, password: ADMIN_PASSWORD });
    let res = await b.get(pathOf(login.headers.location!));
    while (res.status === 303 && !res.headers.location!.startsWith(redirectUri))
      res = await b.get(pathOf(res.headers.location!));
    const callback = new URL(res.headers.location!);
    const key = dpopKey();
    const htu = `${h.publicUrl}${h.tokenUrl(tenant)}`;
    const tokens = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('dpop', key.proof({ htm: 'POST', htu }))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: 'plantctl',
        resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      });

    expect(signIn.text).toContain('name="password"');
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    expect(callback.searchParams.get('state')).toBe('st');
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.access_token).payload).toMatchObject({
      aud: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
      cnf: { jkt: key.thumbprint },
    });
    // A browser blocks a form's redirects that leave its form-action: the page names the port.
    expect(signIn.headers['content-security-policy']).toMatch(/ http:\/\/127\.0\.0\.1:54321;/);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const refresh = (proofKey: ReturnType<typeof dpopKey>) =>
      request(h.publicUrl)
        .post(h.tokenUrl(tenant))
        .set('dpop', proofKey.proof({ htm: 'POST', htu }))
        .type('form')
        .send({
          grant_type: 'refresh_token',
          refresh_token: tokens.body.refresh_token,
          client_id: 'plantctl',
          resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE,
        });
    const stolen = await refresh(dpopKey());
    const refreshed = await refresh(key);
    expect(stolen.body.error).toBe('invalid_grant');
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token).payload).toMatchObject({
      cnf: { jkt: key.thumbprint },
    });
  });

  test('When a GET of the device authorization address (the resume route) names a real client and odd parameters, then it is a 400 page, not a 500', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const basic = `Basic ${Buffer.from(`${account.client_id}:${account.secret}`).toString('base64')}`;
    const query = `token%5B0%5D=%09%0A%0D&ui_locales&token='%20OR%20'1'%3D'1&code_challenge=djE6&client_id=${account.client_id}&login_hint`;
    for (const path of ['auth/device', 'auth/not-an-interaction'])
      for (const authorization of [undefined, basic]) {
        const req = request(h.publicUrl)
          .get(`/realms/${tenant}/protocol/openid-connect/${path}?${query}`)
          .set('accept', 'application/xml');
        if (authorization !== undefined) req.set('authorization', authorization);
        const res = await req;
        expect(res.status).toBe(400);
        expect(res.text).toContain('authorization request has expired');
      }
  });

  test('When a device code is redeemed a second time, then it is refused', async () => {
    const { body: started } = await startDevice();
    const key = dpopKey();
    await approve(browser(), tenant, started.user_code, adminEmail);
    const first = await redeem(started.device_code, key);

    const replay = await redeem(started.device_code, key);

    expect(first.status).toBe(200);
    expect({ status: replay.status, error: replay.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });

  test('When another realm’s person enters the code at their realm, then it is not found there, and the device code stays pending', async () => {
    const { body: started } = await startDevice();

    const { confirm } = await enterCode(browser(), other.tenant, started.user_code);
    const pending = await redeem(started.device_code, dpopKey());
    const elsewhere = await redeem(started.device_code, dpopKey(), other.tenant);

    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('That code is not valid');
    expect(confirm.text).not.toContain(started.user_code);
    expect(pending.body.error).toBe('authorization_pending');
    expect(elsewhere.body.error).toBe('invalid_grant');
  });

  test('When the person denies, then plantctl is told access_denied', async () => {
    const { body: started } = await startDevice();
    const b = browser();
    const { confirm } = await enterCode(b, tenant, started.user_code);
    const xsrf = xsrfOf(confirm.text)!;

    await b
      .post(`/realms/${tenant}/device`)
      .type('form')
      .send({ xsrf, user_code: started.user_code, abort: 'yes' });
    const denied = await redeem(started.device_code, dpopKey());

    expect(denied.body.error).toBe('access_denied');
  });

  test('When codes are guessed from one address, then each is refused alike and after the budget the page answers 429 with Retry-After, even for a right code', async () => {
    const { body: started } = await startDevice();
    const b = browser();
    const guesses = [];
    for (let i = 0; i < 6; i++) guesses.push((await enterCode(b, tenant, 'BCDF-GHJK')).confirm);
    const right = await enterCode(b, tenant, started.user_code);

    expect(guesses.map((g) => g.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(guesses.every((g) => g.text.includes('That code is not valid'))).toBe(true);
    expect(right.confirm.status).toBe(429);
    expect(Number(right.confirm.headers['retry-after'])).toBeGreaterThan(0);
    expect(right.confirm.text).not.toContain('Approve this device?');
  });

  test('When one address floods device authorization requests, then past its budget each is 429 slow_down with Retry-After, and nothing more is stored for it', async () => {
    const ip = uniqueIp();
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await startDevice(tenant, ip));

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers[5]!.body).toMatchObject({ error: 'slow_down' });
    expect(Number(answers[5]!.headers['retry-after'])).toBeGreaterThan(0);
    expect((await startDevice(tenant, uniqueIp())).status).toBe(200);
  });

  test('When a device code has expired, then its user code is refused on the page and the device is told expired_token', async () => {
    const { body: started } = await startDevice();
    await h.service.db.raw(
      `update oidc_payloads set expires_at = now() - interval '1 second' where realm = ? and model = 'DeviceCode'`,
      [tenant],
    );

    const { confirm } = await enterCode(browser(), tenant, started.user_code);
    const late = await redeem(started.device_code, dpopKey());

    expect(confirm.text).toContain('That code is not valid');
    expect(late.status).toBe(400);
    expect(['expired_token', 'invalid_grant']).toContain(late.body.error);
  });

  test('When the flow ran, then no device code or user code is in the logs', async () => {
    const { body: started } = await startDevice();
    await approve(browser(), tenant, started.user_code, adminEmail);
    await redeem(started.device_code, dpopKey());

    const logs = h.logs.join('\n');
    expect(logs).not.toContain(started.device_code);
    expect(logs).not.toContain(started.user_code);
    expect(logs).not.toContain(started.user_code.replace('-', ''));
  });
});
