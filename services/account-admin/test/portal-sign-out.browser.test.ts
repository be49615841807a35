/**
 * Sign-out signs out: the portal's Sign out ends the portal session AND the realm's sign-in
 * session in that browser (RP-initiated logout with the sign-in's ID token as the hint), so the
 * next person at the same browser who opens the portal is asked for a password. Real browser
 * (Chromium), real token service and portal processes.
 */
import { describe, expect, test } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { shot, signInThroughPortal, useBrowser, VIEWPORT } from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let browser: Browser;
let acme: TestTenant;

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, browser } = started);
  acme = await createTenant(platform);
});

async function signedInPage(): Promise<Page> {
  const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
  await signInThroughPortal(
    page,
    { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant },
    acme.admin,
  );
  return page;
}

/** Where the browser settles after Sign out: the portal's picker, or a realm page still asking to confirm. */
async function signOutThroughUi(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  const settled = page
    .getByRole('heading', { name: 'Sign in to the admin portal' })
    .or(page.getByRole('heading', { name: 'Sign out?' }));
  await settled.waitFor();
  return settled.textContent() as Promise<string>;
}

describe('signing out of the portal', () => {
  test('When an Account Admin signs out through the portal and the portal is opened again in that browser, then the realm asks for the password (no silent way back into Settings)', async () => {
    const page = await signedInPage();

    const settledOn = await signOutThroughUi(page);
    await page.goto(`${platform.portalUrl}/login?tenant=${acme.tenant}`);

    expect(new URL(page.url()).pathname).toMatch(
      new RegExp(`^/realms/${acme.tenant}/interaction/[A-Za-z0-9_-]+$`),
    );
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    expect((await page.request.get(`${platform.portalUrl}/api/v1/me`)).status()).toBe(401);
    // One click: the realm's own confirmation is not left for the person to answer.
    expect(settledOn).toBe('Sign in to the admin portal');
    await shot(page, 'sign-out-1-password-asked-again');
    await page.context().close();
  });

  test('When the admin signs out and signs in again, then the new sign-in reaches Settings and its own Sign out also ends the realm session', async () => {
    const page = await signedInPage();
    await signOutThroughUi(page);
    await signInThroughPortal(
      page,
      { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant },
      acme.admin,
    );

    const settledOn = await signOutThroughUi(page);
    await page.goto(`${platform.portalUrl}/login?tenant=${acme.tenant}`);

    expect(settledOn).toBe('Sign in to the admin portal');
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await page.context().close();
  });
});
