/**
 * The token service's pages in a real browser, reached as a person reaches them from the portal:
 * they render with the portal's stylesheet and header (served by the token service, allowed by
 * its CSP: nothing blocked), say clearly what happened (wrong password, sign-in paused and until
 * when, unknown account, an error, an expired form, sign-out) and axe-core finds no serious or
 * critical violation on any of them.
 */
import { describe, expect, test } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, shot, signInThroughPortal, useBrowser } from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

const PER_ACCOUNT = 3;
let platform: Platform;
let acme: TestTenant;
let browser: Browser;
let page: Page;
/** Every resource the browser was refused (CSP) or could not load. */
const blocked: string[] = [];
let interactionUrl = '';

/** What makes the look: the header's and the primary button's computed styles, and the stylesheet's rules. */
function lookOf(p: Page) {
  return p.evaluate(() => {
    const style = (selector: string, props: string[]) => {
      const el = document.querySelector(selector);
      const computed = el ? getComputedStyle(el) : undefined;
      return Object.fromEntries(
        props.map((prop) => [prop, computed?.getPropertyValue(prop) ?? null]),
      );
    };
    return {
      rules: [...document.styleSheets].reduce((n, sheet) => n + sheet.cssRules.length, 0) > 50,
      body: style('body', ['font-family', 'background-color', 'color']),
      topbar: style('.topbar', ['background-color', 'border-bottom-color', 'display']),
      brand: style('.brand', ['font-weight', 'font-size']),
      primary: style('.button-primary', ['background-color', 'color', 'border-radius']),
    };
  });
}

useBrowser(
  {
    accountAdmin: true,
    serviceEnv: { 'token-service': { SIGN_IN_FAILURES_PER_ACCOUNT: String(PER_ACCOUNT) } },
  },
  async (started) => {
    ({ platform, browser, page } = started);
    acme = await createTenant(platform);
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) blocked.push(m.text());
    });
    page.on('requestfailed', (r) => blocked.push(`${r.url()}: ${r.failure()?.errorText}`));
    // The browser's own guess at an icon aside, every subresource of these pages loads.
    page.on('response', (r) => {
      if (
        r.request().resourceType() !== 'document' &&
        r.status() >= 400 &&
        !r.url().endsWith('/favicon.ico')
      )
        blocked.push(`${r.url()}: ${r.status()}`);
    });
  },
);

describe('the sign-in pages, as a person sees them', () => {
  test('When the portal sends a person to sign in, then the form has the portal look (stylesheet allowed by the CSP) and no serious accessibility violation', async () => {
    await page.goto(`${platform.portalUrl}/`);
    const portalLook = await lookOf(page);
    await page.getByLabel('Tenant name').fill(acme.tenant);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/interaction/**`);
    interactionUrl = page.url();

    expect(await lookOf(page)).toEqual(portalLook);
    expect(portalLook.rules).toBe(true);
    expect(blocked).toEqual([]);
    await expect(page.locator('.topbar .tenant').textContent()).resolves.toBe(
      `Tenant ${acme.tenant}`,
    );
    await expectAccessible(page, 'sign-in form');
    await shot(page, 'sign-in-1-form');
  });

  test('When the password is wrong, then an alert says so, the email stays and the password has focus; accessible', async () => {
    await page.getByLabel('Email').fill(acme.viewer.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();

    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Email or password is incorrect. Check both and try again.',
    );
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe(acme.viewer.email);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('password');
    await expectAccessible(page, 'sign-in form, wrong password');
    await shot(page, 'sign-in-2-wrong-password');
  });

  test('When the failures reach the limit, then the form says sign-in is paused and until when; accessible', async () => {
    for (let i = 1; i < PER_ACCOUNT; i += 1) {
      await page.getByLabel('Password').fill(`guess ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
    }
    const answer = page.waitForResponse((r) => r.url().endsWith('/login'));
    await page.getByLabel('Password').fill(acme.viewer.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const res = await answer;

    expect(res.status()).toBe(429);
    const minutes = Math.ceil(Number(res.headers()['retry-after']) / 60);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      new RegExp(
        `^Too many failed sign-ins\\. Signing in is paused for your protection: try again in ${minutes} minutes \\(after \\d\\d:\\d\\d UTC\\)\\.$`,
      ),
    );
    await expectAccessible(page, 'sign-in form, paused');
    await shot(page, 'sign-in-3-paused');
  });

  test('When the sign-in page is opened in another browser (no interaction cookie), then it says the sign-in expired and offers a new one; accessible', async () => {
    const other = await browser.newPage();
    await other.goto(interactionUrl);

    await expect(other.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'This sign-in has expired',
    );
    await expect(
      other.getByRole('link', { name: 'Sign in again' }).getAttribute('href'),
    ).resolves.toBe(`${platform.portalUrl}/login?tenant=${acme.tenant}`);
    await expectAccessible(other, 'sign-in expired');
    await other.close();
  });

  test('When a link names an account that does not exist, then a styled 404 page says so and leads to the portal; accessible', async () => {
    const res = await page.goto(
      `${platform.authUrl}/realms/no-such-${acme.tenant}/protocol/openid-connect/auth?client_id=portal`,
    );

    expect(res?.status()).toBe(404);
    expect((await lookOf(page)).rules).toBe(true);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Unknown account',
    );
    await expect(page.locator('main').textContent()).resolves.toContain(
      `There is no Plant Store tenant named no-such-${acme.tenant}.`,
    );
    await expect(
      page.getByRole('link', { name: 'Go to the admin portal' }).getAttribute('href'),
    ).resolves.toBe(`${platform.portalUrl}/`);
    await expectAccessible(page, 'unknown account');
    await shot(page, 'sign-in-4-unknown-account');
  });

  test('When the token service refuses a request (unknown client), then its error page has the same look and says why; accessible', async () => {
    const res = await page.goto(
      `${platform.authUrl}/realms/${acme.tenant}/protocol/openid-connect/auth?client_id=nobody&response_type=code&scope=openid`,
    );

    expect(res?.status()).toBe(400);
    expect((await lookOf(page)).rules).toBe(true);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Something went wrong',
    );
    await expectAccessible(page, 'error page');
    await shot(page, 'sign-in-5-error');
  });

  test('When a signed-in person signs out at the token service, then the confirmation and the signed-out pages have the same look; accessible', async () => {
    const fresh = await (await browser.newContext()).newPage();
    await fresh.goto(`${platform.portalUrl}/login?tenant=${acme.tenant}`);
    await fresh.getByLabel('Email').fill(acme.admin.email);
    await fresh.getByLabel('Password').fill(acme.admin.password);
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await fresh.waitForURL(`${platform.portalUrl}/settings/service-accounts`);

    await fresh.goto(`${platform.authUrl}/realms/${acme.tenant}/protocol/openid-connect/logout`);
    await expect(fresh.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign out?');
    await expectAccessible(fresh, 'sign-out confirmation');
    await fresh.getByRole('button', { name: 'Yes, sign me out' }).click();
    await fresh.getByRole('heading', { name: 'You are signed out' }).waitFor();

    expect((await lookOf(fresh)).rules).toBe(true);
    await expectAccessible(fresh, 'signed out');
    await fresh.context().close();
  });

  test('When a person signs out through the portal, then the realm page that carries it through has the same look, runs its one script without a CSP refusal and is accessible', async () => {
    const fresh = await (await browser.newContext()).newPage();
    const refused: string[] = [];
    fresh.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await signInThroughPortal(
      fresh,
      { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant },
      acme.admin,
    );
    // The page's own post is answered 204 once: the browser stays on the page, so it can be read.
    let posted = () => {};
    const postedByPage = new Promise<void>((resolve) => (posted = resolve));
    await fresh.route('**/protocol/openid-connect/logout/confirm', async (route) => {
      await route.fulfill({ status: 204 });
      posted();
    });

    await fresh.getByRole('button', { name: 'Sign out' }).click();
    await postedByPage;

    await expect(fresh.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Signing you out',
    );
    await expect(fresh.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
    expect((await lookOf(fresh)).rules).toBe(true);
    expect(refused).toEqual([]);
    await expectAccessible(fresh, 'signing out');
    await shot(fresh, 'sign-in-6-signing-out');
    await fresh.unrouteAll();
    await fresh.reload();
    await fresh.waitForURL(`${platform.portalUrl}/`);
    await fresh.context().close();
  });
});
