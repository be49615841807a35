/**
 * CSRF protection of the portal session at /api/v1: a state change needs the X-CSRF-Token
 * header matching the csrf_token cookie minted for this very session; reads need none.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { CookieJar, signIn, type PortalSession } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
let viewer: PortalSession;
/** A service account of acme, created by its admin. */
let robot: { client_id: string; secret: string; name: string };

beforeAll(async () => {
  viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
  robot = (await p.createAccount('robot')) as typeof robot;
}, 60_000);

describe('CSRF', () => {
  test('When a session request changes state without X-CSRF-Token, then it answers 403 and nothing is created', async () => {
    const name = uniqueName('csrf');
    const res = await fetch(`${p.portal.url}/api/v1/service-accounts`, {
      method: 'POST',
      headers: { cookie: p.admin.cookie(), 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });

    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: 403,
      message:
        'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header',
    });
    const list = (await (await p.call(p.admin, 'GET', '/service-accounts')).json()) as Array<{
      name: string;
    }>;
    expect(list.map((a) => a.name)).not.toContain(name);
  });

  test('When the header does not match the cookie, or both carry a value not minted for this session, then it answers 403', async () => {
    const mismatch = await p.call(p.admin, 'DELETE', `/service-accounts/${robot.client_id}`, {
      headers: { 'x-csrf-token': 'forged' },
    });
    expect(mismatch.status).toBe(403);
    const jar = new CookieJar();
    jar.set('aa_session', p.admin.jar.get('aa_session')!);
    jar.set('csrf_token', 'attacker-chosen');
    const planted = await fetch(`${p.portal.url}/api/v1/service-accounts/${robot.client_id}`, {
      method: 'DELETE',
      headers: { cookie: jar.header(`${p.portal.url}/`), 'x-csrf-token': 'attacker-chosen' },
    });
    expect(planted.status).toBe(403);
    // Another session's token does not fit this session either.
    const crossed = await p.call(p.admin, 'DELETE', `/service-accounts/${robot.client_id}`, {
      headers: { 'x-csrf-token': viewer.csrf },
    });
    expect(crossed.status).toBe(403);
    expect((await p.call(p.admin, 'GET', `/service-accounts/${robot.client_id}`)).status).toBe(200);
  });

  test('When a session reads, then no CSRF token is needed', async () => {
    const res = await fetch(`${p.portal.url}/api/v1/service-accounts`, {
      headers: { cookie: p.admin.cookie() },
    });
    expect(res.status).toBe(200);
  });
});
