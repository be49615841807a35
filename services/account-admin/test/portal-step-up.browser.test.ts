/**
 * Step-up before a reset, through the real realm, in Chromium: an Account Admin of a tenant
 * whose policy requires a second factor enrols an authenticator app at their first sign-in
 * (the realm shows the TOTP secret for manual entry; this test computes the codes with
 * `otpauth`, RFC 6238), and later, their factor older than 10 minutes, Reset secret sends them
 * to the realm, which asks only for a code (the realm still knows them), then back to the
 * portal, where the reset is sent again and the new secret shown.
 *
 * It follows the realm's side of the shared design (acr `urn:plantstore:acr:factor`, the
 * enrolment inside the first sign-in, the code-only step-up): it passes once that side is in.
 * The factor's age is moved back through the session store, as 11 minutes of waiting would.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { eventually, TEST_SECRETS } from '@plant/test-kit';
import { Redis } from 'ioredis';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { createSessionStore, type SessionStore } from '../src/sessions/session-store.js';
import { expectAccessible, shot, useBrowser } from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let acme: TestTenant;
let page: Page;
let redis: Redis;
let store: SessionStore;
let totp: TOTP;
/** The TOTP period of the last code entered: a code is good once, so the next waits for a new period. */
let lastCounter = -1;

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, page } = started);
  acme = await createTenant(platform);
  // The production default: Account Admins must hold a second factor.
  await platform.cli('tenant', 'policy', acme.tenant, '--admin-factor', 'required');
  redis = new Redis(platform.redisUrl);
  store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
});
afterAll(() => redis?.quit());

/** The TOTP secret the realm's enrolment page shows for manual entry. */
async function enrolmentSecret(): Promise<string> {
  await page.getByRole('heading', { name: 'Add a second factor' }).waitFor();
  return page.getByLabel('Key').inputValue();
}

/** A code of a period no code was entered in yet. */
async function freshCode(): Promise<string> {
  await eventually(
    () => Math.floor(Date.now() / 1000 / totp.period) !== lastCounter,
    'a new TOTP period',
    (totp.period + 5) * 1000,
  );
  lastCounter = Math.floor(Date.now() / 1000 / totp.period);
  return totp.generate();
}

async function enterCode(label: string | RegExp): Promise<void> {
  const field = page.getByLabel(label).first();
  await field.fill(await freshCode());
  await field.press('Enter');
}

async function sessionId(): Promise<string> {
  const cookies = await page.context().cookies(platform.portalUrl);
  return cookies.find((c) => c.name === 'aa_session')!.value;
}

describe('step-up through the realm', () => {
  test('When an Account Admin first signs in where the policy requires a factor, then they enrol an authenticator app in the sign-in and land in the portal with a fresh factor', async () => {
    await page.goto(`${platform.portalUrl}/login?tenant=${acme.tenant}`);
    await page.getByLabel('Email').fill(acme.admin.email);
    await page.getByLabel('Password').fill(acme.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    totp = new TOTP({ secret: Secret.fromBase32(await enrolmentSecret()) });
    await shot(page, 'step-up-totp-enrol');
    await enterCode('Code from the app');
    // Recovery codes, shown once: acknowledged.
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'I have saved them: continue' }).click();

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    const session = (await store.get(await sessionId()))!;
    expect(session.stepUpRequired).toBe(true);
    expect(Date.now() - session.factorAt!).toBeLessThan(10 * 60_000);
  }, 120_000);

  test('When the factor is older than 10 minutes, then Reset secret goes to the realm, which asks only for a code, and the new secret is shown on return', async () => {
    const account = await platform.createServiceAccount(acme.tenant);
    const id = await sessionId();
    const session = (await store.get(id))!;
    await store.update(id, { ...session, factorAt: Date.now() - 11 * 60_000 });
    await page.goto(`${platform.portalUrl}/settings/service-accounts`);
    await page.getByRole('button', { name: `Reset secret of ${account.name}` }).click();
    await page.locator('#confirm-button').click();

    await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/**`);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await page.getByLabel('Password').count()).toBe(0);
    await shot(page, 'step-up-totp-code');
    await enterCode(/code/i);

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    await page.locator('#secret-dialog[open]').waitFor();
    expect(await page.locator('#secret-client-id').inputValue()).toBe(account.clientId);
    expect(Date.now() - (await store.get(id))!.factorAt!).toBeLessThan(10 * 60_000);
  }, 120_000);

  test('When the admin opens Security, then the authenticator app is listed, and removing it (with the fresh factor) takes it away and signs them out: the page reloads to the sign-in', async () => {
    const { sub } = (await store.get(await sessionId()))!;
    await page.goto(`${platform.portalUrl}/settings/security`);
    const row = page.locator('tr[data-factor-id]');
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.first().locator('td[data-label="Kind"]').textContent()).toBe(
      'Authenticator app',
    );
    await expectAccessible(page, 'Security with a factor');
    await row
      .first()
      .getByRole('button', { name: /^Remove / })
      .click();
    await page.locator('#confirm-button').click();

    // A factor taken away ends every session of the person, this one too.
    await page.waitForURL((url) => url.pathname === '/');
    const factors = await fetch(
      `${platform.internalUrl}/internal/v1/realms/${acme.tenant}/users/${sub}/factors`,
      { headers: { authorization: `Bearer ${platform.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}` } },
    );
    expect(((await factors.json()) as { factors: unknown[] }).factors).toEqual([]);
  });
});
