/**
 * "Require sender-constrained tokens" from the portal and `/api/v1`: the setting is shown and
 * changed like the role, audited, and takes effect at the token endpoint at once.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { clientCredentialsToken, type PortalSession } from './helpers/browser-client.js';
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

describe('Service accounts: require sender-constrained tokens (DPoP)', () => {
  test('When an Account Admin turns DPoP on through /api/v1, then the account shows it, the audit trail records it, and a grant without a proof is refused', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('dpop') });
    const clientId = created.body.client_id as string;
    expect(created.body.dpop_bound_access_tokens).toBe(false);

    const changed = await call('PATCH', `/service-accounts/${clientId}`, {
      dpop_bound_access_tokens: true,
    });
    expect({
      status: changed.status,
      dpop: changed.body.dpop_bound_access_tokens,
      role: changed.body.role,
    }).toEqual({ status: 200, dpop: true, role: 'View' });
    expect((await call('GET', `/service-accounts/${clientId}`)).body.dpop_bound_access_tokens).toBe(
      true,
    );

    const events = (await fetch(`${portal.url}/api/v1/audit-events?limit=10`, {
      headers: admin.headers(),
    }).then((r) => r.json())) as Array<Record<string, unknown>>;
    expect(
      events.find((e) => e.client_id === clientId && e.action === 'service_account.update')
        ?.details,
    ).toEqual({ dpop_bound_access_tokens: { from: false, to: true } });

    const grant = await clientCredentialsToken(
      ts.authUrl,
      acme.tenant,
      clientId,
      created.body.secret as string,
    );
    expect({ status: grant.status, body: await grant.json() }).toEqual({
      status: 400,
      body: {
        error: 'invalid_dpop_proof',
        error_description: 'this client requires a DPoP proof (RFC 9449) with every token request',
      },
    });
  });

  test('When the portal pages are read, then the accounts table shows the binding, the edit dialog offers the choice, and the activity page names the change', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('dpop-page') });
    await call('PATCH', `/service-accounts/${created.body.client_id as string}`, {
      dpop_bound_access_tokens: true,
    });
    const page = await fetch(`${portal.url}/settings/service-accounts`, {
      headers: { cookie: admin.cookie() },
    }).then((r) => r.text());
    const row = page.slice(page.indexOf(`data-client-id="${created.body.client_id as string}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(
      /data-dpop="true"[\s\S]*<td data-label="Tokens"><span class="badge"[^>]*>DPoP<\/span><\/td>/,
    );
    expect(page).toContain('id="edit-dpop" name="dpop_bound_access_tokens"');
    const activity = await fetch(`${portal.url}/activity`, {
      headers: { cookie: admin.cookie() },
    }).then((r) => r.text());
    expect(activity).toContain('(DPoP required)');
  });
});
