/**
 * plantctl from a fresh shell, against the three services as processes: `plantctl login` with
 * the device grant, approved in Chromium with a passkey (DevTools virtual authenticator over
 * CDP), then `plan -f` showing a change (exit 2), `apply` making it, and a second `apply`
 * changing nothing (plan exit 0). The CLI runs as its own process from its build, with a config
 * directory of its own (`PLANTCTL_CONFIG_DIR`), exactly as an installed one would.
 *
 * The attacker's side: a copied tokens file without its DPoP key (or with another key) is
 * worth nothing.
 */
import { cp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { expectExit, usePlantctlShell } from './helpers/plantctl-shell.js';
import { eventually } from '@plant/test-kit';

const s = usePlantctlShell('pctl');
const plantctl: typeof s.plantctl = (...args) => s.plantctl(...args);

const tenantFile = (
  grants: string[],
) => `# yaml-language-server: $schema=../schema/tenant.schema.json
apiVersion: plantctl.plantstore.dev/v1
kind: Tenant
tenant: ${s.tenant}
service_accounts:
  - name: ci-deployer
    role: Edit
    grants: [${grants.join(', ')}]
`;

describe('plantctl from a fresh shell', () => {
  test('When a person signs in with plantctl login, approving the device with a passkey, then plan shows the change (2), apply makes it, and a second apply changes nothing (plan 0)', async () => {
    const signedIn = await s.login(s.configDir);
    expectExit(signedIn, 0);
    expect(signedIn.stderr).toContain(`Signed in to ${s.tenant} as ${s.admin} (Account Admin).`);
    for (const file of [`${s.tenant}/tokens.json`, `${s.tenant}/dpop-key.json`])
      expect((await stat(join(s.configDir, file))).mode & 0o777).toBe(0o600);

    const file = join(s.work, 'tenant.yaml');
    await writeFile(file, tenantFile(['roses']));
    const plan = await plantctl(['plan', '-f', file]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ create service account "ci-deployer"');
    expect(plan.stdout).toContain('role View → Edit; grants [] → [roses]');

    const secretFile = join(s.work, 'ci-deployer.json');
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
    const token = await s.platform.grantToken(s.tenant, {
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
    const firstFile = join(s.work, 'rotate-first.json');
    const secondFile = join(s.work, 'rotate-second.json');
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
    const firstToken = await s.platform.grantToken(s.tenant, {
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

    const secondToken = await s.platform.grantToken(s.tenant, {
      clientId: second.client_id!,
      secret: second.client_secret!,
    });
    expectExit(await plantctl(['sa', 'secrets', 'remove', 'rotate-me', firstSecret!.id]), 0);
    const refused = await fetch(`${s.authUrl}/realms/${s.tenant}/protocol/openid-connect/token`, {
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
        await fetch(`${s.platform.plantStores[0]!.url}/plants`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).status;
    await eventually(async () => (await plants(firstToken)) === 401, 'the first token refused');
    expect(await plants(secondToken)).toBe(200);
  });

  test('When the tokens file is copied to another machine without its key, or beside another key, then it is worth nothing (exit 3)', async () => {
    const thief = join(s.work, 'thief');
    await cp(s.configDir, thief, { recursive: true });
    await rm(join(thief, s.tenant, 'dpop-key.json'));
    const withoutKey = await plantctl(['service-accounts', 'list'], thief);
    expectExit(withoutKey, 3);

    // Another key of the thief's own: the API refuses the bound access token, the realm the refresh.
    const other = join(s.work, 'other');
    await rm(other, { recursive: true, force: true });
    const loggedIn = await s.login(other);
    expectExit(loggedIn, 0);
    await cp(join(other, s.tenant, 'dpop-key.json'), join(thief, s.tenant, 'dpop-key.json'));
    const withOtherKey = await plantctl(['service-accounts', 'list'], thief);
    expectExit(withOtherKey, 3);
    expect(withOtherKey.stdout).toBe('');
  });

  test('When a person signs in with plantctl login --browser and a passkey, then the realm redirects the browser to plantctl’s loopback listener, plantctl keeps a DPoP-bound refresh token, and a refresh with it works', async () => {
    const dir = join(s.work, 'browser-login');
    let signingIn: Promise<void> | undefined;
    const signInInBrowser = async (url: string) => {
      await s.page.goto(url);
      await s.page.waitForURL(`${s.authUrl}/realms/${s.tenant}/interaction/**`);
      await s.page.getByRole('button', { name: 'Use a passkey' }).click();
      // The sign-in ends at plantctl's own listener (RFC 8252 §7.3), which answers a plain page.
      await s.page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
      await s.page.getByText('Signed in to plantctl.').waitFor();
    };

    const signedIn = await plantctl(
      ['login', '--tenant', s.tenant, '--portal', s.platform.portalUrl, '--browser', '--no-open'],
      dir,
      (err) => {
        const url = /Open this page to sign in: (\S+)/.exec(err)?.[1];
        if (url !== undefined && signingIn === undefined) signingIn = signInInBrowser(url);
      },
    );
    await signingIn;

    expectExit(signedIn, 0);
    expect(signedIn.stderr).toContain(`Signed in to ${s.tenant} as ${s.admin} (Account Admin).`);
    const tokensPath = join(dir, s.tenant, 'tokens.json');
    expect((await stat(tokensPath)).mode & 0o777).toBe(0o600);
    const tokens = JSON.parse(await readFile(tokensPath, 'utf8')) as Record<string, unknown>;
    expect(tokens).toMatchObject({ refresh_token: expect.any(String), token_type: 'DPoP' });
    // The access token counted as expired: the next call refreshes with the key's proof.
    await writeFile(tokensPath, JSON.stringify({ ...tokens, access_expires_at: 0 }));
    const whoami = await plantctl(['whoami', '--output', 'json'], dir);
    expectExit(whoami, 0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ email: s.admin, role: 'Account Admin' });
    const refreshed = JSON.parse(await readFile(tokensPath, 'utf8')) as Record<string, unknown>;
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    // Bound to plantctl's key: without it, the refresh token is worth nothing.
    await rm(join(dir, s.tenant, 'dpop-key.json'));
    await writeFile(tokensPath, JSON.stringify({ ...refreshed, access_expires_at: 0 }));
    expectExit(await plantctl(['whoami'], dir), 3);
  });

  test('When anyone asks the portal for plantctl’s configuration, then it names the realm, the client and the audience from configuration alone; a name that cannot be a tenant is 400', async () => {
    const url = `${s.platform.portalUrl}/.well-known/plantctl-configuration`;
    const known = await fetch(`${url}?tenant=${s.tenant}`);
    expect(known.status).toBe(200);
    expect(await known.json()).toEqual({
      issuer: `${s.authUrl}/realms/${s.tenant}`,
      client_id: 'plantctl',
      audience: expect.any(String),
      api: `${s.platform.portalUrl}/api/v1`,
    });
    // No lookup: an unknown tenant reads the same (the realm's discovery says 404), so the
    // answer tells no one which tenants exist.
    const unknown = await fetch(`${url}?tenant=no-such-${s.tenant}`);
    expect(unknown.status).toBe(200);
    for (const bad of ['?tenant=../x', '?tenant=A', '', `?tenant=${s.tenant}&tenant=${s.tenant}`]) {
      const res = await fetch(`${url}${bad}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 400, message: expect.any(String) });
    }
  });
});
