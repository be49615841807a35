/**
 * Every portal page and dialog in a real browser, checked by axe-core (WCAG 2.1 A/AA and best
 * practices: no serious or critical violation), in the `demo` tenant docs/walkthrough.md
 * starts from, on a Postgres cluster of this file's own (so the tenant can be named `demo`).
 *
 * It also takes the walkthrough's screenshots (docs/walkthrough.md) (the Service Accounts page, the secret-once dialog, the
 * People page): always into test-output/, and into docs/images/ when UPDATE_SCREENSHOTS=1, so the committed
 * images are the ones this test made (`UPDATE_SCREENSHOTS=1 pnpm test --selectProjects
 * account-admin --testPathPatterns portal-a11y`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { eventually, REPO_ROOT, USER_PASSWORD } from '@plant/test-kit';
import type { Browser, Page } from 'playwright-core';
import {
  axeFindings,
  expectAccessible,
  OUTPUT,
  signInThroughPortal,
  useBrowser,
  VIEWPORT,
  type Where,
} from './helpers/browser.js';
import type { Platform } from './helpers/platform.js';

const DOCS_IMAGES = join(REPO_ROOT, 'docs', 'images');
const ADMIN = { email: 'admin@demo.example', password: USER_PASSWORD };
const VIEWER = { email: 'viewer@demo.example', password: USER_PASSWORD };

let platform: Platform;
let where: Where;
let browser: Browser;
let page: Page;
const first = { clientId: '', secret: '' };

/** A screenshot for the README: the viewport as a person sees it. */
async function docsShot(p: Page, name: string): Promise<Buffer> {
  const png = await p.screenshot({ path: join(OUTPUT, `docs-${name}.png`) });
  if (process.env.UPDATE_SCREENSHOTS === '1') writeFileSync(join(DOCS_IMAGES, `${name}.png`), png);
  return png;
}

/** A PNG's width and height (its IHDR chunk). */
const pngSize = (png: Buffer) => ({
  signature: png.subarray(0, 8).toString('hex'),
  width: png.readUInt32BE(16),
  height: png.readUInt32BE(20),
});

async function createThroughPortal(name: string): Promise<{ clientId: string; secret: string }> {
  await page.getByRole('button', { name: 'Create service account' }).click();
  await page.locator('#create-name').fill(name);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.locator('#secret-dialog[open]').waitFor();
  return {
    clientId: await page.locator('#secret-client-id').inputValue(),
    secret: await page.locator('#secret-value').inputValue(),
  };
}

async function closeSecretDialog(): Promise<void> {
  const load = page.waitForEvent('load');
  await page.getByRole('button', { name: 'I have saved the secret' }).click();
  await load;
}

useBrowser({ accountAdmin: true, privatePostgres: true }, async (started) => {
  ({ platform, browser, page } = started);
  // As `npm start` seeds it, but with the test password.
  await platform.cli(
    'tenant',
    'create',
    'demo',
    '--admin-email',
    ADMIN.email,
    '--admin-password',
    ADMIN.password,
    '--admin-factor',
    'optional',
  );
  await platform.createUser('demo', 'View', VIEWER.email);
  where = { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: 'demo' };
});

describe('accessibility of the portal', () => {
  test('When the check meets a page with a known violation, then it reports it (the check can fail)', async () => {
    await page.goto(`${platform.portalUrl}/`);
    await page.evaluate(() =>
      document.querySelector('main')!.insertAdjacentHTML('beforeend', '<img src="data:,">'),
    );

    expect((await axeFindings(page)).map((f) => f.id)).toContain('image-alt');
  });

  test('When a person starts at the portal, then the tenant picker, its errors and the sign-in message pages are accessible', async () => {
    for (const [path, what] of [
      ['/', 'tenant picker'],
      ['/login?tenant=no-such-demo', 'tenant picker, unknown account'],
      ['/login?tenant=Not%20a%20name', 'tenant picker, invalid name'],
      ['/auth/callback?state=x', 'sign-in expired'],
    ] as const) {
      await page.goto(`${platform.portalUrl}${path}`);
      await expectAccessible(page, what);
    }
  });

  test('When the admin of the demo tenant signs in and creates a service account, then the list, the Create dialog and the secret-once dialog are accessible', async () => {
    await signInThroughPortal(page, where, ADMIN);
    await expectAccessible(page, 'service accounts, empty');

    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.locator('#create-dialog[open]').waitFor();
    await expectAccessible(page, 'create dialog');
    await page.locator('#create-name').fill('nightly-import');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.locator('#secret-dialog[open]').waitFor();
    Object.assign(first, {
      clientId: await page.locator('#secret-client-id').inputValue(),
      secret: await page.locator('#secret-value').inputValue(),
    });

    await expectAccessible(page, 'secret-once dialog');
    expect(pngSize(await docsShot(page, 'secret-once'))).toEqual({
      signature: '89504e470d0a1a0a',
      ...VIEWPORT,
    });
    await closeSecretDialog();
  });

  test('When the demo tenant has a few service accounts, then the list, its dialogs, Activity and the sign-out page are accessible', async () => {
    // Used once, so the list shows when (the token service records use within seconds).
    await platform.grantToken('demo', first);
    for (const name of ['weekly-report', 'backup-agent']) {
      await createThroughPortal(name);
      await closeSecretDialog();
    }
    await page.getByRole('button', { name: 'Edit role and grants of nightly-import' }).click();
    await page.locator('#edit-dialog[open]').waitFor();
    await expectAccessible(page, 'edit dialog');
    await page.locator('#edit-dialog input[value="Edit"]').check();
    await page.locator('#edit-grants').fill('ferns, roses');
    const load = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Save' }).click();
    await load;
    await eventually(async () => {
      await page.reload();
      return (
        (await page
          .locator(`tr[data-client-id="${first.clientId}"] td[data-label="Last used"] time`)
          .count()) === 1
      );
    }, 'the list shows when nightly-import was last used');

    await page.locator(`tr[data-client-id="${first.clientId}"][data-role="Edit"]`).waitFor();
    await expect(page.locator('#service-accounts tbody tr').count()).resolves.toBe(3);
    await expectAccessible(page, 'service accounts, three');
    expect(pngSize(await docsShot(page, 'service-accounts'))).toEqual({
      signature: '89504e470d0a1a0a',
      ...VIEWPORT,
    });
    await page.getByRole('button', { name: 'Delete weekly-report' }).click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await expectAccessible(page, 'confirm dialog');
    await page.keyboard.press('Escape');

    await page.getByRole('link', { name: 'Activity' }).click();
    await page.waitForURL(`${platform.portalUrl}/activity`);
    await expectAccessible(page, 'activity');
    await page.goto(`${platform.portalUrl}/settings/people`);
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    await expectAccessible(page, 'people');
    expect(pngSize(await docsShot(page, 'people'))).toEqual({
      signature: '89504e470d0a1a0a',
      ...VIEWPORT,
    });
    await page.goto(`${platform.portalUrl}/logout`);
    await expectAccessible(page, 'sign-out page');
  });

  test('When the list is read at phone width, then it is still accessible', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${platform.portalUrl}/settings/service-accounts`);

    await expectAccessible(page, 'service accounts, phone width');
    await page.setViewportSize(VIEWPORT);
  });

  test('When a View user signs in, then the read-only list is accessible', async () => {
    const viewer = await (await browser.newContext({ viewport: VIEWPORT })).newPage();

    await signInThroughPortal(viewer, where, VIEWER);

    await viewer.locator('#read-only-note').waitFor();
    await expectAccessible(viewer, 'service accounts, read-only');
    await viewer.context().close();
  });
});
