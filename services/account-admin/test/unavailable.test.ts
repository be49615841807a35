import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, TEST_DATABASE_URL, uniqueName } from '@plant/test-kit';
import type { PortalSession } from './helpers/browser-client.js';
import {
  startPortal,
  startSignedInPortal,
  type Platform,
  type PortalHandle,
  type TestTenant,
} from './helpers/platform.js';

/** The same Postgres server, a database that does not exist: every audit query fails. */
const BROKEN_DATABASE_URL = TEST_DATABASE_URL.replace(
  /\/[^/]*$/,
  '/plantstore_account_admin_missing',
);

function post(url: string, session: PortalSession, body?: unknown, method = 'POST') {
  return fetch(url, {
    method,
    headers: session.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('when the audit trail cannot be written', () => {
  let ts: Platform;
  let portal: PortalHandle;
  let brokenPortal: PortalHandle;
  let acme: TestTenant;
  let admin: PortalSession;

  beforeAll(async () => {
    ({ ts, portal, acme, admin } = await startSignedInPortal());
    // A second replica sharing Redis and the session secret, whose Postgres is unusable.
    brokenPortal = await startPortal(ts, {
      port: await freePort(),
      env: { DATABASE_URL: BROKEN_DATABASE_URL },
    });
  }, 60_000);

  afterAll(async () => {
    await brokenPortal?.stop();
    await portal?.stop();
    await ts?.close();
  });

  test('When a create cannot be audited, then it answers 503 without a secret and the created account is deleted again', async () => {
    const name = uniqueName('unaudited');

    const res = await post(`${brokenPortal.url}/api/v1/service-accounts`, admin, { name });

    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({
      error: 503,
      message: 'The audit trail is temporarily unavailable; nothing was changed, try again',
    });
    const list = (await (
      await fetch(`${portal.url}/api/v1/service-accounts`, { headers: admin.headers() })
    ).json()) as Array<{ name: string }>;
    expect(list.map((a) => a.name)).not.toContain(name);
    expect(
      brokenPortal.logs.some((line) =>
        line.includes('the created service account was deleted again'),
      ),
    ).toBe(true);
    // The name is free again: nothing half-done blocks a retry.
    expect((await post(`${portal.url}/api/v1/service-accounts`, admin, { name })).status).toBe(201);
  });

  test('When a reset cannot be audited, then the new secret is still returned (the old one is gone) and the event is logged for replay without the secret', async () => {
    const created = (await (
      await post(`${portal.url}/api/v1/service-accounts`, admin, { name: uniqueName('reset') })
    ).json()) as { client_id: string; secret: string };

    const res = await post(
      `${brokenPortal.url}/api/v1/service-accounts/${created.client_id}/reset-secret`,
      admin,
    );

    expect(res.status).toBe(200);
    const reset = (await res.json()) as { secret: string };
    const line = brokenPortal.logs.find(
      (l) => l.includes('audit event not persisted') && l.includes(created.client_id),
    );
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({
      level: 'error',
      auditEvent: {
        action: 'service_account.reset_secret',
        targetClientId: created.client_id,
        tenant: acme.tenant,
      },
    });
    expect(brokenPortal.logs.join('\n')).not.toContain(reset.secret);
    const metrics = await (await fetch(`${brokenPortal.managementUrl}/metrics`)).text();
    expect(metrics).toMatch(/^audit_write_failures_total\{service="account-admin"\} [1-9]/m);
  });

  test('When Postgres is unusable, then /readyz answers 503 naming the database', async () => {
    const res = await fetch(`${brokenPortal.managementUrl}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 503, message: 'Not ready: database' });
    expect((await fetch(`${portal.managementUrl}/readyz`)).status).toBe(200);
  });
});

describe('when the token service is down', () => {
  let ts: Platform;
  let portal: PortalHandle;
  let acme: TestTenant;
  let admin: PortalSession;
  let existing: { client_id: string };

  beforeAll(async () => {
    ({ ts, portal, acme, admin } = await startSignedInPortal({ revocation: false }));
    existing = (await (
      await post(`${portal.url}/api/v1/service-accounts`, admin, { name: uniqueName('before') })
    ).json()) as { client_id: string };
    await ts.stopTokenService();
  }, 60_000);

  afterAll(async () => {
    await portal?.stop();
    await ts?.close();
  });

  test('When an admin creates, changes, resets or deletes, then each answers 503 and no audit event is written', async () => {
    const before = (await (
      await fetch(`${portal.url}/api/v1/audit-events`, { headers: admin.headers() })
    ).json()) as unknown[];
    const calls: Array<[string, string, unknown]> = [
      ['POST', '/service-accounts', { name: uniqueName('during') }],
      ['PATCH', `/service-accounts/${existing.client_id}`, { role: 'Edit' }],
      ['POST', `/service-accounts/${existing.client_id}/reset-secret`, undefined],
      ['DELETE', `/service-accounts/${existing.client_id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await post(`${portal.url}/api/v1${path}`, admin, body, method);
      expect({ method, path, status: res.status, body: await res.json() }).toEqual({
        method,
        path,
        status: 503,
        body: {
          error: 503,
          message: 'The token service is temporarily unavailable; nothing was changed, try again',
        },
      });
    }
    const after = (await (
      await fetch(`${portal.url}/api/v1/audit-events`, { headers: admin.headers() })
    ).json()) as unknown[];
    expect(after).toEqual(before);
    expect(after).toHaveLength(1);
  });

  test('When someone starts a sign-in, then a friendly page says sign-in is unavailable', async () => {
    const res = await fetch(`${portal.url}/login?tenant=${acme.tenant}`, { redirect: 'manual' });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('Sign-in is temporarily unavailable');
  });
});

describe('when Redis is down', () => {
  let ts: Platform;
  let portal: PortalHandle;
  let noRedisPortal: PortalHandle;
  let acme: TestTenant;
  let admin: PortalSession;

  beforeAll(async () => {
    ({ ts, portal, acme, admin } = await startSignedInPortal());
    // Nothing listens on this port: every session read fails.
    noRedisPortal = await startPortal(ts, {
      port: await freePort(),
      revocation: false,
      env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}`, SESSION_STORE_WAIT_MS: '500' },
    });
  }, 60_000);

  afterAll(async () => {
    await noRedisPortal?.stop();
    await portal?.stop();
    await ts?.close();
  });

  test('When a session request arrives, then the API answers 503 and pages show an unavailable page; nothing is created', async () => {
    const name = uniqueName('noredis');
    const api = await post(`${noRedisPortal.url}/api/v1/service-accounts`, admin, { name });
    const page = await fetch(`${noRedisPortal.url}/settings/service-accounts`, {
      headers: { cookie: admin.cookie() },
      redirect: 'manual',
    });
    const signInStart = await fetch(`${noRedisPortal.url}/login?tenant=${acme.tenant}`, {
      redirect: 'manual',
    });
    const ready = await fetch(`${noRedisPortal.managementUrl}/readyz`);

    expect([api.status, await api.json()]).toEqual([
      503,
      { error: 503, message: 'Sessions are temporarily unavailable; try again' },
    ]);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('Sessions are temporarily unavailable');
    expect(signInStart.status).toBe(503);
    expect(await signInStart.text()).toContain('Temporarily unavailable');
    expect([ready.status, await ready.json()]).toEqual([
      503,
      { error: 503, message: 'Not ready: redis' },
    ]);
    const list = (await (
      await fetch(`${portal.url}/api/v1/service-accounts`, { headers: admin.headers() })
    ).json()) as Array<{ name: string }>;
    expect(list.map((a) => a.name)).not.toContain(name);
  });
});
