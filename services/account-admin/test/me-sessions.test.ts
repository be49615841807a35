/**
 * A person's portal sessions (/api/v1/me/sessions) and an Account Admin's "sign out everywhere"
 * (/api/v1/users/{id}/sessions), through the real portal and token service: what is listed,
 * what ends, what is audited, and the attacker's attempts (forged handles, another person's
 * session, another tenant's person, bursts).
 */
import { describe, expect, test } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { freePort, TEST_DATABASE_URL, TEST_SECRETS } from '@plant/test-kit';
import { Redis } from 'ioredis';
import { createSessionStore } from '../src/sessions/session-store.js';
import { CookieJar, follow, type PortalSession, signIn } from './helpers/browser-client.js';
import { arraySchemaErrors, schemaErrors } from './helpers/openapi-check.js';
import { createTenant, startPortal } from './helpers/platform.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

interface SessionView {
  id: string;
  browser: string | null;
  address: string | null;
  started_at: string;
  last_seen_at: string;
  current: boolean;
}

async function sessionsOf(session: PortalSession): Promise<SessionView[]> {
  const res = await p.call(session, 'GET', '/me/sessions');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return (await res.json()) as SessionView[];
}

async function subOf(session: PortalSession): Promise<string> {
  return ((await (await p.call(session, 'GET', '/me')).json()) as { sub: string }).sub;
}

/** A fresh person of acme with the given role, and two portal sessions of theirs. */
async function personWithTwoSessions(role: 'View' | 'Edit' | 'Account Admin' = 'View') {
  const email = await p.ts.createUser(p.acme.tenant, role);
  const user = { email, password: p.acme.viewer.password };
  const first = await signIn(p.portal.url, p.acme.tenant, user);
  const second = await signIn(p.portal.url, p.acme.tenant, user);
  return { user, first, second, sub: await subOf(first) };
}

describe('my sessions', () => {
  test('When a person is signed in from two browsers, then each lists both, newest first, the asking one marked current, under handles that are not the cookie', async () => {
    const { first, second } = await personWithTwoSessions();

    const fromFirst = await sessionsOf(first);
    const fromSecond = await sessionsOf(second);

    expect(fromFirst).toHaveLength(2);
    expect(arraySchemaErrors('PortalSession', fromFirst)).toEqual([]);
    expect(fromFirst.map((s) => s.current)).toEqual([false, true]);
    expect(fromSecond.map((s) => s.current)).toEqual([true, false]);
    expect(fromSecond.map((s) => s.id)).toEqual(fromFirst.map((s) => s.id));
    for (const s of fromFirst) {
      expect(s).toEqual({
        id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        browser: 'node',
        address: expect.stringMatching(/127\.0\.0\.1$/),
        started_at: ISO,
        last_seen_at: ISO,
        current: expect.any(Boolean),
      });
      for (const cookie of [first.jar.get('aa_session'), second.jar.get('aa_session')])
        expect(s.id).not.toBe(cookie);
    }
  });

  test('When a person ends their other session, then it is signed out at its next request, the asking one carries on, and the end is audited', async () => {
    const { first, second } = await personWithTwoSessions('Account Admin');
    const other = (await sessionsOf(first)).find((s) => !s.current)!;

    const res = await p.call(first, 'DELETE', `/me/sessions/${other.id}`);

    expect(res.status).toBe(204);
    expect((await p.call(second, 'GET', '/me')).status).toBe(401);
    expect((await p.call(first, 'GET', '/me')).status).toBe(200);
    expect((await sessionsOf(first)).map((s) => s.current)).toEqual([true]);
    const events = (await p.auditEvents(first)).filter((e) => e.action === 'session.end');
    expect(events).toEqual([
      expect.objectContaining({
        action: 'session.end',
        client_id: other.id,
        actor_sub: await subOf(first),
        address: expect.stringMatching(/127\.0\.0\.1$/),
      }),
    ]);
  });

  test('When a person ends their current session through the API, then that session is signed out', async () => {
    const { first } = await personWithTwoSessions();
    const current = (await sessionsOf(first)).find((s) => s.current)!;

    expect((await p.call(first, 'DELETE', `/me/sessions/${current.id}`)).status).toBe(204);

    expect((await p.call(first, 'GET', '/me')).status).toBe(401);
  });

  test("When someone names another person's session, a made-up handle, a cookie value or an over-long id, then each is 404 and nothing ends", async () => {
    const victim = await personWithTwoSessions();
    const attacker = await personWithTwoSessions();
    const victimHandle = (await sessionsOf(victim.first))[0]!.id;
    const outsider = await createTenant(p.ts);
    const otherTenantAdmin = await signIn(p.portal.url, outsider.tenant, outsider.admin);

    for (const [who, id] of [
      [attacker.first, victimHandle],
      [otherTenantAdmin, victimHandle],
      [attacker.first, 'A'.repeat(43)],
      [attacker.first, victim.first.jar.get('aa_session')!],
      [attacker.first, 'x'.repeat(5000)],
      [attacker.first, '%00'],
    ] as const) {
      const res = await p.call(who, 'DELETE', `/me/sessions/${id}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 404, message: 'Session not found' });
    }
    expect((await p.call(victim.first, 'GET', '/me')).status).toBe(200);
    expect((await p.call(victim.second, 'GET', '/me')).status).toBe(200);
  });

  test('When a session request ends a session without the CSRF header, then it is 403 and nothing ends', async () => {
    const { first } = await personWithTwoSessions();
    const other = (await sessionsOf(first)).find((s) => !s.current)!;

    const res = await p.api(`/me/sessions/${other.id}`, {
      method: 'DELETE',
      headers: { cookie: first.cookie() },
    });

    expect(res.status).toBe(403);
    expect(await sessionsOf(first)).toHaveLength(2);
  });

  test('When a burst of 30 parallel requests ends the same session, then exactly one ends it, the rest are 404, and one event is audited', async () => {
    const { first } = await personWithTwoSessions('Account Admin');
    const other = (await sessionsOf(first)).find((s) => !s.current)!;

    const statuses = await Promise.all(
      Array.from({ length: 30 }, () =>
        p.call(first, 'DELETE', `/me/sessions/${other.id}`).then((r) => r.status),
      ),
    );

    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 404)).toHaveLength(29);
    const events = (await p.auditEvents(first)).filter(
      (e) => e.action === 'session.end' && e.client_id === other.id,
    );
    expect(events).toHaveLength(1);
  });

  test('When a session was last seen over a minute ago, then its next request records the time and address once; within the minute nothing is written', async () => {
    const { first } = await personWithTwoSessions();
    const redis = new Redis(p.ts.redisUrl);
    try {
      const store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
      const id = first.jar.get('aa_session')!;
      const key = `plantstore:admin:session:${createHmac('sha256', TEST_SECRETS.SESSION_SECRET).update(`session:${id}`).digest('base64url')}`;
      const hourAgo = Date.now() - 3_600_000;
      await store.update(id, { ...(await store.get(id))!, lastSeenAt: hourAgo, address: null });

      const seen = (await sessionsOf(first)).find((s) => s.current)!;
      const written = await redis.get(key);
      await sessionsOf(first);
      await sessionsOf(first);

      expect(Date.parse(seen.last_seen_at)).toBeGreaterThan(hourAgo + 3_000_000);
      expect(seen.address).toMatch(/127\.0\.0\.1$/);
      expect(await redis.get(key)).toBe(written);
    } finally {
      redis.disconnect();
    }
  });

  test('When the audit trail cannot be written, then the session still ends (204) and the event is logged in full for replay', async () => {
    const { first } = await personWithTwoSessions();
    const other = (await sessionsOf(first)).find((s) => !s.current)!;
    const broken = await startPortal(p.ts, {
      port: await freePort(),
      env: {
        DATABASE_URL: TEST_DATABASE_URL.replace(/\/[^/]*$/, '/plantstore_account_admin_missing'),
      },
    });
    try {
      const res = await fetch(`${broken.url}/api/v1/me/sessions/${other.id}`, {
        method: 'DELETE',
        headers: first.headers(),
      });

      expect(res.status).toBe(204);
      expect(await sessionsOf(first)).toHaveLength(1);
      const line = broken.logs.find((l) => l.includes('audit event not persisted'))!;
      expect(JSON.parse(line)).toMatchObject({
        level: 'error',
        auditEvent: { action: 'session.end', targetClientId: other.id },
      });
    } finally {
      await broken.stop();
    }
  });

  test('When a bearer caller lists its sessions, then the list is empty', async () => {
    const { userAccessToken } = await import('./helpers/browser-client.js');
    const token = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, p.acme.viewer);

    const res = await p.asBearer(token, 'GET', '/me/sessions');

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
  });
});

describe('sign out everywhere', () => {
  test('When an Account Admin signs a person out everywhere, then each of their sessions is signed out, the realm asks for their password again, and it is audited', async () => {
    const person = await personWithTwoSessions();
    // The realm remembers the person in this browser: a new portal sign-in goes straight through
    // (and replaces that browser's portal session: still two).
    const before = await follow(person.first.jar, `${p.portal.url}/login?tenant=${p.acme.tenant}`);
    expect(before.url.startsWith(p.portal.url)).toBe(true);

    const res = await p.asAdminSession('DELETE', `/users/${person.sub}/sessions`);

    expect(res.status).toBe(200);
    const body = await res.json();
    expect(schemaErrors('SignedOutEverywhere', body)).toEqual([]);
    expect(body).toEqual({ sessions_ended: 2 });
    expect((await p.call(person.first, 'GET', '/me')).status).toBe(401);
    expect((await p.call(person.second, 'GET', '/me')).status).toBe(401);
    const after = await follow(person.first.jar, `${p.portal.url}/login?tenant=${p.acme.tenant}`);
    expect(after.url.startsWith(`${p.ts.authUrl}/realms/${p.acme.tenant}/interaction/`)).toBe(true);
    expect(await after.res.text()).toMatch(/type="password"/);
    const events = (await p.auditEvents()).filter(
      (e) => e.action === 'user.sign_out_everywhere' && e.client_id === person.sub,
    );
    expect(events).toEqual([
      expect.objectContaining({
        actor_email: p.acme.admin.email,
        name: person.user.email,
        details: { sessions_ended: 2 },
      }),
    ]);
  });

  test("When a person's user token was minted before they were signed out everywhere, then it is refused after", async () => {
    const email = await p.ts.createUser(p.acme.tenant, 'View');
    const user = { email, password: p.acme.viewer.password };
    const { userAccessToken } = await import('./helpers/browser-client.js');
    const token = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, user);
    const me = (await (await p.asBearer(token, 'GET', '/me')).json()) as { sub: string };

    expect((await p.asAdminSession('DELETE', `/users/${me.sub}/sessions`)).status).toBe(200);

    const res = await p.asBearer(token, 'GET', '/me');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  test('When a View user, or an admin of another tenant, signs someone out everywhere, then it is 403 or 404 and their sessions live on', async () => {
    const person = await personWithTwoSessions();
    const viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
    const outsider = await createTenant(p.ts);
    const outsiderAdmin = await signIn(p.portal.url, outsider.tenant, outsider.admin);

    const byViewer = await p.call(viewer, 'DELETE', `/users/${person.sub}/sessions`);
    const byOutsider = await p.call(outsiderAdmin, 'DELETE', `/users/${person.sub}/sessions`);

    expect(byViewer.status).toBe(403);
    expect(byOutsider.status).toBe(404);
    expect(await byOutsider.json()).toEqual({ error: 404, message: expect.any(String) });
    expect((await p.call(person.first, 'GET', '/me')).status).toBe(200);
  });

  test('When the person does not exist or the id is malformed, then it is 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', 'x'.repeat(300)]) {
      const res = await p.asAdminSession('DELETE', `/users/${id}/sessions`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 404, message: expect.any(String) });
    }
  });

  test('When a burst of 20 parallel sign-outs everywhere names one person, then every answer is 200 and the person stays signed out', async () => {
    const person = await personWithTwoSessions();

    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        p.asAdminSession('DELETE', `/users/${person.sub}/sessions`).then(async (r) => ({
          status: r.status,
          ended: ((await r.json()) as { sessions_ended: number }).sessions_ended,
        })),
      ),
    );

    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.reduce((sum, r) => sum + r.ended, 0)).toBeLessThanOrEqual(2 + 20);
    expect((await p.call(person.first, 'GET', '/me')).status).toBe(401);
    expect((await p.call(person.second, 'GET', '/me')).status).toBe(401);
    // Nothing is left to sign back in: a new jar gets the password form.
    const fresh = await follow(new CookieJar(), `${p.portal.url}/login?tenant=${p.acme.tenant}`);
    expect(fresh.res.status).toBe(200);
  });
});
