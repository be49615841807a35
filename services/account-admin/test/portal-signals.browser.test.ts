/**
 * "Receive Shared Signals" in a real browser (playwright-core driving Debian's Chromium) against
 * the token service and account-admin as processes: the Account Admin ticks the box in the edit
 * dialog, and from then on the account's grant may ask for the Shared Signals scopes; unticking
 * takes that away again. The admin's session comes from an HTTP sign-in, put into the browser
 * as its cookies (as portal-dpop.browser.test.ts does).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ServiceAccount } from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signIn } from './helpers/browser-client.js';
import {
  createTenant,
  startTokenService,
  type Platform,
  type TestTenant,
} from './helpers/platform.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let platform: Platform;
let acme: TestTenant;
let account: ServiceAccount;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  platform = await startTokenService({ plantStores: 0, accountAdmin: true });
  acme = await createTenant(platform);
  account = await platform.createServiceAccount(acme.tenant, { name: 'siem-robot' });
  const session = await signIn(platform.portalUrl, acme.tenant, acme.admin);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
  });
  const context = await browser.newContext();
  await context.addCookies(
    session
      .cookie()
      .split('; ')
      .filter(Boolean)
      .map((pair) => ({
        name: pair.slice(0, pair.indexOf('=')),
        value: pair.slice(pair.indexOf('=') + 1),
        url: `${platform.portalUrl}/`,
      })),
  );
  page = await context.newPage();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

async function setSignals(checked: boolean): Promise<void> {
  await page.goto(`${platform.portalUrl}/settings/service-accounts`);
  await page
    .locator(`tr[data-client-id="${account.clientId}"]`)
    .getByRole('button', { name: 'Edit role and grants of siem-robot' })
    .click();
  await page.locator('#edit-dialog[open]').waitFor();
  await page.getByLabel('Receive Shared Signals').setChecked(checked);
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .locator(`tr[data-client-id="${account.clientId}"][data-signals="${String(checked)}"]`)
    .waitFor();
}

async function signalsGrant(): Promise<{ status: number; scope?: string; error?: string }> {
  const res = await fetch(
    `${platform.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: account.clientId,
        client_secret: account.secret,
        scope: 'ssf.manage ssf.read',
      }).toString(),
    },
  );
  const body = (await res.json()) as { scope?: string; error?: string };
  // An error names the refused scope too (oidc-provider): only the error code is compared.
  return res.status === 200
    ? { status: res.status, scope: body.scope }
    : { status: res.status, error: body.error };
}

describe('Portal: receive Shared Signals', () => {
  test('When the Account Admin ticks "Receive Shared Signals", then the account may ask for ssf.manage and ssf.read; unticked, it may not', async () => {
    expect(await signalsGrant()).toEqual({ status: 400, error: 'invalid_scope' });
    await setSignals(true);
    await expect(
      page
        .locator(`tr[data-client-id="${account.clientId}"] td[data-label="Tokens"]`)
        .textContent(),
    ).resolves.toContain('Signals');
    expect(await signalsGrant()).toEqual({ status: 200, scope: 'ssf.manage ssf.read' });
    await setSignals(false);
    expect(await signalsGrant()).toEqual({ status: 400, error: 'invalid_scope' });
  }, 60_000);
});
