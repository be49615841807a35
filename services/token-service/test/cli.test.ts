import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { REPO_ROOT, uniqueName } from '@plant/test-kit';
import request from 'supertest';
import { startHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { AUTH } from './helpers/internal-client.js';
import { verifyPassword } from '../src/passwords/passwords.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'services/token-service/dist/cli.js');

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

const cliEnv = () => ({
  PATH: process.env.PATH ?? '',
  DATABASE_URL: TEST_ENV.DATABASE_URL,
  REDIS_URL: TEST_ENV.REDIS_URL,
  KEY_ENCRYPTION_KEY: TEST_ENV.KEY_ENCRYPTION_KEY,
  AUTH_URL: h.publicUrl,
});

/** The CLI with `input` on its standard input. */
function cliWithInput(
  input: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function storedPasswordHash(tenant: string, email: string): Promise<string> {
  const row = await h.service.db('users').where({ realm: tenant, email }).first('password_hash');
  return (row as { password_hash: string }).password_hash;
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = cliEnv();
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('operator CLI (built dist/cli.js)', () => {
  test('When a tenant is created, then one JSON line describes it and its admin can be listed through the internal API', async () => {
    const tenant = uniqueName('cli');

    const res = await cli(
      'tenant',
      'create',
      tenant,
      '--admin-email',
      'Owner@Example.test',
      '--admin-password',
      'a long password',
    );
    const users = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/users`)
      .set('authorization', AUTH);

    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout.endsWith('\n')).toBe(true);
    expect(res.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(res.stdout)).toEqual({
      tenant,
      issuer: `${h.publicUrl}/realms/${tenant}`,
      kid: expect.any(String),
      alg: 'RS256',
      portal_client_id: 'portal',
      require_admin_factor: true,
      admin: { id: expect.any(String), email: 'Owner@Example.test', role: 'Account Admin' },
    });
    expect(users.body).toEqual([
      {
        id: JSON.parse(res.stdout).admin.id,
        email: 'Owner@Example.test',
        role: 'Account Admin',
        status: 'active',
        created_at: expect.any(String),
        last_sign_in_at: null,
        factors: { passkeys: 0, totp: false, recovery_codes_left: 0 },
        token_version: 1,
        factor_generation: 0,
        factor_required: true,
        revision: 1,
      },
    ]);
  });

  test('When the tenant exists already, then it exits non-zero with one clear line', async () => {
    const tenant = uniqueName('cli');
    await cli(
      'tenant',
      'create',
      tenant,
      '--admin-email',
      'a@example.test',
      '--admin-password',
      'a long password',
    );

    const res = await cli(
      'tenant',
      'create',
      tenant,
      '--admin-email',
      'b@example.test',
      '--admin-password',
      'a long password',
    );

    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`error: Tenant "${tenant}" already exists\n`);
  });

  test.each([
    [
      [
        'tenant',
        'create',
        'Bad_Name',
        '--admin-email',
        'a@example.test',
        '--admin-password',
        'a long password',
      ],
      'error: invalid tenant name "Bad_Name": use 1-63 characters of a-z, 0-9 and inner hyphens\n',
    ],
    [
      ['tenant', 'create', 'ok-name', '--admin-password', 'a long password'],
      'error: --admin-email is required\n',
    ],
    [
      [
        'tenant',
        'create',
        'ok-name',
        '--admin-email',
        'not-an-email',
        '--admin-password',
        'a long password',
      ],
      'error: --admin-email: email must be an email address: one mailbox local@domain in ASCII, without a display name, list, group, comment or quotes\n',
    ],
    [
      [
        'tenant',
        'create',
        'ok-name',
        '--admin-email',
        'a@example.test',
        '--admin-password',
        'short',
      ],
      'error: --admin-password: password must be at least 8 characters\n',
    ],
  ])('When the arguments are %j, then it exits 2 with one clear line', async (args, line) => {
    const res = await cli(...args);

    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(line);
  });

  test('When a user is added, then it is listed with its role; an unknown tenant or role is refused', async () => {
    const { tenant } = await h.createTenant();

    const res = await cli(
      'user',
      'create',
      tenant,
      '--email',
      'viewer@example.test',
      '--password',
      'a long password',
      '--role',
      'View',
    );
    const unknownTenant = await cli(
      'user',
      'create',
      'no-such-cli-tenant',
      '--email',
      'v@example.test',
      '--password',
      'a long password',
      '--role',
      'Edit',
    );
    const badRole = await cli(
      'user',
      'create',
      tenant,
      '--email',
      'v2@example.test',
      '--password',
      'a long password',
      '--role',
      'Owner',
    );
    const users = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/users`)
      .set('authorization', AUTH);

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      tenant,
      user: { id: expect.any(String), email: 'viewer@example.test', role: 'View' },
    });
    expect(unknownTenant).toEqual({ code: 1, stdout: '', stderr: 'error: Tenant not found\n' });
    expect(badRole).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: --role: role must be "View", "Edit" or "Account Admin"\n',
    });
    expect(
      users.body.map((u: { email: string; role: string }) => [u.email, u.role]),
    ).toContainEqual(['viewer@example.test', 'View']);
  });

  test("When the first admin's password comes on standard input or from a file, then it never needs the command line and exactly that password is set", async () => {
    const fromStdin = uniqueName('cli');
    const stdin = await cliWithInput(
      'a password from stdin\n',
      'tenant',
      'create',
      fromStdin,
      '--admin-email',
      'owner@example.test',
      '--admin-password-file',
      '-',
    );
    const file = join(tmpdir(), `${uniqueName('pw')}.txt`);
    writeFileSync(file, 'a password from a file\r\n', { mode: 0o600 });
    const { tenant } = await h.createTenant();
    const fromFile = await cliWithInput(
      '',
      'user',
      'create',
      tenant,
      '--email',
      'filed@example.test',
      '--password-file',
      file,
      '--role',
      'View',
    );

    expect({ code: stdin.code, stderr: stdin.stderr }).toEqual({ code: 0, stderr: '' });
    expect(
      await verifyPassword(
        'a password from stdin',
        await storedPasswordHash(fromStdin, 'owner@example.test'),
      ),
    ).toBe(true);
    expect({ code: fromFile.code, stderr: fromFile.stderr }).toEqual({ code: 0, stderr: '' });
    expect(
      await verifyPassword(
        'a password from a file',
        await storedPasswordHash(tenant, 'filed@example.test'),
      ),
    ).toBe(true);
  });

  test('When a password is given twice, comes from a missing file or an oversized one, then it exits 2 with one clear line', async () => {
    const both = await cliWithInput(
      'x',
      'tenant',
      'create',
      uniqueName('cli'),
      '--admin-email',
      'o@example.test',
      '--admin-password',
      'a long password',
      '--admin-password-file',
      '-',
    );
    const missing = await cliWithInput(
      '',
      'tenant',
      'create',
      uniqueName('cli'),
      '--admin-email',
      'o@example.test',
      '--admin-password-file',
      '/nonexistent/pw',
    );
    const huge = await cliWithInput(
      'x'.repeat(10_000),
      'tenant',
      'create',
      uniqueName('cli'),
      '--admin-email',
      'o@example.test',
      '--admin-password-file',
      '-',
    );

    expect(both).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: give --admin-password-file or --admin-password, not both\n',
    });
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: --admin-password-file: cannot read "/nonexistent/pw"\n',
    });
    expect(huge).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: --admin-password-file: larger than 4096 bytes\n',
    });
  });

  test('When an unknown command is given, then it exits 2 with the usage', async () => {
    const res = await cli('tenant', 'delete', 'x');

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: unknown command "tenant delete"\nusage:\n/);
  });
});

describe('operator CLI: the second-factor policy and a locked-out person', () => {
  test('When a tenant is created with --admin-factor optional, then its policy reads off, and tenant policy turns it on again and is recorded', async () => {
    const tenant = uniqueName('cli');
    const created = await cli(
      'tenant',
      'create',
      tenant,
      '--admin-email',
      `admin@${tenant}.test`,
      '--admin-password',
      'a long enough password',
      '--admin-factor',
      'optional',
    );
    const read = await cli('tenant', 'policy', tenant);
    const set = await cli('tenant', 'policy', tenant, '--admin-factor', 'required');
    const wrong = await cli('tenant', 'policy', tenant, '--admin-factor', 'sometimes');
    const elsewhere = await cli('keys', 'show', tenant, '--admin-factor', 'required');

    expect(JSON.parse(created.stdout)).toMatchObject({ require_admin_factor: false });
    expect(JSON.parse(read.stdout)).toEqual({ tenant, require_admin_factor: false });
    expect(JSON.parse(set.stdout)).toEqual({ tenant, require_admin_factor: true });
    expect(wrong).toMatchObject({ code: 2, stdout: '' });
    expect(wrong.stderr).toContain('--admin-factor must be required or optional');
    expect(elsewhere.code).toBe(2);
    const events = await h.service
      .db('user_security_events')
      .where({ realm: tenant, action: 'tenant.policy_change' })
      .select('actor_email', 'details');
    expect(events).toEqual([{ actor_email: 'cli', details: { require_admin_factor: true } }]);
  });

  test('When the operator resets the factors of a person, then their factors and recovery codes are gone, their token version moved, and an unknown email is a clear error', async () => {
    const { tenant, adminEmail, adminId } = await h.createTenant();
    const db = h.service.db;
    await db('user_factors').insert({
      id: '00000000-0000-4000-8000-000000000001',
      sub: adminId,
      realm: tenant,
      kind: 'passkey',
      label: 'Passkey',
      credential_id: `cred-${tenant}`,
      public_key: Buffer.from('not a real key'),
      sign_count: 0,
    });
    await db('user_recovery_codes').insert({ sub: adminId, digest: `digest-${tenant}` });
    const before = await db('principals').where({ sub: adminId }).first('token_version');

    const res = await cli('user', 'reset-factors', tenant, '--email', adminEmail);
    const unknown = await cli('user', 'reset-factors', tenant, '--email', `nobody@${tenant}.test`);

    expect(JSON.parse(res.stdout)).toEqual({
      tenant,
      user: { id: adminId, email: adminEmail },
      factors_removed: 1,
    });
    expect(await db('user_factors').where({ sub: adminId })).toEqual([]);
    expect(await db('user_recovery_codes').where({ sub: adminId })).toEqual([]);
    const after = await db('principals').where({ sub: adminId }).first('token_version');
    expect(Number(after.token_version)).toBe(Number(before.token_version) + 1);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('User not found');
  });
});
