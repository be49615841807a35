/**
 * Settings → Credentials and an account's leak and quota cards in a real browser
 * (playwright-core driving Debian's Chromium) against the services as processes: an Account
 * Admin sets the tenant's policy, sees the secrets about to expire and the unused accounts,
 * gives an account its own quota, and reads where a leaked secret was found; a View user sees
 * the policy without a form. Screenshots go to services/account-admin/test-output/ (gitignored).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { LeakReporter, leakedToken, TEST_DATABASE_URL, type ServiceAccount } from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  createTenant,
  startTokenService,
  type Platform,
  type TestTenant,
} from './helpers/platform.js';

const OUTPUT = join(import.meta.dirname, '..', 'test-output');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DAY_MS = 86_400_000;

let platform: Platform;
let acme: TestTenant;
let reporter: LeakReporter;
let auth: Knex;
let browser: Browser;
let page: Page;
let soon: ServiceAccount;
let idle: ServiceAccount;
let leaked: ServiceAccount;

const shot = (p: Page, name: string) =>
  p.screenshot({ path: join(OUTPUT, `credential-policy-${name}.png`), fullPage: true });

async function signIn(p: Page, user: { email: string; password: string }): Promise<void> {
  await p.goto(`${platform.portalUrl}/`);
  await p.getByLabel('Tenant name').fill(acme.tenant);
  await p.getByRole('button', { name: 'Continue' }).click();
  await p.getByLabel('Email').fill(user.email);
  await p.getByLabel('Password').fill(user.password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  reporter = new LeakReporter(mkdtempSync(join(tmpdir(), 'portal-leak-keys-')));
  platform = await startTokenService({
    plantStores: 0,
    accountAdmin: true,
    serviceEnv: { 'token-service': { SECRET_SCANNING_GITHUB_KEYS: reporter.documentPath } },
  });
  acme = await createTenant(platform);
  soon = await platform.createServiceAccount(acme.tenant, { name: 'expires-soon' });
  idle = await platform.createServiceAccount(acme.tenant, { name: 'long-idle' });
  leaked = await platform.createServiceAccount(acme.tenant, { name: 'leaky-job' });
  // Backdated: a secret 20 days old, an account made 120 days ago and never used.
  auth = createDatabase({ connectionString: TEST_DATABASE_URL, schema: 'auth', poolMax: 1 });
  const aged = new Date(Date.now() - 20 * DAY_MS);
  await auth('service_account_secrets').where({ sub: soon.clientId }).update({ created_at: aged });
  // The account row mirrors its newest secret (for replicas of the previous release).
  await auth('service_accounts').where({ sub: soon.clientId }).update({ secret_created_at: aged });
  await auth('principals')
    .where({ sub: idle.clientId })
    .update({ created_at: new Date(Date.now() - 120 * DAY_MS) });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await signIn(page, acme.admin);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await auth?.destroy();
  await platform?.close();
});

describe('Settings → Credentials in the portal', () => {
  test('When an Account Admin sets a maximum age of 30 days, then the page lists the secret expiring within 14 days and the account unused for 90 days', async () => {
    await page.getByRole('link', { name: 'Credentials' }).click();
    await page.waitForURL(`${platform.portalUrl}/settings/credentials`);
    await page.getByLabel('Maximum secret age (days)').fill('30');
    await page.getByLabel('Report it only').check();
    await page.getByLabel('Grants per minute').fill('100');
    await page.getByLabel('Mode').selectOption('enforce');
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Save policy' }).click(),
    ]);

    const facts = await page.locator('#policy-facts').textContent();
    expect(facts).toContain('30 days');
    expect(facts).toContain('Reported only');
    expect(facts).toContain('100 a minute, enforce');
    const expiring = (await page.locator('#expiring').textContent()) ?? '';
    expect(expiring).toContain('expires-soon');
    expect(expiring).not.toContain('leaky-job');
    expect(await page.locator('#unused').textContent()).toContain('long-idle');
    await shot(page, 'settings');
  });

  test("When a leaked secret is reported and an account gets its own quota, then the account's page shows where it leaked and its quota", async () => {
    const report = reporter.report([
      leakedToken(leaked.secret, 'https://github.com/acme/app/blob/main/.env'),
    ]);
    const answer = await fetch(`${platform.authUrl}/secret-scanning/github`, {
      method: 'POST',
      headers: report.headers,
      body: report.body,
    });
    expect(answer.status).toBe(200);

    await page.goto(`${platform.portalUrl}/settings/service-accounts/${leaked.clientId}`);
    const leaks = await page.locator('#leaks').textContent();
    expect(leaks).toContain('https://github.com/acme/app/blob/main/.env');
    expect(leaks).toContain('GitHub secret scanning');
    expect(leaks).toContain('Reported only');
    expect(await page.locator('#leak-note').textContent()).toContain(
      'It still works: reset it now',
    );
    expect(await page.locator('#quota-text').textContent()).toContain("the tenant's default");
    await page.getByLabel('Grants per minute').fill('5');
    await page.getByLabel('Mode').selectOption('log');
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Save quota' }).click(),
    ]);

    expect(await page.locator('#quota-text').textContent()).toContain('5 a minute, log (its own)');
    await shot(page, 'account');
  });

  test('When a View user opens Settings → Credentials, then the policy shows without a form', async () => {
    const viewerPage = await (await browser.newContext()).newPage();
    await signIn(viewerPage, acme.viewer);
    await viewerPage.goto(`${platform.portalUrl}/settings/credentials`);

    expect(await viewerPage.locator('#policy-facts').textContent()).toContain('30 days');
    expect(await viewerPage.locator('form[data-form="credential-policy"]').count()).toBe(0);
  });
});
