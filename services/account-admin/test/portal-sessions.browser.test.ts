/**
 * Settings → Sessions in Chromium, with the keyboard alone: a person signed in from two
 * browsers sees both (this one marked), ends the other, and the other browser is signed out at
 * its next page; axe finds no serious violation on the page or its dialog.
 */
import { describe, expect, test } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import {
  expectAccessible,
  focused,
  shot,
  signInThroughPortal,
  tabTo,
  useBrowser,
  VIEWPORT,
  type Where,
} from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let acme: TestTenant;
let page: Page;
let other: BrowserContext;
let otherPage: Page;
let where: Where;

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, page } = started);
  acme = await createTenant(platform);
  where = { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant };
  other = await started.browser.newContext({
    viewport: VIEWPORT,
    userAgent:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  });
  otherPage = await other.newPage();
  await signInThroughPortal(otherPage, where, acme.admin);
  await signInThroughPortal(page, where, acme.admin);
});

/** The rows of the sessions table: browser cell text and whether it is this session. */
const rows = (p: Page) =>
  p.locator('#sessions tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      browser: tr.querySelector('th')!.textContent!.trim(),
      current: (tr as HTMLElement).dataset.current === 'true',
    })),
  );

describe('the Sessions page', () => {
  test('When the admin reaches Sessions with the keyboard, then both sessions are listed and this one is marked, with no serious axe finding', async () => {
    await page.locator('#main').focus();
    await tabTo(page, 'Sessions', { back: true });
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.portalUrl}/settings/sessions`);

    const listed = await rows(page);
    expect(listed).toHaveLength(2);
    expect(listed.filter((r) => r.current)).toHaveLength(1);
    expect(listed.find((r) => !r.current)!.browser).toBe('Chrome 131 on Windows');
    expect(listed.find((r) => r.current)!.browser).toMatch(/This session/);
    await shot(page, 'sessions-1-list');
    await expectAccessible(page, 'Sessions');
  });

  test('When the admin ends the other session with Tab and Enter, then a confirmation asks first, the list shows one session, and the other browser is signed out', async () => {
    const endOther = await page
      .locator('#sessions tr[data-current="false"] button')
      .getAttribute('aria-label');
    await tabTo(page, endOther!);
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog[open]').waitFor();
    expect((await focused(page)).dialog).toBe('confirm-dialog');
    await expectAccessible(page, 'Sessions: end a session');
    await tabTo(page, 'End session');
    const reloaded = page.waitForEvent('load');

    await page.keyboard.press('Enter');
    await reloaded;

    expect(await rows(page)).toEqual([
      { browser: expect.stringMatching(/This session/), current: true },
    ]);
    await expect(page.locator('#page-status').textContent()).resolves.toMatch(/was ended/);
    await otherPage.goto(`${platform.portalUrl}/settings/service-accounts`);
    expect(new URL(otherPage.url()).pathname).toBe('/');
    await expect(otherPage.getByLabel('Tenant name').count()).resolves.toBe(1);
  });

  test('When the admin presses Escape in the confirmation, then nothing ends and focus returns to the button', async () => {
    await tabTo(page, 'Sign out of this session');
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog[open]').waitFor();

    await page.keyboard.press('Escape');

    await page.locator('#confirm-dialog').waitFor({ state: 'hidden' });
    expect((await focused(page)).name).toBe('Sign out of this session');
    expect(await rows(page)).toHaveLength(1);
  });

  test('When the admin opens Security with the keyboard, then the ways to add a factor go through /step-up back to Security (no new recovery codes without a factor), and axe finds no serious violation', async () => {
    await page.locator('#main').focus();
    await tabTo(page, 'Security', { back: true });
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.portalUrl}/settings/security`);

    const links = await page
      .locator('#main a.button')
      .evaluateAll((as) => as.map((a) => [a.textContent!.trim(), a.getAttribute('href')]));
    expect(links).toEqual([
      ['Add a passkey', '/step-up?action=enrol-passkey&return_to=%2Fsettings%2Fsecurity'],
      [
        'Set up an authenticator app',
        '/step-up?action=enrol-totp&return_to=%2Fsettings%2Fsecurity',
      ],
      ['Your sessions', '/settings/sessions'],
    ]);
    await shot(page, 'security-1-page');
    await expectAccessible(page, 'Security');
    await tabTo(page, 'Add a passkey');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/**`);
    const asked = new URL(page.url());
    expect(asked.pathname.startsWith(`/realms/${acme.tenant}/`)).toBe(true);
  });
});
