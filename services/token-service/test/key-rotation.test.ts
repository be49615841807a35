import { execFile } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { REPO_ROOT } from '@plant/test-kit';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { basic, decodeJwt, startHarness, TEST_ENV, uniqueIp, type Harness } from './helpers/harness.js';
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
  const res = await request(h.publicUrl).post(h.tokenUrl(tenant)).set('x-forwarded-for', uniqueIp()).set('authorization', basic(clientId, secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
  return res.body.access_token as string;
}

async function jwks(tenant: string): Promise<Array<Record<string, unknown>>> {
  return (await request(h.publicUrl).get(`/realms/${tenant}/protocol/openid-connect/certs`).expect(200)).body.keys;
}

function verifies(tokenValue: string, keys: Array<Record<string, unknown>>): boolean {
  const key = keys.find((k) => k.kid === decodeJwt(tokenValue).header.kid);
  if (!key) return false;
  jwt.verify(tokenValue, createPublicKey({ key: key as never, format: 'jwk' }), { algorithms: ['RS256'] });
  return true;
}

describe('signing key rotation (CLI keys rotate)', () => {
  test('When the key is rotated, then new tokens use the new kid at once, and the old public key stays published until old tokens expire', async () => {
    const { tenant, kid: oldKid } = await h.createTenant();
    const account = await internal(h).createServiceAccount(tenant);
    const before = await token(tenant, account.client_id, account.secret);

    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'services/token-service/dist/cli.js'), 'keys', 'rotate', tenant], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: TEST_ENV.DATABASE_URL, REDIS_URL: TEST_ENV.REDIS_URL, KEY_ENCRYPTION_KEY: TEST_ENV.KEY_ENCRYPTION_KEY },
    });
    const rotated = JSON.parse(stdout) as { tenant: string; kid: string; retired: number };
    // The running service hears the rotation on Redis; give the event a moment to arrive.
    let after = await token(tenant, account.client_id, account.secret);
    for (let i = 0; i < 100 && decodeJwt(after).header.kid !== rotated.kid; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      after = await token(tenant, account.client_id, account.secret);
    }
    const keys = await jwks(tenant);

    expect(rotated).toEqual({ tenant, kid: expect.any(String), retired: 1 });
    expect(rotated.kid).not.toBe(oldKid);
    expect(decodeJwt(before).header.kid).toBe(oldKid);
    expect(decodeJwt(after).header.kid).toBe(rotated.kid);
    expect(keys.map((k) => k.kid)).toEqual([rotated.kid, oldKid]);
    expect(verifies(before, keys)).toBe(true);
    expect(verifies(after, keys)).toBe(true);
  });

  test('When the retired key is older than a token lifetime plus skew, then it leaves the JWKS', async () => {
    const { tenant, kid: oldKid } = await h.createTenant();
    const { rotateSigningKey } = await import('../src/domain/rotate-signing-key.js');
    const rotated = await rotateSigningKey(h.service.identity, tenant);

    await h.service.db('signing_keys').where({ kid: oldKid }).update({ retired_at: h.service.db.raw("now() - interval '361 seconds'") });
    const keys = await jwks(tenant);

    expect(keys.map((k) => k.kid)).toEqual([rotated.kid]);
  });
});
