/**
 * An account's credentials in a real browser (playwright-core driving Debian's Chromium)
 * against all three services as processes: an Account Admin opens a service account, reads
 * when to use which credential, adds a key and a trusted workload (each then gets a token the
 * Plant Store accepts), removes the secret, disables and enables the account, removes the key;
 * the Activity page shows each change; a View user sees the credentials without actions.
 * Screenshots go to services/account-admin/test-output/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  assertionGrantBody,
  clientAssertion,
  clientKeyPair,
  eventually,
  startWorkloadIssuer,
  type ServiceAccount,
  type ServiceProcess,
  type WorkloadIssuer,
} from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { clientCredentialsToken } from './helpers/browser-client.js';
import {
  createTenant,
  startTokenService,
  type Platform,
  type TestTenant,
} from './helpers/platform.js';

const OUTPUT = join(import.meta.dirname, '..', 'test-output');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SUBJECT = 'system:serviceaccount:shop:importer';

let platform: Platform;
let plantStore: ServiceProcess;
let acme: TestTenant;
let account: ServiceAccount;
let cluster: WorkloadIssuer;
let browser: Browser;
let page: Page;
const key = clientKeyPair('ec');

const shot = (p: Page, name: string) =>
  p.screenshot({ path: join(OUTPUT, `credentials-${name}.png`), fullPage: true });
const issuer = () => `${platform.authUrl}/realms/${acme.tenant}`;

async function grant(body: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${issuer()}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const parsed = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(parsed.access_token ? { token: parsed.access_token } : {}) };
}
const byKey = () =>
  grant(
    assertionGrantBody(
      account.clientId,
      clientAssertion({ clientId: account.clientId, audience: issuer(), key, kid: 'deploy-key' }),
    ),
  );
const byWorkload = () =>
  grant(
    assertionGrantBody(account.clientId, cluster.mint({ subject: SUBJECT, audience: issuer() })),
  );
const plants = (token: string) =>
  fetch(`${plantStore.url}/plants`, { headers: { authorization: `Bearer ${token}` } }).then(
    (r) => r.status,
  );

async function signIn(p: Page, user: { email: string; password: string }): Promise<void> {
  await p.goto(`${platform.portalUrl}/`);
  await p.getByLabel('Tenant name').fill(acme.tenant);
  await p.getByRole('button', { name: 'Continue' }).click();
  await p.getByLabel('Email').fill(user.email);
  await p.getByLabel('Password').fill(user.password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
}

/** Confirms the open confirmation dialog and waits for the page it reloads. */
async function confirmAndReload(p: Page, button: string): Promise<void> {
  await p.locator('#confirm-dialog[open]').waitFor();
  await Promise.all([
    p.waitForEvent('load'),
    p.locator('#confirm-dialog').getByRole('button', { name: button }).click(),
  ]);
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  cluster = await startWorkloadIssuer();
  platform = await startTokenService({
    plantStores: 1,
    accountAdmin: true,
    serviceEnv: {
      'account-admin': { LOG_LEVEL: 'info' },
      'token-service': {
        FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
        FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
      },
    },
  });
  plantStore = platform.plantStores[0]!;
  acme = await createTenant(platform);
  account = await platform.createServiceAccount(acme.tenant, { name: 'nightly-import' });
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
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await signIn(page, acme.admin);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await cluster?.close();
});

describe("a service account's credentials in the portal", () => {
  test('When the admin opens the account from the list, then its page shows the secret with its dates, no keys or trusts, and the help on which credential to use', async () => {
    await page.getByRole('link', { name: 'nightly-import' }).click();
    await page.waitForURL(`${platform.portalUrl}/settings/service-accounts/${account.clientId}`);

    await expect(page.getByRole('heading', { name: 'Secret' }).isVisible()).resolves.toBe(true);
    await expect(
      page.locator('#secret-card td[data-label="Created"]').first().textContent(),
    ).resolves.toMatch(/UTC/);
    await expect(page.getByText('No keys.').isVisible()).resolves.toBe(true);
    await page.getByText('Which credential should I use?').click();
    await expect(page.getByText('Trusted workload (federation)').isVisible()).resolves.toBe(true);
    await shot(page, '1-account-page');
  });

  test('When the admin adds a second secret, then it is shown once, both are listed and work, and removing the old one leaves the new one working', async () => {
    const oldRow = page.locator('#secrets tbody tr').first();
    const oldId = await oldRow.getAttribute('data-secret-id');
    await page.getByRole('button', { name: 'Add a secret' }).click();
    await page.locator('#add-secret-dialog[open]').waitFor();
    await page.locator('#add-secret-dialog').getByRole('button', { name: 'Add secret' }).click();
    await page.locator('#secret-dialog[open]').waitFor();
    const secret = await page.locator('#secret-value').inputValue();
    await shot(page, '1b-second-secret');
    await Promise.all([
      page.waitForEvent('load'),
      page.locator('[data-action="secret-done"]').click(),
    ]);

    await expect(page.locator('#secrets tbody tr').count()).resolves.toBe(2);
    await expect(page.getByRole('button', { name: 'Add a secret' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: `Remove secret ${oldId}` }).click();
    await confirmAndReload(page, 'Remove secret');

    await expect(page.locator('#secrets tbody tr').count()).resolves.toBe(1);
    const token = (s: string) =>
      clientCredentialsToken(platform.authUrl, acme.tenant, account.clientId, s);
    expect((await token(account.secret)).status).toBe(401);
    expect((await token(secret)).status).toBe(200);
    account = { ...account, secret };
  });

  test('When the admin adds a public key (JWK), then the key is listed with its id and algorithm, and an assertion signed with it gets a token the Plant Store accepts', async () => {
    await page.getByRole('button', { name: 'Add key' }).click();
    await page.locator('#key-dialog[open]').waitFor();
    await page
      .getByLabel('Public key (JWK or PEM)')
      .fill(JSON.stringify({ ...key.publicJwk, kid: 'deploy-key' }));
    await shot(page, '2-add-key');
    await Promise.all([
      page.waitForEvent('load'),
      page.locator('#key-dialog').getByRole('button', { name: 'Add key' }).click(),
    ]);

    const row = page.locator('tr[data-key-id="deploy-key"]');
    await expect(row.locator('td[data-label="Algorithm"]').textContent()).resolves.toBe('ES256');
    const minted = await byKey();
    expect(minted.status).toBe(200);
    expect(await plants(minted.token!)).toBe(200);
    await shot(page, '3-key-listed');
  });

  test('When the admin pastes a private key, then the dialog says so and nothing is added', async () => {
    await page.getByRole('button', { name: 'Add key' }).click();
    await page
      .getByLabel('Public key (JWK or PEM)')
      .fill(key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
    await page.locator('#key-dialog').getByRole('button', { name: 'Add key' }).click();
    await page.locator('#key-error').waitFor({ state: 'visible' });

    await expect(page.locator('#key-error').textContent()).resolves.toBe(
      'This PEM holds a private key; add the public key only',
    );
    await page.locator('#key-dialog').getByRole('button', { name: 'Cancel' }).click();
    await expect(page.locator('tr[data-key-id]').count()).resolves.toBe(1);
  });

  test('When the admin trusts a workload, then the trust shows its issuer and subject, and the workload gets a token with its platform token', async () => {
    await page.getByRole('button', { name: 'Add trust' }).click();
    await page.locator('#trust-dialog[open]').waitFor();
    await page.getByLabel('Issuer').fill(cluster.issuer);
    await page.getByLabel('Subject').fill(SUBJECT);
    await expect(page.getByLabel('Audience').inputValue()).resolves.toBe(issuer());
    await shot(page, '4-add-trust');
    await Promise.all([
      page.waitForEvent('load'),
      page.locator('#trust-dialog').getByRole('button', { name: 'Add trust' }).click(),
    ]);

    const row = page.locator('#trusts tbody tr');
    await expect(row.locator('th').textContent()).resolves.toBe(cluster.issuer);
    await expect(row.locator('td[data-label="Subject"]').textContent()).resolves.toBe(SUBJECT);
    expect((await byWorkload()).status).toBe(200);
    await shot(page, '5-trust-listed');
  });

  test('When the admin removes the secret, then the page says there is none and the secret no longer gets a token', async () => {
    await page.getByRole('button', { name: 'Remove secret' }).click();
    await confirmAndReload(page, 'Remove secret');

    await expect(page.locator('#no-secret').isVisible()).resolves.toBe(true);
    expect(
      (
        await clientCredentialsToken(
          platform.authUrl,
          acme.tenant,
          account.clientId,
          account.secret,
        )
      ).status,
    ).toBe(401);
    await shot(page, '6-secret-removed');
  });

  test('When the admin disables the account, then it shows Disabled, its key token is refused by the Plant Store, and enabling makes the key work again', async () => {
    const before = await byKey();
    await page.getByRole('button', { name: 'Disable' }).click();
    await confirmAndReload(page, 'Disable');

    await expect(page.locator('#account-state').textContent()).resolves.toBe('Disabled');
    await eventually(
      async () => (await plants(before.token!)) === 401,
      'the Plant Store refuses the token of the disabled account',
    );
    expect((await byKey()).status).toBe(401);
    await shot(page, '7-disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await confirmAndReload(page, 'Enable');
    await expect(page.locator('#account-state').textContent()).resolves.toBe('Active');
    expect((await byKey()).status).toBe(200);
  });

  test('When the admin removes the key, then it is gone and its assertions are refused; the Activity page lists every change', async () => {
    await page
      .locator('tr[data-key-id="deploy-key"]')
      .getByRole('button', { name: 'Remove key deploy-key' })
      .click();
    await confirmAndReload(page, 'Remove key');

    await expect(page.getByText('No keys.').isVisible()).resolves.toBe(true);
    expect((await byKey()).status).toBe(401);
    await page.goto(`${platform.portalUrl}/activity`);
    const activity = await page.locator('#activity').textContent();
    for (const what of [
      'Added a key to',
      'Trusted a workload for',
      'Added a second secret to',
      'Removed a secret of',
      'Disabled',
      'Enabled',
      'Removed a key of',
    ])
      expect(activity).toContain(what);
    await shot(page, '8-activity');
  });

  test('When a View user opens the account, then the credentials are shown without any action', async () => {
    const viewer = await (await browser.newContext()).newPage();
    await signIn(viewer, acme.viewer);
    await viewer.goto(`${platform.portalUrl}/settings/service-accounts/${account.clientId}`);

    await expect(viewer.locator('#trusts tbody tr').count()).resolves.toBe(1);
    await expect(
      viewer.locator('button[data-action]:not([data-action="sign-out"])').count(),
    ).resolves.toBe(0);
    await shot(viewer, '9-read-only');
  });
});
