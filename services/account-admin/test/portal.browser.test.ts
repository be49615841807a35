/**
 * The portal in a real browser (playwright-core driving Debian's Chromium) against all three
 * services started as processes: an Account Admin signs in, creates a service account, reads
 * its secret from the page, uses it at the token endpoint and the Plant Store, resets it,
 * deletes it; a View user sees the list without actions. Screenshots of every step go to
 * services/account-admin/test-output/ (gitignored). Keyboard-only use, accessibility (axe-core)
 * and the walkthrough's screenshots (docs/walkthrough.md): the other `*.browser.test.ts` files.
 */
import { describe, expect, test } from '@jest/globals';
import type { ServiceProcess } from '@plant/test-kit';
import type { Browser, Page } from 'playwright-core';
import { shot, signInThroughPortal as signIn, useBrowser, VIEWPORT } from './helpers/browser.js';
import { clientCredentialsToken } from './helpers/browser-client.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let plantStore: ServiceProcess;
let authUrl: string;
let portalUrl: string;
let acme: TestTenant;
let browser: Browser;
let page: Page;

/** What the admin's steps hand to the next ones. */
const state: {
  clientId?: string;
  secret?: string;
  newSecret?: string;
  tokenBeforeReset?: string;
  tokenAfterReset?: string;
} = {};
const NAME = 'nightly-import';

async function token(
  clientId: string,
  secret: string,
): Promise<{ status: number; accessToken?: string }> {
  const res = await clientCredentialsToken(authUrl, acme.tenant, clientId, secret);
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { accessToken: body.access_token } : {}) };
}

let plantId = 7_000;
function createPlant(accessToken: string): Promise<Response> {
  plantId += 1;
  return fetch(`${plantStore.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: plantId, name: `Fern ${plantId}`, tag: 'ferns' }),
  });
}

const signInThroughPortal = (p: Page, user: { email: string; password: string }, prefix: string) =>
  signIn(p, { portalUrl, authUrl, tenant: acme.tenant }, user, prefix);

useBrowser(
  { plantStores: 1, accountAdmin: true, serviceEnv: { 'account-admin': { LOG_LEVEL: 'info' } } },
  async (started) => {
    ({ platform, browser, page } = started);
    ({ authUrl, portalUrl } = platform);
    plantStore = platform.plantStores[0]!;
    acme = await createTenant(platform);
  },
);

describe('an Account Admin in the portal', () => {
  test('When the admin signs in with the tenant name, then the Service accounts page shows an empty list with a Create button', async () => {
    await signInThroughPortal(page, acme.admin, '01-admin');

    await expect(
      page.getByRole('heading', { name: 'Service accounts', level: 1 }).isVisible(),
    ).resolves.toBe(true);
    await expect(page.getByText('No service accounts yet').isVisible()).resolves.toBe(true);
    await expect(
      page.getByRole('button', { name: 'Create service account' }).isVisible(),
    ).resolves.toBe(true);
    await shot(page, '02-admin-service-accounts-empty');
  });

  test('When the admin creates a service account, then the dialog takes focus and the client_id and secret are shown once with a warning', async () => {
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.locator('#create-dialog[open]').waitFor();
    await expect(
      page.evaluate('document.activeElement && document.activeElement.id'),
    ).resolves.toBe('create-name');
    await page.keyboard.type(NAME);
    await shot(page, '03-create-dialog');
    await page.getByRole('button', { name: 'Confirm' }).click();

    const secretDialog = page.locator('#secret-dialog[open]');
    await secretDialog.waitFor();
    await expect(
      secretDialog.getByText('You will not see this secret again.').isVisible(),
    ).resolves.toBe(true);
    state.clientId = await page.locator('#secret-client-id').inputValue();
    state.secret = await page.locator('#secret-value').inputValue();
    expect(state.clientId).toMatch(/^sa-[0-9a-f]{32}$/);
    expect(state.secret.length).toBeGreaterThan(40);
    await shot(page, '04-secret-shown-once');
  });

  test('When the secret dialog is closed, then the table lists the account and the page never shows the secret again', async () => {
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    await page.waitForLoadState('load');
    await page.locator(`tr[data-client-id="${state.clientId}"]`).waitFor();
    await page.reload();

    const row = page.locator(`tr[data-client-id="${state.clientId}"]`);
    await expect(row.locator('th a').textContent()).resolves.toBe(NAME);
    await expect(row.locator('th code.client-id').textContent()).resolves.toBe(state.clientId);
    await expect(row.locator('td[data-label="Role"]').textContent()).resolves.toBe('View');
    await expect(row.locator('td[data-label="Created by"]').textContent()).resolves.toBe(
      acme.admin.email,
    );
    expect(await page.content()).not.toContain(state.secret);
    await shot(page, '05-list-after-create');
  });

  test('When the admin creates a second account with the same name, then the dialog says the name is taken', async () => {
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.locator('#create-name').fill(NAME.toUpperCase());
    await page.getByRole('button', { name: 'Confirm' }).click();

    const error = page.locator('#create-error');
    await error.waitFor({ state: 'visible' });
    await expect(error.textContent()).resolves.toBe(
      'A service account with this name already exists',
    );
    await shot(page, '06-duplicate-name');
    await page.keyboard.press('Escape');
  });

  test('When the secret is used at the token endpoint and the account is given Edit, then it can create a plant', async () => {
    const viewToken = await token(state.clientId!, state.secret!);
    expect(viewToken.status).toBe(200);
    expect((await createPlant(viewToken.accessToken!)).status).toBe(403);

    const row = page.locator(`tr[data-client-id="${state.clientId}"]`);
    await row.getByRole('button', { name: `Edit role and grants of ${NAME}` }).click();
    await page.locator('#edit-dialog[open]').waitFor();
    await page
      .getByLabel('Edit', { exact: false })
      .and(page.locator('input[value="Edit"]'))
      .check();
    await page.locator('#edit-grants').fill('ferns, roses');
    await shot(page, '07-edit-role-and-grants');
    await page.getByRole('button', { name: 'Save' }).click();
    // The page reloads after the change: wait for the new row.
    await page.locator(`tr[data-client-id="${state.clientId}"][data-role="Edit"]`).waitFor();
    await expect(
      page.locator(`tr[data-client-id="${state.clientId}"] td[data-label="Grants"]`).textContent(),
    ).resolves.toBe('fernsroses');
    await shot(page, '08-list-after-edit');

    const editToken = await token(state.clientId!, state.secret!);
    expect(editToken.status).toBe(200);
    const created = await createPlant(editToken.accessToken!);
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ name: `Fern ${plantId}`, tag: 'ferns' });
    state.tokenBeforeReset = editToken.accessToken!;
  });

  test('When the admin resets the secret after confirming, then a new secret is shown, the old one is refused and the new one works', async () => {
    const row = page.locator(`tr[data-client-id="${state.clientId}"]`);
    await row.getByRole('button', { name: `Reset secret of ${NAME}` }).click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await shot(page, '09-reset-confirm');
    await page.locator('#confirm-button').click();
    await page.locator('#secret-dialog[open]').waitFor();
    state.newSecret = await page.locator('#secret-value').inputValue();
    await shot(page, '10-new-secret-shown-once');
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    await page.waitForLoadState('load');

    expect(state.newSecret).not.toBe(state.secret);
    expect((await token(state.clientId!, state.secret!)).status).toBe(401);
    expect((await createPlant(state.tokenBeforeReset!)).status).toBe(401);
    const fresh = await token(state.clientId!, state.newSecret);
    expect(fresh.status).toBe(200);
    expect((await createPlant(fresh.accessToken!)).status).toBe(200);
    state.tokenAfterReset = fresh.accessToken!;
  });

  test('When the admin deletes the account after confirming, then it leaves the list and its token is refused by the Plant Store at the next call', async () => {
    // A second account stays, so the View user later sees a list.
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.locator('#create-name').fill('weekly-report');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.locator('#secret-dialog[open]').waitFor();
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    await page.waitForLoadState('load');
    await page.locator('tr[data-name="weekly-report"]').waitFor();

    const row = page.locator(`tr[data-client-id="${state.clientId}"]`);
    await row.getByRole('button', { name: `Delete ${NAME}` }).click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await shot(page, '11-delete-confirm');
    await page.locator('#confirm-button').click();
    await page.waitForLoadState('load');
    await page.locator(`tr[data-client-id="${state.clientId}"]`).waitFor({ state: 'detached' });
    await shot(page, '12-list-after-delete');

    expect((await createPlant(state.tokenAfterReset!)).status).toBe(401);
    expect((await token(state.clientId!, state.newSecret!)).status).toBe(401);
  });

  test('When the admin opens Activity, then every action and their own sign-in are listed newest first with who, what and from where', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.waitForURL(`${portalUrl}/activity`);

    const rows = page.locator('#activity tbody tr');
    const whats = await rows.locator('td[data-label="What"]').allTextContents();
    expect(whats.map((w) => w.split(' (')[0])).toEqual([
      'Deleted',
      'Created',
      'Reset the secret of',
      'Changed role or grants of',
      'Created',
      'Signed in',
    ]);
    await expect(rows.last().locator('td[data-label="What"]').textContent()).resolves.toBe(
      'Signed in (with password, to the portal)',
    );
    const who = await rows.locator('td[data-label="Who"]').allTextContents();
    expect(new Set(who)).toEqual(new Set([acme.admin.email]));
    expect(await page.content()).not.toContain(state.newSecret!);
    await shot(page, '13-activity');
  });

  test('When the portal is used at phone width, then the list is readable and the actions reachable', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${portalUrl}/settings/service-accounts`);
    await expect(
      page.getByRole('button', { name: 'Reset secret of weekly-report' }).isVisible(),
    ).resolves.toBe(true);
    await shot(page, '14-admin-phone-width');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('When the admin signs out, then the portal pages need a new sign-in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The realm ends its own session too (no second question: the hint is the portal's sign-in), then returns to the portal.
    await page.waitForURL(`${portalUrl}/`);
    await expect(
      page.getByRole('heading', { name: 'Sign in to the admin portal' }).isVisible(),
    ).resolves.toBe(true);
    await shot(page, '15-signed-out');
    const res = await page.request.get(`${portalUrl}/api/v1/me`);
    expect(res.status()).toBe(401);
  });
});

describe('a View user in the portal', () => {
  test('When a View user signs in, then the list is shown read-only without any action', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    const viewer = await context.newPage();

    await signInThroughPortal(viewer, acme.viewer, '16-viewer');

    await viewer.locator('tr[data-name="weekly-report"]').waitFor();
    await expect(viewer.getByText('You have read-only access.').isVisible()).resolves.toBe(true);
    await expect(
      viewer.getByRole('button', { name: 'Create service account' }).count(),
    ).resolves.toBe(0);
    await expect(
      viewer
        .locator('[data-action="reset"], [data-action="delete"], [data-action="edit"], dialog')
        .count(),
    ).resolves.toBe(0);
    await shot(viewer, '17-viewer-read-only');
    await viewer.setViewportSize({ width: 390, height: 844 });
    await shot(viewer, '18-viewer-phone-width');
    await context.close();
  });
});
