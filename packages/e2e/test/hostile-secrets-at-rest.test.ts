/**
 * Secrets at rest: a full scenario through the three processes (tenant and users through
 * the CLI, portal sign-in with a password, service accounts created, reset, changed and
 * deleted through the portal and the internal API, tokens of every kind used and refused,
 * wrong passwords and secrets), then a dump of the auth, plants and admin schemas, the
 * platform's Redis, and every line the processes logged, searched for each secret,
 * password and bearer token of the scenario.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  decodeJwt,
  httpRequest,
  startPlatform,
  TEST_SECRETS,
  USER_PASSWORD,
  type Platform,
} from '../src/index.js';

const run = promisify(execFile);
let p: Platform;

beforeAll(async () => {
  p = await startPlatform({ plantStores: 1, accountAdmin: true });
}, 60_000);

afterAll(() => p?.close());

async function dumpSchemas(): Promise<string> {
  const { stdout } = await run(
    'pg_dump',
    ['--data-only', '--no-owner', '-n', 'auth', '-n', 'plants', '-n', 'admin', p.databaseUrl],
    { maxBuffer: 512 * 1024 * 1024 },
  );
  return stdout;
}

/** Every key and value of the platform's own Redis (sessions, throttles, pending sign-ins). */
async function dumpRedis(): Promise<string> {
  const keys = (await p.redis.cli('--scan')).split('\n').filter(Boolean);
  const parts: string[] = [];
  for (const key of keys) {
    const type = await p.redis.cli('TYPE', key);
    const read: Record<string, string[]> = {
      string: ['GET', key],
      hash: ['HGETALL', key],
      list: ['LRANGE', key, '0', '-1'],
      set: ['SMEMBERS', key],
      zset: ['ZRANGE', key, '0', '-1', 'WITHSCORES'],
    };
    parts.push(key, read[type] ? await p.redis.cli(...read[type]!) : type);
  }
  return parts.join('\n');
}

describe('Secrets at rest', () => {
  test("When a full scenario has run, then no secret, password, bearer token or configured secret appears in the three schemas, the Redis data or any process log, while the scenario's own rows are there", async () => {
    const wrongPassword = 'not-the-password-e2e-1f3a';
    const tenant = await p.createTenant('sr');
    const viewer = await p.createUser(tenant, 'View');
    const admin = `admin@${tenant}.test`;

    // Portal: sign in with the password, create, reset, change a service account (CSRF-protected session).
    const session = await p.portalSession(tenant, admin);
    const portal = (method: string, path: string, body?: unknown) =>
      httpRequest(`${p.portalUrl}/api/v1${path}`, {
        method,
        headers: {
          cookie: session.cookie,
          'x-csrf-token': session.csrf,
          'content-type': 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await portal('POST', '/service-accounts', { name: 'at-rest-probe' });
    expect(created.status).toBe(201);
    const { client_id: clientId, secret: firstSecret } = created.body as {
      client_id: string;
      secret: string;
    };
    expect((await portal('PATCH', `/service-accounts/${clientId}`, { role: 'Edit' })).status).toBe(
      200,
    );
    const oldToken = await p.grantToken(tenant, { clientId, secret: firstSecret });
    const reset = await portal('POST', `/service-accounts/${clientId}/reset-secret`);
    expect(reset.status).toBe(200);
    const secondSecret = (reset.body as { secret: string }).secret;

    // Internal API: an account created and deleted.
    const doomed = await p.createServiceAccount(tenant);
    const doomedToken = await p.grantToken(tenant, doomed);
    await p.deleteServiceAccount(tenant, doomed.clientId);

    // Tokens used and refused; secrets and passwords guessed.
    const token = await p.grantToken(tenant, { clientId, secret: secondSecret });
    expect((await p.createPlant(token, { id: 7, name: 'at rest' })).status).toBe(200);
    expect((await p.listPlants(token)).status).toBe(200);
    expect((await p.listPlants(oldToken)).status).toBe(401);
    expect((await p.listPlants(doomedToken)).status).toBe(401);
    expect((await p.requestToken(tenant, clientId, firstSecret)).status).toBe(401);
    const basic = await httpRequest(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secondSecret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(basic.status).toBe(200);
    const userToken = await p.userToken(tenant, admin);
    const viewerToken = await p.userToken(
      tenant,
      viewer,
      ACCOUNT_ADMIN_AUDIENCE,
      'openid email profile plants:read',
    );
    expect(
      (
        await httpRequest(`${p.portalUrl}/api/v1/service-accounts`, {
          headers: { authorization: `Bearer ${userToken}` },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await httpRequest(`${p.portalUrl}/api/v1/service-accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${viewerToken}`, 'content-type': 'application/json' },
          body: '{"name":"x"}',
        })
      ).status,
    ).toBe(403);
    expect(await p.failSignIn(tenant, admin, wrongPassword)).toBe(401);
    const failed = await httpRequest(
      `${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'password',
          username: admin,
          password: wrongPassword,
          client_id: 'portal',
        }).toString(),
      },
    );
    expect(failed.status).toBeGreaterThanOrEqual(400);

    const [schemas, redis] = [await dumpSchemas(), await dumpRedis()];
    const logs = (await Promise.all(p.processes.map((svc) => svc.flushedLogs()))).flat().join('\n');

    // The dump and logs do hold this scenario (else the scan below could not fail).
    expect(schemas).toContain(tenant);
    expect(schemas).toContain(clientId);
    expect(logs).toContain(clientId);
    expect(redis).toContain(tenant);
    const secrets: Record<string, string> = {
      firstSecret,
      secondSecret,
      doomedSecret: doomed.secret,
      userPassword: USER_PASSWORD,
      wrongPassword,
      ...TEST_SECRETS,
      sessionCookie: session.cookie.match(/aa_session=([^;]+)/)![1]!,
    };
    for (const [name, jwt] of Object.entries({
      oldToken,
      token,
      doomedToken,
      userToken,
      viewerToken,
      basicToken: (basic.body as { access_token: string }).access_token,
    })) {
      secrets[name] = jwt;
      secrets[`${name}Signature`] = jwt.split('.')[2]!;
      expect(decodeJwt(jwt).payload.iss).toBe(`${p.authUrl}/realms/${tenant}`);
    }
    const found = Object.entries(secrets).flatMap(([name, value]) =>
      [
        ['schemas', schemas],
        ['redis', redis],
        ['logs', logs],
      ]
        .filter(([, text]) => text!.includes(value))
        .map(([where]) => `${name} in ${where}`),
    );
    expect(found).toEqual([]);
  });
});
