/**
 * plantctl from a fresh shell, for the e2e files that drive it: the three services as
 * processes, a tenant whose Account Admin holds a passkey (the tenant's policy requires a
 * factor), Chromium with a DevTools virtual authenticator to approve sign-ins with it, and the
 * CLI as a process of its own from its build with a config directory of its own
 * (`PLANTCTL_CONFIG_DIR`), exactly as an installed one would run.
 *
 * Passkeys need a domain for their relying party ID (an IP address is refused by browsers), so
 * the token service is reached as `localhost`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import {
  freePort,
  type Platform,
  type PlatformOptions,
  REPO_ROOT,
  startPlatform,
  USER_PASSWORD,
} from '@plant/test-kit';
import { type Browser, type CDPSession, chromium, type Page } from 'playwright-core';

const CLI = join(REPO_ROOT, 'packages/plantctl/dist/cli.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface PlantctlShell {
  platform: Platform;
  page: Page;
  cdp: CDPSession;
  tenant: string;
  admin: string;
  authUrl: string;
  /** The default config directory (`PLANTCTL_CONFIG_DIR`). */
  configDir: string;
  /** A scratch directory of the file's own, also `HOME`. */
  work: string;
  /** plantctl as a process of its own; `onErr` sees its whole stderr so far as it comes. */
  plantctl(args: string[], dir?: string, onErr?: (text: string) => void): Promise<Run>;
  /**
   * A plantctl run that signs in by the device grant (login, or a step-up): each device code it
   * prints on stderr is approved in the browser with the passkey, then the run's end.
   */
  withDeviceApproval(args: string[], dir?: string): Promise<Run>;
  /** `plantctl login` by the device grant, approved with the passkey. */
  login(dir?: string): Promise<Run>;
  /** The person at the realm's device page: checks the code, approves, signs in with the passkey. */
  approveWithPasskey(url: string, userCode: string): Promise<void>;
}

/** The run's exit code, with its stderr in the failure message when it is not `code`. */
export function expectExit(run: Run, code: number): void {
  expect({ code: run.code, stderr: run.code === code ? '' : run.stderr }).toEqual({
    code,
    stderr: '',
  });
}

/**
 * Starts all of it before the calling file's tests, closes it after; fields set in beforeAll.
 * `serviceEnv` goes over the services' environment (another API's audience, say).
 */
export function usePlantctlShell(
  label: string,
  { serviceEnv = {} }: Pick<PlatformOptions, 'serviceEnv'> = {},
): PlantctlShell {
  const s = {} as PlantctlShell;
  let browser: Browser | undefined;

  s.plantctl = (args, dir = s.configDir, onErr) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: s.work, PLANTCTL_CONFIG_DIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        onErr?.(stderr);
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  s.approveWithPasskey = async (url, userCode) => {
    const { page, authUrl, tenant } = s;
    await page.goto(url);
    const enter = page.getByRole('heading', { name: 'Sign in a device' });
    const confirm = page.getByRole('heading', { name: 'Approve this device?' });
    await enter.or(confirm).waitFor();
    if (await enter.isVisible()) {
      await page.getByLabel(/code/i).fill(userCode);
      await page.getByRole('button', { name: 'Continue' }).click();
    }
    await confirm.waitFor();
    await expect(page.getByText(userCode).count()).resolves.toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Approve and sign in' }).click();
    await page.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Device approved' }).waitFor();
  };

  s.withDeviceApproval = async (args, dir = s.configDir) => {
    const approvals: Promise<void>[] = [];
    const approved = new Set<string>();
    const run = s.plantctl(args, dir, (err) => {
      // Every device code the run prints, once each (a step-up prints a second one).
      for (const match of err.matchAll(/enter the code (\S+)\s+\(or open (\S+)\)/g)) {
        const [, code, url] = match;
        if (approved.has(code!)) continue;
        approved.add(code!);
        approvals.push(s.approveWithPasskey(url!, code!));
      }
    });
    const done = await run;
    await Promise.all(approvals);
    return done;
  };

  s.login = (dir = s.configDir) =>
    s.withDeviceApproval(['login', '--tenant', s.tenant, '--portal', s.platform.portalUrl], dir);

  beforeAll(async () => {
    const tokenPort = await freePort();
    const internalPort = await freePort();
    s.authUrl = `http://localhost:${tokenPort}`;
    s.platform = await startPlatform({
      accountAdmin: true,
      authUrl: s.authUrl,
      serviceEnv,
      ports: { 'token-service': [{ port: tokenPort, internalPort }] },
    });
    s.tenant = await s.platform.createTenant(label);
    s.admin = `admin@${s.tenant}.test`;
    s.work = await mkdtemp(join(tmpdir(), 'plantctl-e2e-'));
    s.configDir = join(s.work, 'config');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
    });
    s.page = await (await browser.newContext()).newPage();
    s.cdp = await s.page.context().newCDPSession(s.page);
    await s.cdp.send('WebAuthn.enable');
    await s.cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    await enrolPasskey(s);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await s.platform?.close();
    if (s.work) await rm(s.work, { recursive: true, force: true });
  });

  return s;
}

/** The admin's passkey: the tenant's policy asks for a factor at sign-in, and one is enrolled. */
async function enrolPasskey(s: PlantctlShell): Promise<void> {
  const { page, platform, tenant, admin, authUrl } = s;
  await platform.cli('tenant', 'policy', tenant, '--admin-factor', 'required');
  await page.goto(`${platform.portalUrl}/`);
  await page.getByLabel('Tenant name').fill(tenant);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${authUrl}/realms/${tenant}/interaction/**`);
  await page.getByLabel('Email').fill(admin);
  await page.getByLabel('Password').fill(USER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Add a second factor' }).waitFor();
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.waitForURL(`${platform.portalUrl}/settings/service-accounts`);
  // Signed out of the portal and the realm: the approvals sign in with the passkey alone.
  await page.context().clearCookies();
}
