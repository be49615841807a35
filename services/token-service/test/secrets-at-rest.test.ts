import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { clientAssertion, startWorkloadIssuer } from '@plant/test-kit';
import {
  ADMIN_PASSWORD,
  basic,
  decodeJwt,
  startHarness,
  uniqueIp,
  type Harness,
} from './helpers/harness.js';
import { keyedAccount, sendAssertion } from './helpers/assertion-client.js';
import { FEDERATION_TEST_ENV, trustedWorkload } from './helpers/workload-client.js';
import { internal } from './helpers/internal-client.js';
import { portalDriver } from './helpers/portal-driver.js';
import { KeyEncryption } from '../src/signing-keys/key-encryption.js';
import { decryptSigningKey } from '../src/signing-keys/signing-keys.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness(FEDERATION_TEST_ENV);
});

afterAll(async () => {
  await h.close();
});

/** Every row of every table of the auth schema, as text (bytea as hex and as text). */
async function dumpAuthSchema(): Promise<string> {
  const tables = await h.service.db.raw<{ rows: Array<{ table_name: string }> }>(
    "select table_name from information_schema.tables where table_schema = 'auth' and table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { table_name } of tables.rows) {
    const rows = await h.service.db.raw<{ rows: Array<{ t: string }> }>(
      `select t::text as t from auth.${table_name} t`,
    );
    parts.push(...rows.rows.map((r) => r.t));
    const binaries = await h.service.db.raw<{ rows: Array<{ column_name: string }> }>(
      "select column_name from information_schema.columns where table_schema = 'auth' and table_name = ? and data_type = 'bytea'",
      [table_name],
    );
    for (const { column_name } of binaries.rows) {
      const values = await h.service.db.raw<{ rows: Array<{ v: Buffer | null }> }>(
        `select ${column_name} as v from auth.${table_name}`,
      );
      parts.push(...values.rows.map((r) => r.v?.toString('latin1') ?? ''));
    }
  }
  return parts.join('\n');
}

describe('secrets at rest and in logs', () => {
  test('When a secret is created, used, reset and used again, then neither secret appears in the auth schema or the logs', async () => {
    const { tenant } = await h.createTenant();
    const api = internal(h);
    const account = await api.createServiceAccount(tenant);
    const token = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('x-forwarded-for', uniqueIp())
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('x-forwarded-for', uniqueIp())
      .type('form')
      .send({
        grant_type: 'client_credentials',
        client_id: account.client_id,
        client_secret: `${account.secret}x`,
      })
      .expect(401);
    const reset = await api.reset(tenant, account.client_id).expect(200);
    await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('x-forwarded-for', uniqueIp())
      .type('form')
      .send({
        grant_type: 'client_credentials',
        client_id: account.client_id,
        client_secret: reset.body.secret,
      })
      .expect(200);

    const stored = await dumpAuthSchema();
    const logs = h.logs.join('\n');

    expect(stored).toContain(account.client_id);
    expect(logs).toContain('request completed');
    for (const secret of [account.secret, reset.body.secret as string]) {
      // The whole secret, and its random body without prefix or checksum.
      for (const needle of [secret, secret.slice(4, 47)]) {
        expect(stored).not.toContain(needle);
        expect(logs).not.toContain(needle);
      }
    }
    expect(logs).not.toContain(token.body.access_token);
  });

  test('When a realm is created, then its private key is stored only encrypted and decrypts under the key-encryption key', async () => {
    const { tenant, kid } = await h.createTenant();
    const row = await h.service.db('signing_keys').where({ realm: tenant, kid }).first();
    const jwk = decryptSigningKey(
      new KeyEncryption(h.config.KEY_ENCRYPTION_KEY),
      kid,
      row.private_key_encrypted as Buffer,
    );

    const stored = await dumpAuthSchema();

    expect(jwk).toMatchObject({
      kty: 'RSA',
      kid,
      alg: 'RS256',
      d: expect.any(String),
      p: expect.any(String),
    });
    expect(stored).not.toContain(jwk.d as string);
    expect(stored).not.toContain(jwk.p as string);
    expect(() =>
      decryptSigningKey(
        new KeyEncryption(Buffer.alloc(32, 9).toString('base64')),
        kid,
        row.private_key_encrypted as Buffer,
      ),
    ).toThrow();
  });

  test('When a user signs in and the portal exchanges the code, then neither the session id, the interaction id, the code nor the userinfo token is in the auth schema, and the token still answers userinfo', async () => {
    const { tenant, adminEmail } = await h.createTenant();
    const { browser, startSignIn, completeSignIn, exchange } = portalDriver(h, tenant);
    const b = browser();
    const started = await startSignIn(b);
    const { resume, callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const code = callback.searchParams.get('code')!;
    const tokens = await exchange(code, started.verifier);
    const pending = await startSignIn(browser());
    const sessionId = /(?:^|;\s*)_session=([^;]+)/.exec(
      (resume.headers['set-cookie'] as unknown as string[]).join('; '),
    )?.[1];

    const stored = await dumpAuthSchema();
    const userinfo = await request(h.publicUrl)
      .get(`/realms/${tenant}/protocol/openid-connect/userinfo`)
      .set('authorization', `Bearer ${tokens.body.access_token}`);

    const models = await h.service
      .db('oidc_payloads')
      .where({ realm: tenant })
      .distinct('model')
      .pluck('model');
    expect(models.sort()).toEqual([
      'AccessToken',
      'AuthorizationCode',
      'Grant',
      'Interaction',
      'Session',
    ]);
    expect(userinfo.status).toBe(200);
    const values = {
      sessionId: sessionId!,
      interaction: started.interactionPath.split('/').pop()!,
      pendingInteraction: pending.interactionPath.split('/').pop()!,
      code,
      accessToken: tokens.body.access_token as string,
    };
    expect(Object.values(values).every((v) => typeof v === 'string' && v.length >= 21)).toBe(true);
    expect(
      Object.entries(values)
        .filter(([, v]) => stored.includes(v))
        .map(([name]) => name),
    ).toEqual([]);
  });

  test('When sign-ins fail for a known and an unknown email, then no Redis key holds either email in clear, and the failures still count (429 past the budget)', async () => {
    const { tenant } = await h.createTenant();
    const user = await h.createUser(tenant, 'View');
    const unknown = `nobody-${randomUUID()}@example.test`;
    const { browser, startSignIn } = portalDriver(h, tenant);
    const b = browser();
    const started = await startSignIn(b);
    const ip = uniqueIp();
    const signIn = (email: string) =>
      b
        .post(`${started.interactionPath}/login`)
        .set('x-forwarded-for', ip)
        .type('form')
        .send({ csrf: started.csrf, email, password: 'wrong password' });

    const statuses: number[] = [];
    for (let i = 0; i <= h.config.SIGN_IN_FAILURES_PER_ACCOUNT; i += 1)
      statuses.push((await signIn(user.email)).status);
    await signIn(unknown).expect(401);

    const keys: string[] = [];
    for await (const batch of h.service.redis.scanStream({ match: '*', count: 1000 }))
      keys.push(...(batch as string[]));
    const emails = [user.email, unknown].flatMap((email) => [
      email,
      email.toLowerCase(),
      email.split('@')[0]!,
    ]);
    expect(emails.filter((email) => keys.some((key) => key.includes(email)))).toEqual([]);
    expect(statuses).toEqual([
      ...Array<number>(h.config.SIGN_IN_FAILURES_PER_ACCOUNT).fill(401),
      429,
    ]);
  });

  test('When accounts authenticate with a key and with a trusted workload (assertions are bearer values), then neither assertion, nor its jti, nor a signature is in the auth schema, the logs or Redis in clear', async () => {
    const { tenant } = await h.createTenant();
    const cluster = await startWorkloadIssuer();
    try {
      const keyed = await keyedAccount(h, tenant);
      const assertion = clientAssertion({
        clientId: keyed.account.client_id,
        audience: h.issuer(tenant),
        key: keyed.key,
        kid: keyed.kid,
        claims: { jti: `jti-${randomUUID()}` },
      });
      await sendAssertion(h, tenant, keyed.account.client_id, assertion).expect(200);
      await sendAssertion(h, tenant, keyed.account.client_id, assertion).expect(401);
      const workload = await trustedWorkload(h, tenant, cluster);
      const platformToken = cluster.mint({
        subject: workload.subject,
        audience: workload.audience,
      });
      await sendAssertion(h, tenant, workload.account.client_id, platformToken).expect(200);

      const stored = await dumpAuthSchema();
      const logs = h.logs.join('\n');
      const redisKeys = (await h.service.redis.keys('plantstore:assertion-jti:*')).join('\n');

      const needles = [
        assertion,
        assertion.split('.')[2]!,
        decodeJwt(assertion).payload.jti as string,
        platformToken,
        platformToken.split('.')[2]!,
      ];
      expect(
        needles.filter((n) => stored.includes(n) || logs.includes(n) || redisKeys.includes(n)),
      ).toEqual([]);
      expect(stored).toContain(keyed.kid);
    } finally {
      await cluster.close();
    }
  });
});
