/**
 * "Acts for others" in a real browser (playwright-core driving Debian's Chromium) against the
 * token service and account-admin as processes: the Account Admin allows a service account to
 * act for others at the Plant Store on its page, and from then on its token exchange succeeds;
 * removing it (after the confirmation) takes that away again. The admin's session comes from
 * an HTTP sign-in, put into the browser as its cookies (as portal-signals.browser.test.ts does).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ServiceAccount } from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signIn } from './helpers/browser-client.js';
import {
  createTenant,
  startTokenService,
  type Platform,
  PLANT_STORE_AUDIENCE,
  type TestTenant,
} from './helpers/platform.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let platform: Platform;
let acme: TestTenant;
let account: ServiceAccount;
let caller: ServiceAccount;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  platform = await startTokenService({ plantStores: 0, accountAdmin: true });
  acme = await createTenant(platform);
  account = await platform.createServiceAccount(acme.tenant, { name: 'middle-robot' });
  caller = await platform.createServiceAccount(acme.tenant, { name: 'caller-robot' });
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

async function exchange(): Promise<string | undefined> {
  const subject = await platform.grantToken(acme.tenant, caller);
  const res = await fetch(
    `${platform.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: account.clientId,
        client_secret: account.secret,
        subject_token: subject,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: PLANT_STORE_AUDIENCE,
      }).toString(),
    },
  );
  const answer = (await res.json()) as { scope?: string; error?: string };
  return res.status === 200 ? answer.scope : answer.error;
}

describe('Portal: acts for others', () => {
  test('When the Account Admin allows an API on the account page, then its token exchange succeeds; removed, it is refused', async () => {
    expect(await exchange()).toBe('unauthorized_client');
    await page.goto(`${platform.portalUrl}/settings/service-accounts/${account.clientId}`);
    await page.getByRole('button', { name: 'Allow an API' }).click();
    await page.locator('#delegation-dialog[open]').waitFor();
    await page.getByLabel('API').fill(PLANT_STORE_AUDIENCE);
    await page.getByLabel('At most').selectOption('plants:read');
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.locator(`#delegations tr[data-audience="${PLANT_STORE_AUDIENCE}"]`).waitFor();
    expect(await exchange()).toBe('plants:read');
    await page
      .getByRole('button', { name: `Stop acting for others at ${PLANT_STORE_AUDIENCE}` })
      .click();
    await page.getByRole('button', { name: 'Remove', exact: true }).last().click();
    await page.getByText('It acts for no one.').waitFor();
    expect(await exchange()).toBe('unauthorized_client');
  }, 60_000);
});
