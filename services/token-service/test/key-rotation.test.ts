import { execFile } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually, REPO_ROOT, uniqueName } from '@plant/test-kit';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import {
  basic,
  decodeJwt,
  startHarness,
  TEST_ENV,
  uniqueIp,
  type Harness,
} from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

const run = promisify(execFile);
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

async function token(tenant: string, clientId: string, secret: string): Promise<string> {
  const res = await request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' })
    .expect(200);
  return res.body.access_token as string;
}

async function jwks(tenant: string): Promise<Array<Record<string, unknown>>> {
  return (
    await request(h.publicUrl).get(`/realms/${tenant}/protocol/openid-connect/certs`).expect(200)
  ).body.keys;
}

function verifies(tokenValue: string, keys: Array<Record<string, unknown>>): boolean {
  const key = keys.find((k) => k.kid === decodeJwt(tokenValue).header.kid);
  if (!key) return false;
  jwt.verify(tokenValue, createPublicKey({ key: key as never, format: 'jwk' }), {
    algorithms: [key.alg as jwt.Algorithm],
  });
  return true;
}

const CLI = join(REPO_ROOT, 'services/token-service/dist/cli.js');
const cliEnv = () => ({
  PATH: process.env.PATH ?? '',
  DATABASE_URL: TEST_ENV.DATABASE_URL,
  REDIS_URL: TEST_ENV.REDIS_URL,
  KEY_ENCRYPTION_KEY: TEST_ENV.KEY_ENCRYPTION_KEY,
  AUTH_URL: h.publicUrl,
});

/** The CLI's JSON line, or its exit code and error line. */
async function cli(
  ...args: string[]
): Promise<{ code: number; json?: Record<string, unknown>; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: cliEnv() });
    return { code: 0, json: JSON.parse(stdout) as Record<string, unknown>, stderr };
  } catch (err) {
    return { code: (err as { code: number }).code, stderr: (err as { stderr: string }).stderr };
  }
}

/** A grant that waits for the replica to hear a key change announced on Redis. */
async function tokenWithKid(
  tenant: string,
  clientId: string,
  secret: string,
  kid: unknown,
): Promise<string> {
  // A rotation that failed has no kid to wait for: its own assertion says why, at once.
  if (typeof kid !== 'string') return token(tenant, clientId, secret);
  let value = '';
  await eventually(
    async () => {
      value = await token(tenant, clientId, secret);
      return decodeJwt(value).header.kid === kid;
    },
    `a token signed by ${String(kid)}`,
  );
  return value;
}

describe('signing key rotation (CLI keys rotate)', () => {
  test('When the key is rotated, then new tokens use the new kid at once, and the old public key stays published until old tokens expire', async () => {
    const { tenant, kid: oldKid } = await h.createTenant();
    const account = await internal(h).createServiceAccount(tenant);
    const before = await token(tenant, account.client_id, account.secret);

    const rotated = (await cli('keys', 'rotate', tenant)).json!;
    // The running service hears the rotation on Redis; give the event a moment to arrive.
    const after = await tokenWithKid(tenant, account.client_id, account.secret, rotated.kid);
    const keys = await jwks(tenant);

    expect(rotated).toEqual({ tenant, kid: expect.any(String), alg: 'RS256', retired: 1 });
    expect(rotated.kid).not.toBe(oldKid);
    expect(decodeJwt(before).header.kid).toBe(oldKid);
    expect(decodeJwt(after).header.kid).toBe(rotated.kid);
    expect(keys.map((k) => k.kid)).toEqual([rotated.kid, oldKid]);
    expect(verifies(before, keys)).toBe(true);
    expect(verifies(after, keys)).toBe(true);
  });

  test('When the CLI rotates a realm to ES256, then it signs ES256 at once, and a later plain rotation keeps ES256 with yet another key', async () => {
    const { tenant, kid: rsaKid } = await h.createTenant();
    const account = await internal(h).createServiceAccount(tenant);
    const before = await token(tenant, account.client_id, account.secret);

    const switched = await cli('keys', 'rotate', tenant, '--alg', 'ES256');
    const esToken = await tokenWithKid(
      tenant,
      account.client_id,
      account.secret,
      switched.json?.kid,
    );
    const shown = await cli('keys', 'show', tenant);
    const again = await cli('keys', 'rotate', tenant);
    const keys = await jwks(tenant);

    expect(switched.json).toEqual({ tenant, kid: expect.any(String), alg: 'ES256', retired: 1 });
    expect(decodeJwt(esToken).header).toEqual({
      alg: 'ES256',
      typ: 'at+jwt',
      kid: switched.json!.kid,
    });
    expect(shown.json).toEqual({ tenant, alg: 'ES256', kid: switched.json!.kid });
    expect(again.json).toEqual({ tenant, kid: expect.any(String), alg: 'ES256', retired: 1 });
    expect(keys.map((k) => [k.kid, k.alg])).toEqual([
      [again.json!.kid, 'ES256'],
      [switched.json!.kid, 'ES256'],
      [rsaKid, 'RS256'],
    ]);
    expect(verifies(before, keys)).toBe(true);
    expect(verifies(esToken, keys)).toBe(true);
  });

  test('When a tenant is created with --alg ES256, then its first key is P-256; an unknown --alg, or --alg where it does not apply, exits 2', async () => {
    const tenant = uniqueName('es');

    const created = await cli(
      'tenant',
      'create',
      tenant,
      '--admin-email',
      `admin@${tenant}.test`,
      '--admin-password',
      'a long password',
      '--alg',
      'ES256',
    );
    const hs = await cli('keys', 'rotate', tenant, '--alg', 'HS256');
    const misplaced = await cli('keys', 'show', tenant, '--alg', 'ES256');

    expect(created.json).toMatchObject({ tenant, alg: 'ES256', kid: expect.any(String) });
    expect((await jwks(tenant)).map((k) => [k.kty, k.crv, k.alg])).toEqual([
      ['EC', 'P-256', 'ES256'],
    ]);
    expect(hs).toEqual({ code: 2, stderr: 'error: --alg must be one of RS256, ES256\n' });
    expect(misplaced).toEqual({ code: 2, stderr: 'error: --alg does not apply to keys show\n' });
  });

  test('When an unknown tenant is rotated, then it exits 1 with Tenant not found, with or without --alg; a realm left without an active key gets an RS256 one', async () => {
    const plain = await cli('keys', 'rotate', uniqueName('none'));
    const switching = await cli('keys', 'rotate', uniqueName('none'), '--alg', 'ES256');
    const { tenant } = await h.createTenant();
    await h.service
      .db('signing_keys')
      .where({ realm: tenant })
      .whereNull('retired_at')
      .update({ retired_at: h.service.db.raw('now()') });
    const { rotateSigningKey } = await import('../src/signing-keys/signing-keys.js');
    const rotated = await rotateSigningKey(h.service.identity, tenant);

    expect(plain).toEqual({ code: 1, stderr: 'error: Tenant not found\n' });
    expect(switching).toEqual({ code: 1, stderr: 'error: Tenant not found\n' });
    expect(rotated).toMatchObject({ tenant, alg: 'RS256', retired: 0 });
  });

  test('When the retired key is older than a token lifetime plus skew, then it leaves the JWKS', async () => {
    const { tenant, kid: oldKid } = await h.createTenant();
    const { rotateSigningKey } = await import('../src/signing-keys/signing-keys.js');
    const rotated = await rotateSigningKey(h.service.identity, tenant);

    await h.service
      .db('signing_keys')
      .where({ kid: oldKid })
      .update({ retired_at: h.service.db.raw("now() - interval '361 seconds'") });
    const keys = await jwks(tenant);

    expect(keys.map((k) => k.kid)).toEqual([rotated.kid]);
  });
});
