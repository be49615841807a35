/**
 * The step-up gate on the portal side: a session whose person needs a second factor may not
 * create, reset or delete a service account, add a key or add a trusted workload unless the
 * factor was verified in the last 10 minutes. Sessions are written through the session store
 * (as the sign-in callback writes them after a factor sign-in) with a stale, a fresh or no
 * factor time, in the real Redis the portal reads: "a stolen session cookie alone mints
 * nothing". Also GET /step-up, which starts the realm's second-factor check, and its callback.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { clientKeyPair, TEST_SECRETS, uniqueName } from '@plant/test-kit';
import { Redis } from 'ioredis';
import { createSessionStore, type Session } from '../src/sessions/session-store.js';
import {
  CookieJar,
  follow,
  send,
  signIn,
  submitSignInForm,
  type PortalSession,
} from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
let redis: Redis;
let adminSub: string;

beforeAll(async () => {
  redis = new Redis(p.ts.redisUrl);
  adminSub = ((await (await p.asAdminSession('GET', '/me')).json()) as { sub: string }).sub;
});
afterAll(() => redis?.quit());

const MINUTE = 60_000;

/** A portal session of acme's admin as the store holds it, and the cookies a browser would send with it. */
async function adminSession(factor: Partial<Session>): Promise<PortalSession> {
  const store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
  const id = await store.create(
    {
      tenant: p.acme.tenant,
      sub: adminSub,
      email: p.acme.admin.email,
      role: 'Account Admin',
      tokenVersion: 1,
      createdAt: Date.now(),
      lastSeenAt: Date.now(),
      userAgent: 'stolen',
      address: '127.0.0.1',
      ...factor,
    },
    600,
  );
  const csrf = createHmac('sha256', TEST_SECRETS.SESSION_SECRET)
    .update(`csrf:${id}`)
    .digest('base64url');
  const jar = new CookieJar();
  jar.set('aa_session', id);
  jar.set('csrf_token', csrf);
  return {
    jar,
    csrf,
    cookie: () => jar.header(`${p.portal.url}/`),
    headers: (extra = {}) => ({
      cookie: jar.header(`${p.portal.url}/`),
      'x-csrf-token': csrf,
      ...extra,
    }),
  };
}

/** Every credential-minting call on `clientId`, as [method, path, body]. */
const sensitiveCalls = (clientId: string): Array<[string, string, unknown?]> => [
  ['POST', '/service-accounts', { name: uniqueName('stepup') }],
  ['POST', `/service-accounts/${clientId}/reset-secret`],
  ['POST', `/service-accounts/${clientId}/keys`, { jwk: clientKeyPair('ec').publicJwk }],
  [
    'POST',
    `/service-accounts/${clientId}/trusts`,
    { issuer: 'https://issuer.example.test', subject: 'x', audience: 'y' },
  ],
  ['DELETE', `/service-accounts/${clientId}`],
];

describe('the step-up gate', () => {
  test('When a session whose person has a second factor last verified 11 minutes ago creates, resets, deletes, adds a key or a trust, then each is 401 insufficient_user_authentication and nothing changes', async () => {
    const account = await p.createAccount('guarded');
    const stolen = await adminSession({ stepUpRequired: true, factorAt: Date.now() - 11 * MINUTE });
    const before = await (await p.asAdminSession('GET', '/service-accounts')).json();

    for (const [method, path, body] of sensitiveCalls(account.client_id!)) {
      const res = await p.call(stolen, method, path, { body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      expect(await res.json()).toEqual({
        error: 401,
        message: 'This action needs your second factor again',
      });
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer error="insufficient_user_authentication"/);
      expect(challenge).toContain('acr_values="urn:plantstore:acr:factor"');
      expect(challenge).toContain('max_age=600');
    }

    expect(await (await p.asAdminSession('GET', '/service-accounts')).json()).toEqual(before);
    const credentials = await (
      await p.asAdminSession('GET', `/service-accounts/${account.client_id}/credentials`)
    ).json();
    expect(credentials).toMatchObject({ keys: [], trusts: [] });
    const events = (await p.auditEvents()).filter((e) => e.client_id === account.client_id);
    expect(events.map((e) => e.action)).toEqual(['service_account.create']);
  });

  test('When the session never verified a factor but its person has one, then the same calls are 401 too', async () => {
    const account = await p.createAccount('guarded');
    const stolen = await adminSession({ stepUpRequired: true });

    for (const [method, path, body] of sensitiveCalls(account.client_id!))
      expect((await p.call(stolen, method, path, { body })).status).toBe(401);
    // Signing a person out everywhere is a People action: the same gate.
    expect((await p.call(stolen, 'DELETE', `/users/${adminSub}/sessions`)).status).toBe(401);
    expect((await p.call(stolen, 'GET', '/me')).status).toBe(200);
  });

  test('When the factor was verified 9 minutes ago, then creating, adding a key, resetting and deleting go through', async () => {
    const fresh = await adminSession({ stepUpRequired: true, factorAt: Date.now() - 9 * MINUTE });

    const created = await p.call(fresh, 'POST', '/service-accounts', {
      body: { name: uniqueName('fresh') },
    });
    expect(created.status).toBe(201);
    const { client_id: clientId } = (await created.json()) as { client_id: string };
    const path = `/service-accounts/${clientId}`;
    const key = await p.call(fresh, 'POST', `${path}/keys`, {
      body: { jwk: clientKeyPair('ec').publicJwk },
    });
    expect(key.status).toBe(201);
    expect((await p.call(fresh, 'POST', `${path}/reset-secret`)).status).toBe(200);
    expect((await p.call(fresh, 'DELETE', path)).status).toBe(204);
  });

  test('When the person has no second factor and none is required, then nothing asks for one', async () => {
    const plain = await adminSession({});
    const created = await p.call(plain, 'POST', '/service-accounts', {
      body: { name: uniqueName('plain') },
    });
    expect(created.status).toBe(201);
  });

  test('When a stale session changes what is not credential-minting (role, disable), then it is not asked for a factor', async () => {
    const account = await p.createAccount('unguarded');
    const stale = await adminSession({ stepUpRequired: true, factorAt: Date.now() - 60 * MINUTE });

    const res = await p.call(stale, 'PATCH', `/service-accounts/${account.client_id}`, {
      body: { role: 'Edit' },
    });
    expect(res.status).toBe(200);
  });
});

describe('GET /step-up', () => {
  test('When a signed-in person starts a step-up, then the realm is asked for a second factor of that person, with PKCE and the browser binding', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.admin);

    const res = await send(
      session.jar,
      `${p.portal.url}/step-up?return_to=${encodeURIComponent('/settings/service-accounts')}&action=enrol-totp`,
    );

    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.href.startsWith(`${p.ts.authUrl}/realms/${p.acme.tenant}/`)).toBe(true);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      acr_values: 'urn:plantstore:acr:factor',
      max_age: '0',
      login_hint: p.acme.admin.email,
      plant_action: 'enrol-totp',
      code_challenge_method: 'S256',
      client_id: 'portal',
      state: expect.any(String),
      nonce: expect.any(String),
    });
    expect(res.headers.getSetCookie().some((c) => c.startsWith('aa_signin='))).toBe(true);
  });

  test('When the person cancels the check at the realm, then the portal says the action was not done and links back to return_to', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.admin);
    const start = await send(session.jar, `${p.portal.url}/step-up?return_to=%2Factivity`);
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;

    const res = await send(
      session.jar,
      `${p.portal.url}/auth/callback?state=${state}&error=access_denied`,
    );

    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('Check not completed');
    expect(page).toContain('href="/activity"');
    expect((await p.call(session, 'GET', '/me')).status).toBe(200);
  });

  test('When nobody is signed in, then /step-up sends the browser to sign in, coming back to return_to', async () => {
    const res = await fetch(`${p.portal.url}/step-up?return_to=%2Fsettings%2Fsessions`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/?return_to=%2Fsettings%2Fsessions');
  });

  test('When the action is unknown or return_to points off the portal, then 400, or the portal home', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.admin);
    const bad = await send(session.jar, `${p.portal.url}/step-up?action=mint-admin`);
    expect(bad.status).toBe(400);

    const offsite = await send(
      session.jar,
      `${p.portal.url}/step-up?return_to=${encodeURIComponent('https://evil.example/')}`,
    );
    expect(offsite.status).toBe(303);
  });

  test('When the step-up completes for the same person, then the same session carries on (no new session) and the browser returns to return_to', async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
    const cookieBefore = session.jar.get('aa_session');
    const { res: formRes, url: formUrl } = await follow(
      session.jar,
      `${p.portal.url}/step-up?return_to=${encodeURIComponent('/activity')}`,
    );
    expect(formUrl.startsWith(`${p.ts.authUrl}/realms/${p.acme.tenant}/interaction/`)).toBe(true);

    const next = await submitSignInForm(session.jar, formUrl, await formRes.text(), p.acme.viewer);
    const { url } = await follow(session.jar, next, (u) => u === `${p.portal.url}/activity`);

    expect(url).toBe(`${p.portal.url}/activity`);
    expect(session.jar.get('aa_session')).toBe(cookieBefore);
    expect((await p.call(session, 'GET', '/me')).status).toBe(200);
  });

  test("When the step-up is completed by another person (the realm's form filled with someone else's password), then 403, and the session is neither upgraded nor replaced", async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
    // The viewer's portal session in a browser whose realm knows nobody yet, so its form asks.
    const jar = new CookieJar();
    jar.set('aa_session', session.jar.get('aa_session')!);
    jar.set('csrf_token', session.csrf);
    const { res: formRes, url: formUrl } = await follow(
      jar,
      `${p.portal.url}/step-up?return_to=%2Factivity`,
    );

    const next = await submitSignInForm(jar, formUrl, await formRes.text(), p.acme.editor);
    const { res, url } = await follow(jar, next);

    expect({ url, status: res.status }).toEqual({
      url: expect.stringContaining(`${p.portal.url}/auth/callback`),
      status: 403,
    });
    expect(jar.get('aa_session')).toBe(session.jar.get('aa_session'));
    const me = (await (await p.call(session, 'GET', '/me')).json()) as { email: string };
    expect(me.email).toBe(p.acme.viewer.email);
  });
});
