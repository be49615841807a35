/**
 * "Require sender-constrained tokens" in a real browser (playwright-core driving Debian's
 * Chromium) against the token service, a Plant Store and account-admin as processes: the Account
 * Admin ticks the box in the edit dialog, and from then on the account gets tokens only with a
 * DPoP proof, which the Plant Store takes only with one; unticking brings bearer tokens back.
 * The admin's session comes from an HTTP sign-in (portal.browser.test.ts signs in through the
 * pages), put into the browser as its cookies.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { dpopKey, PLANT_STORE_AUDIENCE, type ServiceAccount } from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { clientCredentialsToken, signIn } from './helpers/browser-client.js';
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
  platform = await startTokenService({ plantStores: 1, accountAdmin: true });
  acme = await createTenant(platform);
  account = await platform.createServiceAccount(acme.tenant, { name: 'dpop-robot' });
  const session = await signIn(platform.portalUrl, acme.tenant, acme.admin);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext();
  const cookies = session
    .cookie()
    .split('; ')
    .filter(Boolean)
    .map((pair) => ({
      name: pair.slice(0, pair.indexOf('=')),
      value: pair.slice(pair.indexOf('=') + 1),
      url: `${platform.portalUrl}/`,
    }));
  await context.addCookies(cookies);
  page = await context.newPage();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

async function setDpop(checked: boolean): Promise<void> {
  await page.goto(`${platform.portalUrl}/settings/service-accounts`);
  await page
    .locator(`tr[data-client-id="${account.clientId}"]`)
    .getByRole('button', { name: 'Edit role and grants of dpop-robot' })
    .click();
  await page.locator('#edit-dialog[open]').waitFor();
  await page.getByLabel('Require sender-constrained tokens (DPoP)').setChecked(checked);
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .locator(`tr[data-client-id="${account.clientId}"][data-dpop="${String(checked)}"]`)
    .waitFor();
}

async function listPlants(token: string, scheme: string, proof?: string): Promise<number> {
  const res = await fetch(`${platform.plantStores[0]!.url}/plants`, {
    headers: {
      authorization: `${scheme} ${token}`,
      ...(proof === undefined ? {} : { dpop: proof }),
    },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('Require sender-constrained tokens, in the portal', () => {
  test('When the admin ticks the box and saves, then the row says DPoP, grants need a proof, and the Plant Store takes the bound token only with one', async () => {
    await setDpop(true);
    await expect(
      page
        .locator(`tr[data-client-id="${account.clientId}"] td[data-label="Tokens"]`)
        .textContent(),
    ).resolves.toBe('DPoP');

    const refused = await clientCredentialsToken(
      platform.authUrl,
      acme.tenant,
      account.clientId,
      account.secret,
    );
    expect({
      status: refused.status,
      error: ((await refused.json()) as { error: string }).error,
    }).toEqual({ status: 400, error: 'invalid_dpop_proof' });
    const key = dpopKey();
    const token = await platform.grantToken(acme.tenant, account, {}, { dpop: key });
    expect(
      await listPlants(
        token,
        'DPoP',
        key.proof({ htm: 'GET', htu: `${PLANT_STORE_AUDIENCE}/plants`, token }),
      ),
    ).toBe(200);
    expect(await listPlants(token, 'Bearer')).toBe(401);
  });

  test('When the admin unticks it, then the account gets bearer tokens again', async () => {
    await setDpop(false);
    await expect(
      page
        .locator(`tr[data-client-id="${account.clientId}"] td[data-label="Tokens"]`)
        .textContent(),
    ).resolves.toBe('Bearer');
    expect(await listPlants(await platform.grantToken(acme.tenant, account), 'Bearer')).toBe(200);
  });
});
