/**
 * The whole way in for an invited Account Admin, in Chromium: an Account Admin invites a
 * colleague as 'Account Admin' through the account-admin API; the colleague opens the link at
 * the realm, sets a password, is sent to the portal's sign-in and signs in with it; the
 * tenant's policy requires a second factor for Account Admins, so the realm asks for one and
 * the colleague enrols a passkey with Chromium's DevTools virtual authenticator (CDP
 * `WebAuthn.addVirtualAuthenticator`) and lands in the portal. Signed out, they sign in again
 * with the passkey alone ("Use a passkey", no password). People (API, read in their own
 * session: the inviting admin's ended when the policy asked them for a factor) then shows them
 * with one passkey and a last sign-in.
 *
 * Passkeys need a domain for their relying party ID (an IP address is refused by browsers),
 * so the token service is reached as `localhost` here.
 */
import { describe, expect, test } from '@jest/globals';
import { eventually, freePort, uniqueName, USER_PASSWORD } from '@plant/test-kit';
import type { CDPSession, Page } from 'playwright-core';
import { signIn, type PortalSession } from './helpers/browser-client.js';
import { shot, useBrowser } from './helpers/browser.js';
import type { Platform } from './helpers/platform.js';
import { ISO } from './helpers/portal-api.js';

let platform: Platform;
let page: Page;
let cdp: CDPSession;
let tenant: string;
let authUrl: string;
/** The inviting Account Admin's portal session (API calls). */
let admin: PortalSession;
/** The page's virtual authenticator: a platform passkey store with user verification. */
let authenticatorId: string;

const tokenPort = await freePort();
const internalPort = await freePort();
const INVITEE_PASSWORD = 'colleague password 1';
let invitee: string;

useBrowser(
  {
    accountAdmin: true,
    authUrl: `http://localhost:${tokenPort}`,
    ports: { 'token-service': [{ port: tokenPort, internalPort }] },
  },
  async (started) => {
    ({ platform, page } = started);
    authUrl = `http://localhost:${tokenPort}`;
    tenant = await platform.createTenant('invpk');
    invitee = `${uniqueName('colleague')}@example.test`;
    // The inviting admin signs in before the policy asks them for a factor of their own (which
    // then ends this session: the invitation is made before the switch).
    admin = await signIn(platform.portalUrl, tenant, {
      email: `admin@${tenant}.test`,
      password: USER_PASSWORD,
    });
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    }));
  },
);

/** A call to the portal's /api/v1 as the inviting admin. */
function asAdmin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${platform.portalUrl}/api/v1${path}`, {
    method,
    headers: admin.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** The portal's landing page, signed in as the invitee. */
async function expectInPortal(p: Page): Promise<void> {
  await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
  await p.getByRole('heading', { name: 'Service accounts', level: 1 }).waitFor();
  await expect(p.locator('.who .email').textContent()).resolves.toBe(invitee);
  await expect(p.locator('.who .badge').textContent()).resolves.toBe('Account Admin');
}

describe('an invited Account Admin who enrols a passkey', () => {
  test('When an Account Admin invites a colleague as Account Admin where a second factor is required, then the colleague sets a password, enrols a passkey at sign-in, and later signs in with the passkey alone; People shows one passkey and a last sign-in', async () => {
    const invited = await asAdmin('POST', '/users', { email: invitee, role: 'Account Admin' });
    expect(invited.status).toBe(201);
    const { invitation } = (await invited.json()) as { invitation: { url: string; role: string } };
    expect(invitation.role).toBe('Account Admin');
    expect(invitation.url).toMatch(
      new RegExp(`^${authUrl}/realms/${tenant}/invitation\\?token=[A-Za-z0-9_-]{43}$`),
    );
    await platform.cli('tenant', 'policy', tenant, '--admin-factor', 'required');

    // The link: the realm says whom it is for and asks for a password.
    await page.goto(invitation.url);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await expect(page.locator('section p.muted').first().textContent()).resolves.toBe(
      `You are invited to the Plant Store tenant ${tenant} as ${invitee}.`,
    );
    await shot(page, 'invitation-passkey-1-set-password');
    await page.getByLabel('New password').fill(INVITEE_PASSWORD);
    await page.getByLabel('Repeat the password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Set password and continue' }).click();

    // The portal's sign-in, at the realm's form, with the new password.
    await page.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByLabel('Email').fill(invitee);
    await page.getByLabel('Password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    // The policy: a second factor before the portal; a passkey from the virtual authenticator.
    await page.getByRole('heading', { name: 'Add a second factor' }).waitFor();
    await expect(
      page.getByText(`The account ${tenant} requires a second factor`).count(),
    ).resolves.toBe(1);
    await shot(page, 'invitation-passkey-2-enrol');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expectInPortal(page);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });

    // Signed out, back with the passkey alone: no password is typed.
    await page.context().clearCookies();
    await page.goto(`${platform.portalUrl}/`);
    await page.getByLabel('Tenant name').fill(tenant);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await shot(page, 'invitation-passkey-3-sign-in');
    // The last sign-in is this one (the API's times are to the second at least).
    const passkeySignInFrom = Math.floor(Date.now() / 1000) * 1000;
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await expectInPortal(page);

    // The inviting admin had no factor when the policy was switched on: their session is over
    // (a factor belongs to the person), so People is read as the colleague, who has one now.
    // The test platform's CLI announces nothing on Redis, so the portal learns of the bump from
    // the change feed (REVOCATION_RESYNC_MS): wait for that, not for a guess at its timing.
    await eventually(
      async () => (await asAdmin('GET', '/users')).status === 401,
      "the inviting admin's session has ended",
    );
    const people = await page.request.get(`${platform.portalUrl}/api/v1/users`);
    expect(people.status()).toBe(200);
    const person = ((await people.json()) as Array<Record<string, unknown>>).find(
      (u) => u.email === invitee,
    );
    expect(person).toMatchObject({
      role: 'Account Admin',
      status: 'active',
      last_sign_in_at: ISO,
      factors: { passkeys: 1, totp: false },
    });
    expect(Date.parse(person!.last_sign_in_at as string)).toBeGreaterThanOrEqual(passkeySignInFrom);
  }, 90_000);
});
