/**
 * `cli service-accounts reset-secrets`: what an operator runs after restoring the database to
 * an earlier point, when every secret a reset replaced since that point is alive again. Each
 * account gets a new secret through the one Reset Secret: the old secret fails and its tokens
 * are revoked; nothing of another tenant is touched.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import { REPO_ROOT } from '@plant/test-kit';
import request from 'supertest';
import { TEST_ENV, uniqueIp, useHarness, type Harness } from './helpers/harness.js';
import { AUTH, internal } from './helpers/internal-client.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'services/token-service/dist/cli.js');

let h: Harness;
let tenant: string;
useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

async function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: TEST_ENV.DATABASE_URL,
        REDIS_URL: TEST_ENV.REDIS_URL,
        KEY_ENCRYPTION_KEY: TEST_ENV.KEY_ENCRYPTION_KEY,
        AUTH_URL: h.publicUrl,
        ...env,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const withPepper = { SECRET_PEPPER: TEST_ENV.SECRET_PEPPER };

async function grant(realm: string, clientId: string, secret: string): Promise<number> {
  const res = await request(h.publicUrl)
    .post(h.tokenUrl(realm))
    .set('x-forwarded-for', uniqueIp())
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
  return res.status;
}

async function introspect(token: string): Promise<boolean> {
  const res = await request(h.publicUrl)
    .post(`${h.tokenUrl(tenant)}/introspect`)
    .set('authorization', `Bearer ${TEST_ENV.RESOURCE_SERVER_TOKENS.split(',')[0]}`)
    .type('form')
    .send({ token });
  return (res.body as { active: boolean }).active;
}

/** Each test starts the CLI as processes: seconds apiece on a busy machine. */
const CLI_TEST_MS = 120_000;

describe('operator CLI: service-accounts reset-secrets', () => {
  test(
    "When it runs for a tenant, then every account's old secret and tokens stop working, the printed secrets work, and another tenant's account is untouched",
    async () => {
      const api = internal(h);
      const [a, b] = [
        await api.createServiceAccount(tenant),
        await api.createServiceAccount(tenant),
      ];
      const other = await h.createTenant();
      const elsewhere = await api.createServiceAccount(other.tenant);
      const token = (
        await request(h.publicUrl)
          .post(h.tokenUrl(tenant))
          .set('x-forwarded-for', uniqueIp())
          .type('form')
          .send({
            grant_type: 'client_credentials',
            client_id: a.client_id,
            client_secret: a.secret,
          })
      ).body as { access_token: string };

      const res = await cli(withPepper, 'service-accounts', 'reset-secrets', tenant);
      const printed = JSON.parse(res.stdout) as {
        tenant: string;
        reset: Array<{ client_id: string; name: string; secret: string }>;
      };
      const fresh = new Map(printed.reset.map((r) => [r.client_id, r.secret]));

      expect([res.code, printed.tenant]).toEqual([0, tenant]);
      expect([...fresh.keys()].sort()).toEqual(
        expect.arrayContaining([a.client_id, b.client_id].sort()),
      );
      expect(await grant(tenant, a.client_id, a.secret)).toBe(401);
      expect(await grant(tenant, b.client_id, b.secret)).toBe(401);
      expect(await grant(tenant, a.client_id, fresh.get(a.client_id)!)).toBe(200);
      expect(await grant(tenant, b.client_id, fresh.get(b.client_id)!)).toBe(200);
      expect(await introspect(token.access_token)).toBe(false);
      expect(await grant(other.tenant, elsewhere.client_id, elsewhere.secret)).toBe(200);
      // Nothing but the answer carries a secret: not the error stream, not the service's logs.
      expect(res.stderr).toBe('');
      for (const secret of fresh.values())
        expect(h.logs.some((line) => line.includes(secret))).toBe(false);
    },
    CLI_TEST_MS,
  );

  test(
    'When --client-id names some accounts, then only they get new secrets',
    async () => {
      const api = internal(h);
      const [a, b] = [
        await api.createServiceAccount(tenant),
        await api.createServiceAccount(tenant),
      ];

      const res = await cli(
        withPepper,
        'service-accounts',
        'reset-secrets',
        tenant,
        '--client-id',
        a.client_id,
      );
      const printed = JSON.parse(res.stdout) as { reset: Array<{ client_id: string }> };

      expect(printed.reset.map((r) => r.client_id)).toEqual([a.client_id]);
      expect(await grant(tenant, a.client_id, a.secret)).toBe(401);
      expect(await grant(tenant, b.client_id, b.secret)).toBe(200);
    },
    CLI_TEST_MS,
  );

  test(
    "When the client id is another tenant's, the tenant is unknown, or SECRET_PEPPER is missing, then it exits non-zero with one line and changes nothing",
    async () => {
      const api = internal(h);
      const other = await h.createTenant();
      const theirs = await api.createServiceAccount(other.tenant);

      const [crossTenant, unknownTenant, noPepper] = await Promise.all([
        cli(
          withPepper,
          'service-accounts',
          'reset-secrets',
          tenant,
          '--client-id',
          theirs.client_id,
        ),
        cli(withPepper, 'service-accounts', 'reset-secrets', 'no-such-tenant-x'),
        cli({}, 'service-accounts', 'reset-secrets', other.tenant),
      ]);

      expect([crossTenant.code, crossTenant.stdout, crossTenant.stderr.trim().split('\n')]).toEqual(
        [1, '', [expect.stringMatching(/^error: /)]],
      );
      expect([unknownTenant.code, unknownTenant.stdout]).toEqual([1, '']);
      expect(unknownTenant.stderr).toMatch(/^error: /);
      expect([noPepper.code, noPepper.stdout]).toEqual([2, '']);
      expect(noPepper.stderr).toMatch(/SECRET_PEPPER/);
      expect(await grant(other.tenant, theirs.client_id, theirs.secret)).toBe(200);
      const listed = await request(h.internalUrl)
        .get(`/internal/v1/realms/${other.tenant}/service-accounts`)
        .set('authorization', AUTH);
      expect(listed.status).toBe(200);
    },
    CLI_TEST_MS,
  );
});
