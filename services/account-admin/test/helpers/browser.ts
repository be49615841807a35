/**
 * What the browser tests of the portal share: Debian's Chromium driven by playwright-core, the
 * sign-in through the portal and the realm's form, screenshots, keyboard-only moves, and axe-core
 * run inside the page.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { PlatformOptions } from '@plant/test-kit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTokenService, type Platform } from './platform.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Every screenshot of every step (gitignored). */
export const OUTPUT = join(import.meta.dirname, '..', '..', 'test-output');

export function launchBrowser(): Promise<Browser> {
  mkdirSync(OUTPUT, { recursive: true });
  return chromium.launch({
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
}

/** The window every browser test uses (and the walkthrough's screenshots (docs/walkthrough.md) are). */
export const VIEWPORT = { width: 1280, height: 800 };

export interface BrowserFixture {
  platform: Platform;
  browser: Browser;
  /** A page of its own browser context, at VIEWPORT. */
  page: Page;
}

/**
 * The usual arrangement of a browser test file: the platform (`options`), Chromium and a page,
 * started before its tests and closed after them. `onStart` hands them to the file's own
 * variables and arranges what the file needs (tenants, users).
 */
export function useBrowser(
  options: PlatformOptions,
  onStart: (started: BrowserFixture) => void | Promise<void>,
): void {
  let started: Partial<BrowserFixture> = {};
  beforeAll(async () => {
    const platform = await startTokenService(options);
    started = { platform };
    const browser = await launchBrowser();
    started = {
      platform,
      browser,
      page: await (await browser.newContext({ viewport: VIEWPORT })).newPage(),
    };
    await onStart(started as BrowserFixture);
  }, 120_000);
  afterAll(async () => {
    await started.browser?.close();
    await started.platform?.close();
  });
}

export async function shot(p: Page, name: string): Promise<void> {
  await p.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}

export interface Where {
  portalUrl: string;
  authUrl: string;
  tenant: string;
}

/** The tenant picker, then the realm's sign-in form, back at the Service accounts page. */
export async function signInThroughPortal(
  p: Page,
  { portalUrl, authUrl, tenant }: Where,
  user: { email: string; password: string },
  prefix?: string,
): Promise<void> {
  await p.goto(`${portalUrl}/`);
  if (prefix) await shot(p, `${prefix}-1-tenant-picker`);
  await p.getByLabel('Tenant name').fill(tenant);
  await p.getByRole('button', { name: 'Continue' }).click();
  await p.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
  await p.getByLabel('Email').fill(user.email);
  await p.getByLabel('Password').fill(user.password);
  if (prefix) await shot(p, `${prefix}-2-sign-in-form`);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${portalUrl}/settings/service-accounts`);
}

/** What has focus: its id, its accessible name as a person hears it, and the dialog it is in. */
export function focused(p: Page): Promise<{ id: string; name: string; dialog: string | null }> {
  return p.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { id: '', name: '', dialog: null };
    const label = (el as HTMLInputElement).labels?.[0]?.textContent;
    const name = el.getAttribute('aria-label') ?? label ?? el.textContent ?? '';
    return { id: el.id, name: name.trim(), dialog: el.closest('dialog')?.id ?? null };
  });
}

/** Presses Tab (Shift+Tab when `back`) until what has focus is named `name`; fails after `max` presses. */
export async function tabTo(p: Page, name: string, { back = false, max = 40 } = {}): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await p.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    if ((await focused(p)).name === name) return;
  }
  throw new Error(
    `no "${name}" within ${max} presses of ${back ? 'Shift+Tab' : 'Tab'}; focus is on ${JSON.stringify(await focused(p))}`,
  );
}

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical findings on the page as it is now (WCAG 2.1 A and AA, and
 * axe's best practices). axe is evaluated through the DevTools protocol, which the page's CSP
 * does not govern, so the page is checked with its real CSP.
 */
export async function axeFindings(p: Page): Promise<AxeFinding[]> {
  await p.evaluate(AXE_SOURCE);
  const results = (await p.evaluate(() =>
    (
      window as unknown as { axe: { run(ctx: Document, options: object): Promise<unknown> } }
    ).axe.run(document, {
      runOnly: {
        type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
      },
    }),
  )) as {
    violations: Array<{
      id: string;
      impact: string | null;
      help: string;
      nodes: Array<{ target: unknown[] }>;
    }>;
  };
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact!,
      help: v.help,
      targets: v.nodes.map((n) => n.target.map(String).join(' ')),
    }));
}

/** No serious or critical axe finding on the page; `what` names the page in the failure. */
export async function expectAccessible(p: Page, what: string): Promise<void> {
  expect({ page: what, findings: await axeFindings(p) }).toEqual({ page: what, findings: [] });
}
