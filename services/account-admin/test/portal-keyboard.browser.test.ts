/**
 * The portal with the keyboard alone: signing in, then creating, resetting and deleting a
 * service account with Tab, Enter, Escape and typing, never a click. Focus moves into each
 * dialog when it opens (the secret-once dialog included), stays there while it is open, and
 * comes back to what opened it when it closes, across the reload that follows a change.
 */
import { describe, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { focused, shot, tabTo, useBrowser } from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let acme: TestTenant;
let page: Page;
const NAME = 'keyboard-import';
let clientId = '';

/** Resolves when the page has loaded again after a change (the list is server-rendered). */
const reloaded = () => page.waitForEvent('load');

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, page } = started);
  acme = await createTenant(platform);
});

describe('an Account Admin using only the keyboard', () => {
  test('When the admin types the account name and the credentials, pressing Enter, then the portal opens signed in', async () => {
    await page.goto(`${platform.portalUrl}/`);
    // Each page puts focus in its first field.
    expect((await focused(page)).id).toBe('tenant');
    await page.keyboard.type(acme.tenant);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/interaction/**`);
    expect((await focused(page)).id).toBe('email');
    await page.keyboard.type(acme.admin.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(acme.admin.password);
    await page.keyboard.press('Enter');

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
  });

  test('When the admin opens Create and presses Escape, then the dialog closes and focus is back on Create', async () => {
    await tabTo(page, 'Create service account');
    await page.keyboard.press('Enter');
    await page.locator('#create-dialog[open]').waitFor();
    expect(await focused(page)).toMatchObject({ id: 'create-name', dialog: 'create-dialog' });

    await page.keyboard.press('Escape');

    await page.locator('#create-dialog').waitFor({ state: 'hidden' });
    expect((await focused(page)).name).toBe('Create service account');
  });

  test('When the admin creates an account, then focus is inside the secret-once dialog and stays there; Escape closes it and focus returns to Create', async () => {
    await page.keyboard.press('Enter');
    await page.locator('#create-dialog[open]').waitFor();
    await page.keyboard.type(NAME);
    await page.keyboard.press('Enter');
    await page.locator('#secret-dialog[open]').waitFor();

    expect(await focused(page)).toMatchObject({ name: 'Copy', dialog: 'secret-dialog' });
    clientId = await page.locator('#secret-client-id').inputValue();
    // A modal dialog keeps Tab inside it: every stop of a full round is in the dialog.
    const stops = [];
    for (let i = 0; i < 6; i += 1) {
      await page.keyboard.press('Tab');
      stops.push(await focused(page));
    }
    expect(stops.filter((s) => s.dialog === 'secret-dialog').length).toBeGreaterThanOrEqual(4);
    expect(stops.filter((s) => s.dialog === null && s.id !== '')).toEqual([]);
    await shot(page, 'keyboard-1-secret-dialog');
    const load = reloaded();
    await page.keyboard.press('Escape');
    await load;

    await page.locator(`tr[data-client-id="${clientId}"]`).waitFor();
    expect((await focused(page)).name).toBe('Create service account');
    await expect(page.locator('#page-status').textContent()).resolves.toBe(
      `Service account “${NAME}” created.`,
    );
  });

  test('When the admin resets the secret with Tab and Enter, then the confirmation takes focus, the new secret is shown once, and closing returns focus to Reset secret', async () => {
    await tabTo(page, `Reset secret of ${NAME}`);
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog[open]').waitFor();
    // The safe choice first.
    expect(await focused(page)).toMatchObject({ name: 'Cancel', dialog: 'confirm-dialog' });
    await tabTo(page, 'Reset secret');
    await page.keyboard.press('Enter');
    await page.locator('#secret-dialog[open]').waitFor();
    expect((await focused(page)).dialog).toBe('secret-dialog');
    await expect(page.locator('#secret-client-id').inputValue()).resolves.toBe(clientId);

    await tabTo(page, 'I have saved the secret');
    const load = reloaded();
    await page.keyboard.press('Enter');
    await load;

    await page.locator(`tr[data-client-id="${clientId}"]`).waitFor();
    expect((await focused(page)).name).toBe(`Reset secret of ${NAME}`);
    await expect(page.locator('#page-status').textContent()).resolves.toBe(
      `The secret of “${NAME}” was reset.`,
    );
  });

  test('When the admin deletes the account with Tab and Enter, then it leaves the list and focus goes to Create', async () => {
    await tabTo(page, `Delete ${NAME}`);
    await page.keyboard.press('Enter');
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await focused(page)).toMatchObject({ name: 'Cancel', dialog: 'confirm-dialog' });
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ id: 'confirm-button', name: 'Delete' });
    const load = reloaded();
    await page.keyboard.press('Enter');
    await load;

    await page.getByText('No service accounts yet').waitFor();
    expect((await focused(page)).name).toBe('Create service account');
    await expect(page.locator('#page-status').textContent()).resolves.toBe(
      `Service account “${NAME}” deleted.`,
    );
    const res = await fetch(
      `${platform.internalUrl}/internal/v1/realms/${acme.tenant}/service-accounts/${clientId}`,
      { headers: { authorization: `Bearer ${platform.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}` } },
    );
    expect(res.status).toBe(404);
  });
});
