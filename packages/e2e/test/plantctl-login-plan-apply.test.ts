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
