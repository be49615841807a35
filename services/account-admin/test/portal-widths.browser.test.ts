/**
 * Every portal page at a phone's, a tablet's and a desktop's width (360, 768 and 1280 px):
 * nothing scrolls sideways (`scrollWidth <= innerWidth`) and axe finds nothing serious, signed
 * out (the tenant picker, its errors, the realm's sign-in form), signed in as the tenant's only
 * Account Admin (every Settings page, an account's page, Activity, the error pages) and as a
 * View user (the 403 page). The data is as long as the portal allows where it can be (names,
 * emails, a workload's subject), so a page that fits here fits with real data.
 *
 * Also the phone-width screenshot of the README (docs/images/service-accounts-phone.png, written
 * with UPDATE_SCREENSHOTS=1 like the others, see portal-a11y.browser.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { clientKeyPair, REPO_ROOT, USER_PASSWORD } from '@plant/test-kit';
import type { Browser, Page } from 'playwright-core';
import {
  axeFindings,
  OUTPUT,
  signInThroughPortal,
  tabTo,
  useBrowser,
  type Where,
} from './helpers/browser.js';
import type { Platform } from './helpers/platform.js';

const WIDTHS = [360, 768, 1280] as const;
const HEIGHT = 800;
const LONG_NAME = 'nightly-import-of-the-whole-fern-and-orchid-catalogue-warehouse';
const LONG_EMAIL = 'a.very.long.name.of.a.plant.store.gardener@greenhouse-operations.example';

let platform: Platform;
let browser: Browser;
let page: Page;
let where: Where;
let tenant = '';
let clientId = '';

/** What sticks out to the right of the window: the page's width and the widest elements' selectors. */
function overflowOf(p: Page) {
  return p.evaluate(() => {
    const width = window.innerWidth;
    const wide = [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5)
      .filter((el) => !el.closest('.sr-only, [hidden], dialog:not([open])'))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')}`,
      );
    // A table's own box scrolling sideways is a sideways scroll too.
    const scrolling = [...document.querySelectorAll('.table-wrap')]
      .filter((el) => el.scrollWidth > el.clientWidth)
      .map((el) => el.querySelector('table')?.id ?? 'table');
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: width,
      wide,
      scrolling,
    };
  });
}

/**
 * Words a table cell breaks inside, as rendered: for each word (a run without spaces) whose
 * characters sit on more than one line, the place it broke. A break right after a hyphen or a
 * slash is where the browser breaks a name or a path anyway, after an email's @ where the page
 * allows it (token()); any other break counts unless the
 * word alone is wider than its cell and than a third of its table (a token so long that keeping
 * it whole would starve the other columns). An email or an address squeezed into a narrow
 * column beside a wide one counts.
 */
function brokenWordsOf(p: Page) {
  return p.evaluate(() => {
    type Broken = { table: string; label: string; word: string; at: string };
    /** The room a word may need before cutting it is fair: its cell's, and a third of its table. */
    const roomOf = (cell: HTMLElement) => {
      const style = getComputedStyle(cell);
      const padding = Number.parseFloat(style.paddingLeft) + Number.parseFloat(style.paddingRight);
      const table = cell.closest('table')?.clientWidth ?? 0;
      return Math.max(cell.clientWidth - padding, table / 3);
    };
    /** Where a word's characters move to a new line, other than after a hyphen, a slash or an @. */
    const cutOf = (node: Text, start: number, word: string, room: number) => {
      const range = document.createRange();
      const rects = [...word].map((_, i) => {
        range.setStart(node, start + i);
        range.setEnd(node, start + i + 1);
        return range.getBoundingClientRect();
      });
      if (rects.reduce((sum, r) => sum + r.width, 0) > room + 0.5) return undefined;
      const at = rects.findIndex(
        (r, i) => i > 0 && r.top > rects[i - 1]!.top + 1 && !/[-/@]/.test(word[i - 1]!),
      );
      return at > 0 ? `${word.slice(0, at)}|${word.slice(at)}` : undefined;
    };
    const broken: Broken[] = [];
    for (const cell of document.querySelectorAll<HTMLElement>('.table td, .table th')) {
      if (cell.closest('.sr-only, [hidden], dialog:not([open]), thead')) continue;
      const room = roomOf(cell);
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (
        let node = walker.nextNode() as Text | null;
        node;
        node = walker.nextNode() as Text | null
      ) {
        for (const match of (node.textContent ?? '').matchAll(/\S+/g)) {
          const at = cutOf(node, match.index, match[0], room);
          if (at === undefined) continue;
          broken.push({
            table: cell.closest('table')?.id ?? 'table',
            label: cell.dataset.label ?? cell.tagName.toLowerCase(),
            word: match[0],
            at,
          });
        }
      }
    }
    return broken;
  });
}

/** At each width: no sideways scroll and no serious axe finding; a screenshot of each into test-output/. */
async function expectFitsEveryWidth(p: Page, what: string): Promise<void> {
  for (const width of WIDTHS) {
    await p.setViewportSize({ width, height: HEIGHT });
    const overflow = await overflowOf(p);
    const fits = overflow.scrollWidth <= overflow.innerWidth && overflow.scrolling.length === 0;
    expect({ what, width, fits, overflow }).toEqual({ what, width, fits: true, overflow });
    expect({ what, width, findings: await axeFindings(p) }).toEqual({ what, width, findings: [] });
    // At a desktop's width a table has room for whole words: only a phone's cards may break a long token.
    if (width === 1280)
      expect({ what, width, broken: await brokenWordsOf(p) }).toEqual({ what, width, broken: [] });
    await p.screenshot({
      path: join(OUTPUT, `widths-${what.replace(/[^a-z0-9]+/gi, '-')}-${width}.png`),
      fullPage: true,
    });
  }
  await p.setViewportSize({ width: 1280, height: HEIGHT });
}

/** The portal's own API from inside the signed-in page (its CSRF token, its session). */
function portalApi(p: Page, method: string, path: string, body?: unknown) {
  return p.evaluate(
    async ([m, url, b]) => {
      const { api } = (await import('/assets/portal-api.js' as string)) as {
        api(
          method: string,
          path: string,
          body?: unknown,
        ): Promise<{ status: number; body: unknown }>;
      };
      return api(m as string, url as string, b);
    },
    [method, path, body] as const,
  );
}

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, browser, page } = started);
  tenant = await platform.createTenant('w');
  await platform.createUser(tenant, 'View', `viewer@${tenant}.test`);
  await platform.createUser(tenant, 'Edit', LONG_EMAIL);
  where = { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant };
});

describe('the portal at 360, 768 and 1280 px', () => {
  test('When a page is wider than the window, then the check says so (the check can fail)', async () => {
    await page.goto(`${platform.portalUrl}/`);
    await page.evaluate(() => {
      // Wide by its width attribute: the page's CSP refuses inline style.
      const wide = document.createElement('img');
      wide.alt = '';
      wide.width = 2000;
      wide.height = 1;
      wide.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
      document.querySelector('main')!.append(wide);
    });

    const overflow = await overflowOf(page);

    expect(overflow.scrollWidth).toBeGreaterThan(overflow.innerWidth);
  });

  test('When a table cell breaks a word it has room for, then the check says so (the check can fail)', async () => {
    await page.setViewportSize({ width: 1280, height: HEIGHT });
    await page.goto(`${platform.portalUrl}/`);
    await page.evaluate(() => {
      const wrap = document.createElement('div');
      wrap.className = 'table-wrap';
      wrap.innerHTML =
        '<table class="table" id="probe"><tbody><tr><td data-label="Name">sunflowers tulips roses ferns orchids lilies sunflowers tulips roses</td></tr></tbody></table>';
      document.querySelector('main')!.append(wrap);
      // CSSOM, not an inline style attribute: the page's CSP refuses those.
      const cell = wrap.querySelector('td')!;
      // Room for any one of the words on a line; break-all fills each line and cuts one instead.
      wrap.querySelector('table')!.style.width = '20ch';
      cell.style.wordBreak = 'break-all';
    });

    const broken = await brokenWordsOf(page);

    expect(broken.length).toBeGreaterThan(0);
    expect(broken.filter((b) => b.table !== 'probe' || b.label !== 'Name')).toEqual([]);
  });

  test('When a person is signed out, then the tenant picker, its errors, the realm sign-in form and an unknown path fit', async () => {
    for (const [path, what] of [
      ['/', 'tenant picker'],
      ['/login?tenant=no-such-tenant', 'unknown tenant'],
      ['/auth/callback?state=x', 'sign-in expired'],
      ['/nowhere', 'not found, signed out'],
    ] as const) {
      await page.goto(`${platform.portalUrl}${path}`);
      await expectFitsEveryWidth(page, what);
    }
    await page.goto(`${platform.portalUrl}/login?tenant=${tenant}`);
    await page.getByLabel('Email').waitFor();
    await expectFitsEveryWidth(page, 'realm sign-in form');
  }, 120_000);

  test('When the only Account Admin has service accounts, credentials, people and invitations, then every page fits', async () => {
    await signInThroughPortal(page, where, {
      email: `admin@${tenant}.test`,
      password: USER_PASSWORD,
    });
    const created = (await portalApi(page, 'POST', '/api/v1/service-accounts', {
      name: LONG_NAME,
    })) as {
      status: number;
      body: { client_id: string };
    };
    expect(created.status).toBe(201);
    clientId = created.body.client_id;
    for (const name of ['weekly-report', 'backup-agent'])
      await portalApi(page, 'POST', '/api/v1/service-accounts', { name });
    await expect(
      portalApi(page, 'PATCH', `/api/v1/service-accounts/${clientId}`, {
        role: 'Edit',
        grants: ['ferns', 'roses', 'orchids', 'tulips', 'carnivorous-plants'].map((tag) => ({
          tag,
          permission: 'edit',
        })),
      }),
    ).resolves.toMatchObject({ status: 200 });
    await expect(
      portalApi(page, 'POST', `/api/v1/service-accounts/${clientId}/keys`, {
        pem: clientKeyPair('ec').publicPem,
      }),
    ).resolves.toMatchObject({ status: 201 });
    await expect(
      portalApi(page, 'POST', `/api/v1/service-accounts/${clientId}/trusts`, {
        issuer: 'https://token.actions.githubusercontent.com',
        subject:
          'repo:plant-store-operations/nightly-import-of-the-fern-catalogue:ref:refs/heads/main',
        audience: `${platform.authUrl}/realms/${tenant}`,
      }),
    ).resolves.toMatchObject({ status: 201 });
    await expect(
      portalApi(page, 'POST', '/api/v1/users', { email: `invited.${LONG_EMAIL}`, role: 'Edit' }),
    ).resolves.toMatchObject({ status: 201 });

    for (const [path, what] of [
      ['/settings/service-accounts', 'service accounts'],
      [`/settings/service-accounts/${clientId}`, 'service account'],
      ['/settings/credentials', 'credentials'],
      ['/settings/people', 'people'],
      ['/activity', 'activity'],
      ['/settings/sessions', 'sessions'],
      ['/settings/security', 'security'],
      ['/settings/policy', 'policy'],
      ['/logout', 'sign out'],
      ['/nowhere', 'not found'],
      [
        '/settings/service-accounts/00000000-0000-4000-8000-000000000000',
        'unknown service account',
      ],
    ] as const) {
      await page.goto(`${platform.portalUrl}${path}`);
      await expectFitsEveryWidth(page, what);
    }
  }, 300_000);

  test('When the only Account Admin reads People and Security, then what they cannot do is not offered (the API refuses it too)', async () => {
    await page.goto(`${platform.portalUrl}/settings/people`);
    const buttonsOf = (email: string) =>
      page
        .locator(`tr[data-email="${email}"] button`)
        .evaluateAll((bs) => bs.map((b) => b.textContent!.trim()));

    // Themselves: the last active Account Admin, without a factor; the other person has no factor either.
    await expect(buttonsOf(`admin@${tenant}.test`)).resolves.toEqual([]);
    await expect(page.locator('#last-admin-note').textContent()).resolves.toContain(
      'The only Account Admin',
    );
    await expect(buttonsOf(LONG_EMAIL)).resolves.toEqual(['Change role', 'Disable', 'Remove']);
    const me = (await portalApi(page, 'GET', '/api/v1/me')) as { body: { sub: string } };
    const refused = await Promise.all([
      portalApi(page, 'PATCH', `/api/v1/users/${me.body.sub}`, { role: 'View' }),
      portalApi(page, 'DELETE', `/api/v1/users/${me.body.sub}`),
      portalApi(page, 'DELETE', `/api/v1/users/${me.body.sub}/factors`),
    ]);
    expect(refused.map((r) => r.status)).toEqual([409, 409, 409]);

    await page.goto(`${platform.portalUrl}/settings/security`);
    const offered = await page
      .locator('#main a.button')
      .evaluateAll((as) => as.map((a) => a.textContent!.trim()));
    expect(offered).not.toContain('New recovery codes');
    expect(offered).toContain('Add a passkey');
  });

  test('When the dialogs open at phone width, then they fit too', async () => {
    await page.setViewportSize({ width: 360, height: HEIGHT });
    await page.goto(`${platform.portalUrl}/settings/service-accounts/${clientId}`);
    for (const [button, dialog] of [
      ['Edit role and grants', '#edit-dialog'],
      ['Add key', '#key-dialog'],
      ['Add trust', '#trust-dialog'],
    ] as const) {
      await page.getByRole('button', { name: button, exact: false }).first().click();
      await page.locator(`${dialog}[open]`).waitFor();
      const overflow = await overflowOf(page);
      const fits = overflow.scrollWidth <= overflow.innerWidth;
      expect({ dialog, fits, overflow }).toEqual({ dialog, fits: true, overflow });
      await page.keyboard.press('Escape');
      await page.locator(dialog).waitFor({ state: 'hidden' });
    }
    await page.setViewportSize({ width: 1280, height: HEIGHT });
  });

  test('When the admin uses only the keyboard at phone width, then the navigation reaches every Settings page', async () => {
    await page.setViewportSize({ width: 360, height: HEIGHT });
    await page.goto(`${platform.portalUrl}/settings/service-accounts`);
    const png = await page.screenshot({ path: join(OUTPUT, 'docs-service-accounts-phone.png') });
    if (process.env.UPDATE_SCREENSHOTS === '1')
      writeFileSync(join(REPO_ROOT, 'docs', 'images', 'service-accounts-phone.png'), png);
    for (const [link, path] of [
      ['People', '/settings/people'],
      ['Activity', '/activity'],
      ['Credentials', '/settings/credentials'],
    ] as const) {
      // Each page load starts focus at the top again: Tab goes through the skip link and the navigation.
      await tabTo(page, link);
      const load = page.waitForURL(`${platform.portalUrl}${path}`);
      await page.keyboard.press('Enter');
      await load;
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(link);
    }
    await page.setViewportSize({ width: 1280, height: HEIGHT });
  });

  test('When a View user opens an Account Admin page, then the 403 page fits and leads back', async () => {
    const viewer = await (
      await browser.newContext({ viewport: { width: 1280, height: HEIGHT } })
    ).newPage();
    await signInThroughPortal(viewer, where, {
      email: `viewer@${tenant}.test`,
      password: USER_PASSWORD,
    });

    const res = await viewer.goto(`${platform.portalUrl}/settings/people`);

    expect(res?.status()).toBe(403);
    await expectFitsEveryWidth(viewer, 'forbidden');
    await viewer.getByRole('link', { name: 'Back to service accounts' }).click();
    await viewer.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    await viewer.context().close();
  });
});
