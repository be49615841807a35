/**
 * Second factors in a real browser, at the realm the portal sends a person to: an Account
 * Admin made to enrol by the tenant's policy adds a passkey with Chromium's DevTools virtual
 * authenticator (CDP `WebAuthn.addVirtualAuthenticator`), then signs in with it and no
 * password; another enrols an authenticator app and signs in with codes this test computes
 * (RFC 6238 with node:crypto, independent of the server's library). Every new page is used
 * with the keyboard alone and has no serious axe-core finding.
 *
 * Passkeys need a domain for their relying party ID (an IP address is refused by browsers),
 * so the token service is reached as `localhost` here.
 */
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from '@jest/globals';
import { freePort, USER_PASSWORD } from '@plant/test-kit';
import type { CDPSession, Page } from 'playwright-core';
import { expectAccessible, focused, shot, tabTo, useBrowser } from './helpers/browser.js';
import type { Platform } from './helpers/platform.js';

let platform: Platform;
let page: Page;
let cdp: CDPSession;
let tenant: string;
let authUrl: string;
/** The Account Admin who enrols the page's passkey. */
let passkeyHolder: string;
/** The page's virtual authenticator: a platform passkey store with user verification. */
let authenticatorId: string;

const tokenPort = await freePort();
const internalPort = await freePort();

useBrowser(
  {
    accountAdmin: true,
    authUrl: `http://localhost:${tokenPort}`,
    ports: { 'token-service': [{ port: tokenPort, internalPort }] },
  },
  async (started) => {
    ({ platform, page } = started);
    authUrl = `http://localhost:${tokenPort}`;
    tenant = await platform.createTenant('mfa');
    // The production default: Account Admins must hold a second factor.
    await platform.cli('tenant', 'policy', tenant, '--admin-factor', 'required');
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

/** RFC 6238 (SHA-1, 6 digits, 30 s) from a base32 key, at `now`. */
function totp(base32: string, now = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(now / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** Waits for a new 30 s step with a few seconds ahead of it (a code is spent once per step). */
async function nextStep(): Promise<void> {
  const step = Math.floor(Date.now() / 30_000);
  while (Math.floor(Date.now() / 30_000) === step || (Date.now() / 1000) % 30 < 1) await sleep(250);
}

/** The portal's tenant picker, then the realm's sign-in form. */
async function toSignInForm(p: Page): Promise<void> {
  await p.goto(`${platform.portalUrl}/`);
  await p.getByLabel('Tenant name').fill(tenant);
  await p.getByRole('button', { name: 'Continue' }).click();
  await p.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
}

async function withPassword(p: Page, email: string): Promise<void> {
  await toSignInForm(p);
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(USER_PASSWORD);
  await p.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signedOut(p: Page): Promise<void> {
  await p.context().clearCookies();
}

describe('passkeys at the realm', () => {
  test('When an Account Admin without a factor signs in where the policy requires one, then the enrolment page asks for one; a passkey added with the keyboard alone finishes the sign-in', async () => {
    passkeyHolder = await platform.createUser(tenant, 'Account Admin');

    await withPassword(page, passkeyHolder);
    await page.getByRole('heading', { name: 'Add a second factor' }).waitFor();
    await expectAccessible(page, 'enrolment page');
    await shot(page, 'factors-1-enrol');
    await tabTo(page, 'Add a passkey');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
  });

  test('When the person comes back, then "Use a passkey" on the sign-in form signs them in without a password', async () => {
    await signedOut(page);
    await toSignInForm(page);
    await expectAccessible(page, 'sign-in form with passkey');
    await tabTo(page, 'Use a passkey');
    await page.keyboard.press('Enter');

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
  });

  test('When the person signs in with the password instead, then the passkey is asked as the second factor', async () => {
    await signedOut(page);
    await withPassword(page, passkeyHolder);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await expectAccessible(page, 'factor page with a passkey');
    await page.getByRole('button', { name: 'Use a passkey' }).click();

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
  });
});

describe('an authenticator app at the realm', () => {
  test('When an Account Admin sets up an authenticator app, then a code the test computes confirms it, ten recovery codes are shown once, and the next sign-in asks for a code; all by keyboard', async () => {
    const email = await platform.createUser(tenant, 'Account Admin');
    const p = await page.context().browser()!.newPage();

    await withPassword(p, email);
    await p.getByRole('heading', { name: 'Add a second factor' }).waitFor();
    const key = await p.getByLabel('Key').inputValue();
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    await tabTo(p, 'Code from the app');
    await p.keyboard.type(totp(key));
    await p.keyboard.press('Enter');
    await p.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = await p
      .getByRole('list', { name: 'Recovery codes' })
      .locator('code')
      .allTextContents();
    expect(codes).toHaveLength(10);
    await expectAccessible(p, 'recovery codes');
    await shot(p, 'factors-2-recovery-codes');
    expect((await focused(p)).name).toBe('I have saved them: continue');
    await p.keyboard.press('Enter');
    await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);

    await p.context().clearCookies();
    await withPassword(p, email);
    await p.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await expectAccessible(p, 'factor page');
    await shot(p, 'factors-3-code');
    expect((await focused(p)).id).toBe('code');
    await nextStep();
    await p.keyboard.type(totp(key));
    await p.keyboard.press('Enter');
    await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);

    await p.context().clearCookies();
    await withPassword(p, email);
    await p.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await p.keyboard.type(codes[0]!);
    await p.keyboard.press('Enter');
    await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    await p.close();
    // A new code comes every 30 s: the second sign-in waits for one.
  }, 120_000);
});

describe('the people policy in the portal', () => {
  test('When an Account Admin turns the second-factor requirement off on Settings → Policy with the keyboard alone, then it is saved and said so; accessible', async () => {
    await page.goto(`${platform.portalUrl}/settings/policy`);
    await page.getByRole('heading', { name: 'Policy', level: 1 }).waitFor();
    await expect(
      page.getByLabel('Require a second factor for Account Admins').isChecked(),
    ).resolves.toBe(true);
    await expectAccessible(page, 'policy page');
    await shot(page, 'factors-4-policy');

    await tabTo(page, 'Require a second factor for Account Admins');
    await page.keyboard.press('Space');
    await tabTo(page, 'Save policy');
    await page.keyboard.press('Enter');

    await page.getByText('Saved: Account Admins may sign in with a password alone.').waitFor();
    const settings = await page.evaluate(async () =>
      (await fetch('/api/v1/settings/people')).json(),
    );
    expect(settings).toEqual({ require_admin_second_factor: false });
  });
});
