/**
 * Settings → People in Chromium, with the keyboard alone: invite (the link shown once, with its
 * copy button and the e-mail status), the invitee accepting the link in their own browser and
 * signing in, then change role → disable → enable → remove, each through its dialog; axe finds
 * no serious violation on the page and its dialogs.
 */
import { describe, expect, test } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import {
  expectAccessible,
  focused,
  shot,
  signInThroughPortal,
  tabTo,
  useBrowser,
  VIEWPORT,
} from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let browser: Browser;
let acme: TestTenant;
let page: Page;
let link = '';
const INVITEE = 'new.colleague@example.test';
const INVITEE_PASSWORD = 'colleague password 1';
const row = () => page.locator(`tr[data-email="${INVITEE}"][data-person-id]`);
const reloaded = () => page.waitForEvent('load');

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, page, browser } = started);
  acme = await createTenant(platform);
});

/** Tabs to `name`, presses Enter and waits for the dialog to open. */
async function openWith(name: string, dialog: string): Promise<void> {
  await tabTo(page, name);
  await page.keyboard.press('Enter');
  await page.locator(`#${dialog}[open]`).waitFor();
}

/** In the open confirmation: Tab from Cancel to the action, Enter, and wait for the reload. */
async function confirmWithKeyboard(button: string): Promise<void> {
  expect(await focused(page)).toMatchObject({ name: 'Cancel', dialog: 'people-confirm-dialog' });
  await page.keyboard.press('Tab');
  expect((await focused(page)).name).toBe(button);
  const load = reloaded();
  await page.keyboard.press('Enter');
  await load;
}

describe('an Account Admin managing people with the keyboard', () => {
  test('When the admin follows People in the header, then the page lists the people and passes axe', async () => {
    await signInThroughPortal(
      page,
      { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant },
      acme.admin,
    );
    await tabTo(page, 'People');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${platform.portalUrl}/settings/people`);

    await expect(page.locator('#people tbody tr').count()).resolves.toBe(3);
    await expectAccessible(page, 'People');
    await shot(page, 'people-1-list');
  });

  test('When the admin invites a colleague, then the link is shown once with a copy button and the e-mail status, and the invitation is pending', async () => {
    await openWith('Invite a person', 'invite-dialog');
    expect(await focused(page)).toMatchObject({ id: 'invite-email', dialog: 'invite-dialog' });
    await expectAccessible(page, 'Invite dialog');
    await page.keyboard.type(INVITEE);
    await page.keyboard.press('Enter');
    await page.locator('#link-dialog[open]').waitFor();

    expect(await focused(page)).toMatchObject({ name: 'Copy', dialog: 'link-dialog' });
    link = await page.locator('#link-value').inputValue();
    expect(link).toMatch(
      new RegExp(
        `^${platform.authUrl}/realms/${acme.tenant}/invitation\\?token=[A-Za-z0-9_-]{43}$`,
      ),
    );
    await expect(page.locator('#link-email-status').textContent()).resolves.toContain(
      'Copy the link and send it yourself',
    );
    await expectAccessible(page, 'Invitation link dialog');
    await shot(page, 'people-2-link');
    const load = reloaded();
    await page.keyboard.press('Escape');
    await load;

    await expect(page.locator('#link-value').inputValue()).resolves.toBe('');
    expect((await focused(page)).name).toBe('Invite a person');
    await expect(page.locator('#page-status').textContent()).resolves.toBe(`${INVITEE} invited.`);
    await expect(
      page.locator(`tr[data-invitation-id][data-email="${INVITEE}"]`).count(),
    ).resolves.toBe(1);
  });

  test('When the colleague opens the link in their browser and sets a password, then they sign in to the portal', async () => {
    const invitee = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    await invitee.goto(link);
    await expectAccessible(invitee, 'Invitation page');
    await shot(invitee, 'people-3-set-password');
    await invitee.getByLabel('New password').fill(INVITEE_PASSWORD);
    await invitee.getByLabel('Repeat the password').fill(INVITEE_PASSWORD);
    await invitee.getByRole('button', { name: 'Set password and continue' }).click();
    await invitee.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/interaction/**`);
    await invitee.getByLabel('Email').fill(INVITEE);
    await invitee.getByLabel('Password').fill(INVITEE_PASSWORD);
    await invitee.getByRole('button', { name: 'Sign in' }).click();

    await invitee.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    await invitee.context().close();
    await page.reload();
    await expect(row().getAttribute('data-role')).resolves.toBe('View');
  });

  test('When the admin changes the role to Edit, then the row shows it and focus is back on Change role', async () => {
    await openWith(`Change role of ${INVITEE}`, 'role-dialog');
    expect(await focused(page)).toMatchObject({ dialog: 'role-dialog' });
    await expectAccessible(page, 'Role dialog');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, 'Save');
    const load = reloaded();
    await page.keyboard.press('Enter');
    await load;

    await expect(row().getAttribute('data-role')).resolves.toBe('Edit');
    expect((await focused(page)).name).toBe(`Change role of ${INVITEE}`);
    await expect(page.locator('#page-status').textContent()).resolves.toBe(
      `${INVITEE} is now Edit.`,
    );
  });

  test('When the admin disables and enables the colleague, then the status follows each time', async () => {
    await openWith(`Disable ${INVITEE}`, 'people-confirm-dialog');
    await expectAccessible(page, 'Confirm dialog');
    await confirmWithKeyboard('Disable');
    await expect(row().getAttribute('data-status')).resolves.toBe('disabled');
    expect((await focused(page)).name).toBe(`Enable ${INVITEE}`);
    await shot(page, 'people-4-disabled');

    await openWith(`Enable ${INVITEE}`, 'people-confirm-dialog');
    await confirmWithKeyboard('Enable');

    await expect(row().getAttribute('data-status')).resolves.toBe('active');
  });

  test('When the admin removes the colleague, then the row is gone and focus goes to Invite', async () => {
    await openWith(`Remove ${INVITEE}`, 'people-confirm-dialog');
    await confirmWithKeyboard('Remove');

    await expect(row().count()).resolves.toBe(0);
    expect((await focused(page)).name).toBe('Invite a person');
    await expect(page.locator('#page-status').textContent()).resolves.toBe(`${INVITEE} removed.`);
  });

  test("When the admin opens Activity, then the realm's acceptance and the colleague's sign-in sit among the admin's own People actions, newest first", async () => {
    await page.goto(`${platform.portalUrl}/activity`);

    const rows = await page.locator('#activity tbody tr td[data-label="What"]').allTextContents();
    const texts = rows.map((t) => t.replace(/\s+/g, ' ').trim());
    expect(texts.slice(0, 7)).toEqual([
      'Removed',
      'Enabled',
      'Disabled',
      'Changed the role of (role View → Edit)',
      'Signed in (with password, to the portal)',
      'Accepted the invitation:',
      'Invited',
    ]);
    const signedIn = page.locator('#activity tbody tr').nth(4);
    await expect(signedIn.locator('td[data-label="Who"]').textContent()).resolves.toBe(INVITEE);
    await expect(signedIn.locator('td[data-label="From"]').textContent()).resolves.toMatch(
      /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/,
    );
    // The admin's own sign-in, the first thing this tenant's portal saw, is the oldest entry.
    await expect(
      page.locator('#activity tbody tr').last().locator('td[data-label="What"]').textContent(),
    ).resolves.toContain('Signed in');
    await expectAccessible(page, 'Activity with People events');
    await page.goto(`${platform.portalUrl}/settings/people`);
  });

  test('When the only admin looks at their own row, then no change of role or access is offered and the row says why', async () => {
    const own = page.locator('tr', { hasText: acme.admin.email });
    await own.locator('#last-admin-note').waitFor();

    await expect(own.locator('#last-admin-note').textContent()).resolves.toContain(
      'The only Account Admin',
    );
    await expect(
      page.getByRole('button', { name: `Change role of ${acme.admin.email}` }).count(),
    ).resolves.toBe(0);
    await expectAccessible(page, 'People with the only admin locked');
  });
});
