/**
 * A factor belongs to the person, not to the session: the attacker's side of the events that
 * take a factor away or require one (an admin's reset, a person's removal of their last
 * factor, a promotion to Account Admin, the policy switched on) and of an enrolment, against
 * the real token service, with real sign-ins (TOTP codes computed with otpauth).
 *
 * The browser of the person (a cookie jar holding the portal session and the realm's own
 * sign-in session, as one browser does) is the attacker's: whoever holds it when the event
 * happens. After each event that browser's portal session stops working at its next request,
 * the realm signs nobody in from its session without the password (and the enrolment the
 * policy requires), nothing sensitive succeeds from it, and an enrolment started from a
 * session asks the password first.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { createDatabase, type Knex } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { eventually, uniqueName, USER_PASSWORD } from '@plant/test-kit';
import {
  CookieJar,
  follow,
  sessionOf,
  type PortalSession,
  type TestUser,
} from './helpers/browser-client.js';
import { type Landing, walk } from './helpers/factor-sign-in.js';
import { createTenant, type TestTenant } from './helpers/platform.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
/** The token service's schema: to arrange a realm's policy and to let a code be used again. */
let auth: Knex;

beforeAll(() => {
  auth = createDatabase({
    connectionString: p.ts.databaseUrl,
    schema: 'auth',
    poolMax: 2,
    applicationName: 'factor-lifecycle-test',
    logger: createLogger({ name: 'factor-lifecycle-test', level: 'warn' }),
  });
});

afterAll(async () => {
  await auth?.destroy();
});

/** Arrange: the realm's policy as the CLI sets it (the switch itself is tested through the API). */
async function requireAdminFactor(tenant: string, on: boolean): Promise<void> {
  await auth('realms').where({ name: tenant }).update({ require_admin_factor: on });
}

/** Arrange: the person's app may give a code of the current period again (codes are good once). */
async function forgetSpentCodes(tenant: string): Promise<void> {
  await auth('user_factors')
    .where({ realm: tenant, kind: 'totp' })
    .update({ totp_last_step: null });
}

interface Browser {
  jar: CookieJar;
  session: PortalSession;
  sub: string;
  secret?: string;
}

const login = (tenant: string) => `${p.portal.url}/login?tenant=${tenant}`;

/** Signs `user` in from a new browser: password, then enrolment or code as the realm asks. */
async function signedIn(tenant: string, user: TestUser, secret?: string): Promise<Browser> {
  if (secret) await forgetSpentCodes(tenant);
  const jar = new CookieJar();
  const landing = await walk(jar, p.portal.url, login(tenant), {
    user,
    enrol: true,
    ...(secret ? { secret } : {}),
  });
  expect({ at: landing.at, status: landing.status }).toEqual({ at: 'portal', status: 200 });
  const session = sessionOf(jar, p.portal.url);
  const me = (await (await p.call(session, 'GET', '/me')).json()) as { sub: string };
  const enrolled = landing.secret ?? secret;
  return { jar, session, sub: me.sub, ...(enrolled ? { secret: enrolled } : {}) };
}

async function newPerson(tenant: string, role: 'View' | 'Edit' | 'Account Admin') {
  const email = await p.ts.createUser(tenant, role, `${uniqueName('p')}@${tenant}.test`);
  return { email, password: USER_PASSWORD };
}

/** What the attacker tries from the browser: a service account and an Account Admin invitation. */
async function sensitiveCalls(session: PortalSession, tenant: string): Promise<number[]> {
  const account = await p.call(session, 'POST', '/service-accounts', {
    body: { name: uniqueName('taken') },
  });
  const invitation = await p.call(session, 'POST', '/invitations', {
    body: { email: `${uniqueName('x')}@${tenant}.test`, role: 'Account Admin' },
  });
  return [account.status, invitation.status];
}

/** The portal session's next request is refused (once this replica has heard the change). */
async function signedOut(session: PortalSession): Promise<void> {
  await eventually(
    async () => (await p.call(session, 'GET', '/me')).status === 401,
    'the portal session ends',
  );
}

/** Where `/login` in this browser goes when nothing is filled in: the realm page it stops at. */
async function loginAgain(jar: CookieJar, tenant: string): Promise<Landing> {
  return walk(jar, p.portal.url, login(tenant));
}

describe("an Account Admin resets a person's factors", () => {
  let acme: TestTenant;
  let admin: Browser;
  beforeAll(async () => {
    acme = await createTenant(p.ts);
    await requireAdminFactor(acme.tenant, true);
    admin = await signedIn(acme.tenant, acme.admin);
  }, 60_000);

  test('When the admin resets the factors of a person whose browser holds a portal and a realm session, then that browser’s session ends, /login asks the password and then an enrolment, nothing sensitive succeeds, and an enrolment from it asks the password', async () => {
    const person = await newPerson(acme.tenant, 'Account Admin');
    const victim = await signedIn(acme.tenant, person);
    expect(victim.secret).toBeDefined();
    expect((await p.call(victim.session, 'GET', '/me')).status).toBe(200);

    const reset = await p.call(admin.session, 'DELETE', `/users/${victim.sub}/factors`);

    expect(reset.status).toBe(200);
    await signedOut(victim.session);
    expect(await sensitiveCalls(victim.session, acme.tenant)).toEqual([401, 401]);
    const again = await loginAgain(victim.jar, acme.tenant);
    expect({ at: again.at, status: again.status }).toEqual({ at: 'password', status: 200 });
    const enrolFromSession = await walk(
      victim.jar,
      p.portal.url,
      `${p.portal.url}/step-up?action=enrol-totp&return_to=/`,
    );
    expect(enrolFromSession.at).not.toBe('enrol');
    expect(await sensitiveCalls(victim.session, acme.tenant)).toEqual([401, 401]);
    // Only the password, and then the enrolment the policy requires, lets the person in again.
    const back = await walk(victim.jar, p.portal.url, login(acme.tenant), { user: person });
    expect(back.at).toBe('enrol');
  });
});

describe('a person removes their own last factor where the policy requires one', () => {
  test('When a session (perhaps stolen within the step-up window) removes the last factor, then 204, that session and the realm session end, and the next sign-in asks the password and enrols', async () => {
    const acme = await createTenant(p.ts);
    await requireAdminFactor(acme.tenant, true);
    const person = await newPerson(acme.tenant, 'Account Admin');
    const holder = await signedIn(acme.tenant, person);
    const factors = (await (await p.call(holder.session, 'GET', '/me/factors')).json()) as {
      factors: Array<{ id: string }>;
    };
    expect(factors.factors).toHaveLength(1);

    const removed = await p.call(holder.session, 'DELETE', `/me/factors/${factors.factors[0]!.id}`);

    expect(removed.status).toBe(204);
    await signedOut(holder.session);
    expect(await sensitiveCalls(holder.session, acme.tenant)).toEqual([401, 401]);
    const again = await loginAgain(holder.jar, acme.tenant);
    expect({ at: again.at, status: again.status }).toEqual({ at: 'password', status: 200 });
    const enrolFromSession = await walk(
      holder.jar,
      p.portal.url,
      `${p.portal.url}/step-up?action=enrol-totp&return_to=/`,
    );
    expect(enrolFromSession.at).not.toBe('enrol');
    const back = await walk(new CookieJar(), p.portal.url, login(acme.tenant), { user: person });
    expect(back.at).toBe('enrol');
  });
});

describe('enrolment from an existing session', () => {
  test('When a signed-in person without a factor asks to enrol an authenticator app, then the realm asks the password first, and the enrolment follows it', async () => {
    const acme = await createTenant(p.ts);
    const person = await newPerson(acme.tenant, 'Account Admin');
    const holder = await signedIn(acme.tenant, person);

    const asked = await walk(
      holder.jar,
      p.portal.url,
      `${p.portal.url}/step-up?action=enrol-totp&return_to=/`,
    );

    expect({ at: asked.at, status: asked.status }).toEqual({ at: 'password', status: 200 });
    const done = await walk(
      holder.jar,
      p.portal.url,
      `${p.portal.url}/step-up?action=enrol-totp&return_to=/`,
      { user: person, enrol: true },
    );
    expect(done.passed).toEqual(['password', 'enrol', 'codes']);
    expect(done.at).toBe('portal');
  });

  test('When a person enrols a factor in another browser, then the session opened before they had one needs step-up for a sensitive action', async () => {
    const acme = await createTenant(p.ts);
    const person = await newPerson(acme.tenant, 'Account Admin');
    const before = await signedIn(acme.tenant, person);
    expect(
      (
        await p.call(before.session, 'POST', '/service-accounts', {
          body: { name: uniqueName('before') },
        })
      ).status,
    ).toBe(201);
    const other = await signedIn(acme.tenant, person);
    const enrolled = await walk(
      other.jar,
      p.portal.url,
      `${p.portal.url}/step-up?action=enrol-totp&return_to=/`,
      { user: person, enrol: true },
    );
    expect(enrolled.at).toBe('portal');

    await eventually(async () => {
      const res = await p.call(before.session, 'POST', '/service-accounts', {
        body: { name: uniqueName('after') },
      });
      return res.status === 401;
    }, 'the older session needs step-up');
    const refused = await p.call(before.session, 'POST', '/service-accounts', {
      body: { name: uniqueName('after') },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_user_authentication');
    expect((await p.call(before.session, 'GET', '/me')).status).toBe(200);
  });
});

describe('a promotion and the policy switched on', () => {
  test('When a person without a factor is promoted to Account Admin where the policy requires one, then their open session invites and creates nothing, and their next sign-in enrols first', async () => {
    const acme = await createTenant(p.ts);
    await requireAdminFactor(acme.tenant, true);
    const admin = await signedIn(acme.tenant, acme.admin);
    const person = await newPerson(acme.tenant, 'Edit');
    const promoted = await signedIn(acme.tenant, person);

    const change = await p.call(admin.session, 'PATCH', `/users/${promoted.sub}`, {
      body: { role: 'Account Admin' },
    });

    expect(change.status).toBe(200);
    await signedOut(promoted.session);
    expect(await sensitiveCalls(promoted.session, acme.tenant)).toEqual([401, 401]);
    const again = await loginAgain(promoted.jar, acme.tenant);
    expect({ at: again.at, status: again.status }).toEqual({ at: 'password', status: 200 });
    const next = await walk(promoted.jar, p.portal.url, login(acme.tenant), { user: person });
    expect(next.at).toBe('enrol');
  });

  test('When an Account Admin switches the policy on, then another admin without a factor has their open session end, a silent sign-in is refused login_required, and their next sign-in enrols first; an admin with a factor goes on', async () => {
    const acme = await createTenant(p.ts);
    // The acting admin enrolled while the policy was on once.
    await requireAdminFactor(acme.tenant, true);
    const admin = await signedIn(acme.tenant, acme.admin);
    await requireAdminFactor(acme.tenant, false);
    const person = await newPerson(acme.tenant, 'Account Admin');
    const other = await signedIn(acme.tenant, person);
    expect(other.secret).toBeUndefined();

    const set = await p.call(admin.session, 'PATCH', '/settings/people', {
      body: { require_admin_second_factor: true },
    });

    expect(set.status).toBe(200);
    await signedOut(other.session);
    expect(await sensitiveCalls(other.session, acme.tenant)).toEqual([401, 401]);
    expect(await silentSignIn(other.jar, acme.tenant)).toBe('login_required');
    const next = await walk(other.jar, p.portal.url, login(acme.tenant), { user: person });
    expect(next.at).toBe('enrol');
    expect((await p.call(admin.session, 'GET', '/me')).status).toBe(200);
  });
});

/** `prompt=none` at the realm with the browser's realm session: the error the callback gets, or 'code'. */
async function silentSignIn(jar: CookieJar, tenant: string): Promise<string> {
  const redirectUri = `${p.portal.url}/auth/callback`;
  const authorize = new URL(`${p.ts.authUrl}/realms/${tenant}/protocol/openid-connect/auth`);
  authorize.search = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    prompt: 'none',
    code_challenge: createHash('sha256')
      .update(randomBytes(32).toString('base64url'))
      .digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  }).toString();
  const { url } = await follow(jar, authorize.href, (u) => u.startsWith(redirectUri));
  const params = new URL(url).searchParams;
  return params.get('error') ?? (params.get('code') ? 'code' : url);
}
