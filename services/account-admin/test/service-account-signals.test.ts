/**
 * "Receive Shared Signals" from the portal and `/api/v1`: an Account Admin allows a service
 * account to receive the tenant's security events; the setting is shown and audited, and only
 * then may the account's grant ask for the `ssf.*` scopes.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import type { PortalSession } from './helpers/browser-client.js';
import {
  startSignedInPortal,
  type Platform,
  type PortalHandle,
  type TestTenant,
} from './helpers/platform.js';

let ts: Platform;
let portal: PortalHandle;
let acme: TestTenant;
let admin: PortalSession;

beforeAll(async () => {
  ({ ts, portal, acme, admin } = await startSignedInPortal());
}, 60_000);

afterAll(async () => {
  await portal?.stop();
  await ts?.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${portal.url}/api/v1${path}`, {
    method,
    headers: admin.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ssfGrant = (clientId: string, secret: string) =>
  fetch(`${ts.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
      scope: 'ssf.manage ssf.read',
    }).toString(),
  });

describe('Service accounts: receive Shared Signals', () => {
  test('When an Account Admin allows an account to receive signals through /api/v1, then the account shows it, the audit trail records it, and only then its grant may ask for ssf.manage and ssf.read', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('ssf') });
    const clientId = created.body.client_id as string;
    const secret = created.body.secret as string;
    expect(created.body.receive_signals).toBe(false);
    const before = await ssfGrant(clientId, secret);
    expect({
      status: before.status,
      error: ((await before.json()) as { error: string }).error,
    }).toEqual({
      status: 400,
      error: 'invalid_scope',
    });

    const changed = await call('PATCH', `/service-accounts/${clientId}`, { receive_signals: true });
    expect({ status: changed.status, signals: changed.body.receive_signals }).toEqual({
      status: 200,
      signals: true,
    });
    expect((await call('GET', `/service-accounts/${clientId}`)).body.receive_signals).toBe(true);
    const events = (await fetch(`${portal.url}/api/v1/audit-events?limit=10`, {
      headers: admin.headers(),
    }).then((r) => r.json())) as Array<Record<string, unknown>>;
    expect(
      events.find((e) => e.client_id === clientId && e.action === 'service_account.update')
        ?.details,
    ).toEqual({ receive_signals: { from: false, to: true } });

    const after = await ssfGrant(clientId, secret);
    expect({
      status: after.status,
      scope: ((await after.json()) as { scope: string }).scope,
    }).toEqual({
      status: 200,
      scope: 'ssf.manage ssf.read',
    });
  });

  test('When receive_signals is not a boolean, then 400 and nothing changes', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('ssf-bad') });
    const clientId = created.body.client_id as string;
    for (const receive_signals of ['yes', 1, null]) {
      const res = await call('PATCH', `/service-accounts/${clientId}`, { receive_signals });
      expect({ status: res.status, message: res.body.message }).toEqual({
        status: 400,
        message: 'receive_signals must be true or false',
      });
    }
    expect((await call('GET', `/service-accounts/${clientId}`)).body.receive_signals).toBe(false);
  });

  test('When the portal pages are read, then the accounts table shows the setting, the edit dialog offers it, and the activity page names the change', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('ssf-page') });
    await call('PATCH', `/service-accounts/${created.body.client_id as string}`, {
      receive_signals: true,
    });
    const page = await fetch(`${portal.url}/settings/service-accounts`, {
      headers: { cookie: admin.cookie() },
    }).then((r) => r.text());
    const row = page.slice(page.indexOf(`data-client-id="${created.body.client_id as string}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(
      /data-signals="true"[\s\S]*<td data-label="Tokens">[\s\S]*>Signals<\/span><\/td>/,
    );
    expect(page).toContain('id="edit-signals" name="receive_signals"');
    const activity = await fetch(`${portal.url}/activity`, {
      headers: { cookie: admin.cookie() },
    }).then((r) => r.text());
    expect(activity).toContain('receives signals');
  });
});
