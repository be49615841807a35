/**
 * The portal script's side of step-up, in Chromium: a Reset secret refused with 401
 * `insufficient_user_authentication` sends the browser through GET /step-up and the realm,
 * and on return the call is sent again once and its answer shown as the original's (the new
 * secret in the secret-once dialog); a second refusal is shown, never another round trip.
 *
 * The realm's second-factor check itself belongs to the token service; here the session
 * record is given its fresh factor time through the session store while the browser is at
 * the realm (what the callback records after a factor sign-in), so this file runs whatever
 * the realm offers. portal-step-up.browser.test.ts runs the same through the realm's TOTP.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { TEST_SECRETS } from '@plant/test-kit';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { createSessionStore, type SessionStore } from '../src/sessions/session-store.js';
import { shot, signInThroughPortal, useBrowser, type Where } from './helpers/browser.js';
import { createTenant, type Platform, type TestTenant } from './helpers/platform.js';

let platform: Platform;
let acme: TestTenant;
let page: Page;
let where: Where;
let redis: Redis;
let store: SessionStore;

useBrowser({ accountAdmin: true }, async (started) => {
  ({ platform, page } = started);
  acme = await createTenant(platform);
  where = { portalUrl: platform.portalUrl, authUrl: platform.authUrl, tenant: acme.tenant };
  redis = new Redis(platform.redisUrl);
  store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
  await signInThroughPortal(page, where, acme.admin);
});
afterAll(() => redis?.quit());

/** The browser's portal session id (its HttpOnly cookie, read from the browser's jar). */
async function sessionId(): Promise<string> {
  const cookies = await page.context().cookies(platform.portalUrl);
  return cookies.find((c) => c.name === 'aa_session')!.value;
}

async function setFactor(factorAt: number | undefined): Promise<void> {
  const id = await sessionId();
  const session = (await store.get(id))!;
  const { factorAt: _old, ...rest } = session;
  await store.update(id, {
    ...rest,
    stepUpRequired: true,
    ...(factorAt === undefined ? {} : { factorAt }),
  });
}

async function resetThroughPortal(name: string): Promise<void> {
  const list = `${platform.portalUrl}/settings/service-accounts`;
  // The page may still be on its way to this same page from the step before (closing the
  // secret-once dialog loads the list again): then that load is the one to wait for.
  await page.goto(list).catch(async (err: unknown) => {
    if (!String(err).includes('interrupted by another navigation')) throw err;
    await page.waitForURL(list);
  });
  await page.getByRole('button', { name: `Reset secret of ${name}` }).click();
  await page.locator('#confirm-dialog[open]').waitFor();
  await page.locator('#confirm-button').click();
}

async function passRealmForm(): Promise<void> {
  await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/**`);
  await page.getByLabel('Email').fill(acme.admin.email);
  await page.getByLabel('Password').fill(acme.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('a sensitive action that needs the second factor again', () => {
  test('When Reset secret is refused for step-up, then after the realm the reset is sent again once and the new secret is shown, and no call or secret is left in sessionStorage', async () => {
    const account = await platform.createServiceAccount(acme.tenant);
    await setFactor(Date.now() - 11 * 60_000);

    await resetThroughPortal(account.name);
    await page.waitForURL(`${platform.authUrl}/realms/${acme.tenant}/**`);
    await shot(page, 'step-up-1-realm');
    // What the callback records after the realm verified a factor.
    await setFactor(Date.now());
    await passRealmForm();

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    await page.locator('#secret-dialog[open]').waitFor();
    await shot(page, 'step-up-2-replayed');
    expect(await page.locator('#secret-client-id').inputValue()).toBe(account.clientId);
    const secret = await page.locator('#secret-value').inputValue();
    expect(secret).not.toBe(account.secret);
    const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage }));
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain('pending-call');
    const tokenRes = await fetch(
      `${platform.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: account.clientId,
          client_secret: secret,
        }).toString(),
      },
    );
    expect(tokenRes.status).toBe(200);
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
  });

  test('When the factor is still not fresh after the realm, then the replayed call’s refusal is shown and the browser stays on the page', async () => {
    const account = await platform.createServiceAccount(acme.tenant);
    await setFactor(Date.now() - 11 * 60_000);

    await resetThroughPortal(account.name);
    await passRealmForm();

    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
    const alert = page.locator('#replay-error');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('This action needs your second factor again');
    expect(new URL(page.url()).pathname).toBe('/settings/service-accounts');
    await setFactor(undefined);
  });
});
