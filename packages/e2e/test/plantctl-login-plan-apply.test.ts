/**
 * plantctl from a fresh shell, against the three services as processes: `plantctl login` with
 * the device grant, approved in Chromium with a passkey (DevTools virtual authenticator over
 * CDP), then `plan -f` showing a change (exit 2), `apply` making it, and a second `apply`
 * changing nothing (plan exit 0). The CLI runs as its own process from its build, with a config
 * directory of its own (`PLANTCTL_CONFIG_DIR`), exactly as an installed one would.
 *
 * The attacker's side: a copied tokens file without its DPoP key (or with another key) is
 * worth nothing.
 *
 * Passkeys need a domain for their relying party ID (an IP address is refused by browsers), so
 * the token service is reached as `localhost` here.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  eventually,
  freePort,
  type Platform,
  REPO_ROOT,
  startPlatform,
  USER_PASSWORD,
} from '@plant/test-kit';
import { type Browser, type CDPSession, chromium, type Page } from 'playwright-core';

const CLI = join(REPO_ROOT, 'packages/plantctl/dist/cli.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let platform: Platform;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
let tenant: string;
let admin: string;
let authUrl: string;
let configDir: string;
let work: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** plantctl as a process of its own; `onErr` sees its stderr as it comes (the device code). */
function plantctl(args: string[], dir = configDir, onErr?: (text: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: work, PLANTCTL_CONFIG_DIR: dir },
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
}

/** The run's exit code, with its stderr in the failure message when it is not `code`. */
function expectExit(run: Run, code: number): void {
  expect({ code: run.code, stderr: run.code === code ? '' : run.stderr }).toEqual({
    code,
    stderr: '',
  });
}

const tokenPort = await freePort();
const internalPort = await freePort();

beforeAll(async () => {
  authUrl = `http://localhost:${tokenPort}`;
  platform = await startPlatform({
    accountAdmin: true,
    authUrl,
    ports: { 'token-service': [{ port: tokenPort, internalPort }] },
  });
  tenant = await platform.createTenant('pctl');
  admin = `admin@${tenant}.test`;
  work = await mkdtemp(join(tmpdir(), 'plantctl-e2e-'));
  configDir = join(work, 'config');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
  });
  page = await (await browser.newContext()).newPage();
  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await enrolPasskey();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The admin's passkey: the tenant's policy asks for a factor at sign-in, and one is enrolled. */
async function enrolPasskey(): Promise<void> {
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
  // Signed out of the portal and the realm: the approval below signs in with the passkey alone.
  await page.context().clearCookies();
}

/** The person at the realm's device page: checks the code, approves, signs in with the passkey. */
async function approveWithPasskey(url: string, userCode: string): Promise<void> {
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
}

/** `plantctl login`, its device code read from its stderr and approved in the browser. */
async function login(dir: string): Promise<Run> {
  let approving: Promise<void> | undefined;
  const run = plantctl(
    ['login', '--tenant', tenant, '--portal', platform.portalUrl],
    dir,
    (err) => {
      const url = /\(or open (\S+)\)/.exec(err)?.[1];
      const code = /enter the code (\S+)/.exec(err)?.[1];
      if (url && code && approving === undefined) approving = approveWithPasskey(url, code);
    },
  );
  const done = await run;
  await approving;
  return done;
}

const tenantFile = (
  grants: string[],
) => `# yaml-language-server: $schema=../schema/tenant.schema.json
apiVersion: plantctl.plantstore.dev/v1
kind: Tenant
tenant: ${tenant}
service_accounts:
  - name: ci-deployer
    role: Edit
    grants: [${grants.join(', ')}]
`;

describe('plantctl from a fresh shell', () => {
  test('When a person signs in with plantctl login, approving the device with a passkey, then plan shows the change (2), apply makes it, and a second apply changes nothing (plan 0)', async () => {
    const signedIn = await login(configDir);
    expectExit(signedIn, 0);
    expect(signedIn.stderr).toContain(`Signed in to ${tenant} as ${admin} (Account Admin).`);
    for (const file of [`${tenant}/tokens.json`, `${tenant}/dpop-key.json`])
      expect((await stat(join(configDir, file))).mode & 0o777).toBe(0o600);

    const file = join(work, 'tenant.yaml');
    await writeFile(file, tenantFile(['roses']));
    const plan = await plantctl(['plan', '-f', file]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ create service account "ci-deployer"');
    expect(plan.stdout).toContain('role View → Edit; grants [] → [roses]');

    const secretFile = join(work, 'ci-deployer.json');
    const apply = await plantctl([
      'apply',
      '-f',
      file,
      '--secret-file',
      secretFile,
      '--secret-format',
      'json',
    ]);
    expectExit(apply, 0);
    expect(apply.stdout).toContain('Applied 2 changes.');
    expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
    const secret = JSON.parse(await readFile(secretFile, 'utf8')) as Record<string, string>;
    expect(apply.stdout + apply.stderr).not.toContain(secret.client_secret!);
    // The new account works, with the role and grants of the file.
    const token = await platform.grantToken(tenant, {
      clientId: secret.client_id!,
      secret: secret.client_secret!,
    });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ role: 'Edit' });

    const again = await plantctl(['apply', '-f', file]);
    expectExit(again, 0);
    expect(again.stdout).toContain('No changes: the tenant matches the file.');
    expectExit(await plantctl(['plan', '-f', file]), 0);
  });

  test('When plantctl adds a second secret and removes the first, then the first is refused, its token revoked, the second and its token keep working, and a third secret is refused (exit 5)', async () => {
    const firstFile = join(work, 'rotate-first.json');
    const secondFile = join(work, 'rotate-second.json');
    expectExit(
      await plantctl([
        'sa',
        'create',
        'rotate-me',
        '--secret-file',
        firstFile,
        '--secret-format',
        'json',
      ]),
      0,
    );
    const first = JSON.parse(await readFile(firstFile, 'utf8')) as Record<string, string>;
    const [firstSecret] = JSON.parse(
      (await plantctl(['sa', 'secrets', 'list', 'rotate-me', '-o', 'json'])).stdout,
    ) as Array<{ id: string }>;
    const firstToken = await platform.grantToken(tenant, {
      clientId: first.client_id!,
      secret: first.client_secret!,
    });

    const added = await plantctl([
      'sa',
      'secrets',
      'add',
      'rotate-me',
      '--secret-file',
      secondFile,
      '--secret-format',
      'json',
    ]);
    expectExit(added, 0);
    const second = JSON.parse(await readFile(secondFile, 'utf8')) as Record<string, string>;
    expect(second.client_id).toBe(first.client_id);
    expect(added.stdout + added.stderr).not.toContain(second.client_secret!);
    const listed = JSON.parse(
      (await plantctl(['sa', 'secrets', 'list', 'rotate-me', '-o', 'json'])).stdout,
    ) as Array<{ id: string }>;
    expect(listed.map((one) => one.id)).toContain(firstSecret!.id);
    expect(listed).toHaveLength(2);
    const third = await plantctl(['sa', 'secrets', 'add', 'rotate-me']);
    expect(third.code).toBe(5);
    expect(third.stdout).toBe('');

    const secondToken = await platform.grantToken(tenant, {
      clientId: second.client_id!,
      secret: second.client_secret!,
    });
    expectExit(await plantctl(['sa', 'secrets', 'remove', 'rotate-me', firstSecret!.id]), 0);
    const refused = await fetch(`${authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: first.client_id!,
        client_secret: first.client_secret!,
      }),
    });
    expect(refused.status).toBe(401);
    const plants = async (token: string) =>
      (
        await fetch(`${platform.plantStores[0]!.url}/plants`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).status;
    await eventually(async () => (await plants(firstToken)) === 401, 'the first token refused');
    expect(await plants(secondToken)).toBe(200);
  });

  test('When the tokens file is copied to another machine without its key, or beside another key, then it is worth nothing (exit 3)', async () => {
    const thief = join(work, 'thief');
    await cp(configDir, thief, { recursive: true });
    await rm(join(thief, tenant, 'dpop-key.json'));
    const withoutKey = await plantctl(['service-accounts', 'list'], thief);
    expectExit(withoutKey, 3);

    // Another key of the thief's own: the API refuses the bound access token, the realm the refresh.
    const other = join(work, 'other');
    await rm(other, { recursive: true, force: true });
    const loggedIn = await login(other);
    expectExit(loggedIn, 0);
    await cp(join(other, tenant, 'dpop-key.json'), join(thief, tenant, 'dpop-key.json'));
    const withOtherKey = await plantctl(['service-accounts', 'list'], thief);
    expectExit(withOtherKey, 3);
    expect(withOtherKey.stdout).toBe('');
  });

  test('When anyone asks the portal for plantctl’s configuration, then it names the realm, the client and the audience from configuration alone; a name that cannot be a tenant is 400', async () => {
    const url = `${platform.portalUrl}/.well-known/plantctl-configuration`;
    const known = await fetch(`${url}?tenant=${tenant}`);
    expect(known.status).toBe(200);
    expect(await known.json()).toEqual({
      issuer: `${authUrl}/realms/${tenant}`,
      client_id: 'plantctl',
      audience: expect.any(String),
      api: `${platform.portalUrl}/api/v1`,
    });
    // No lookup: an unknown tenant reads the same (the realm's discovery says 404), so the
    // answer tells no one which tenants exist.
    const unknown = await fetch(`${url}?tenant=no-such-${tenant}`);
    expect(unknown.status).toBe(200);
    for (const bad of ['?tenant=../x', '?tenant=A', '', `?tenant=${tenant}&tenant=${tenant}`]) {
      const res = await fetch(`${url}${bad}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 400, message: expect.any(String) });
    }
  });
});
