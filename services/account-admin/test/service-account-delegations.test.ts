/**
 * "Act for others" from `/api/v1`: an Account Admin allows a service account to exchange its
 * callers' tokens (RFC 8693) for the Plant Store; the permission is shown and audited, only
 * then does the account's exchange succeed, and taking it away refuses what it exchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import type { PortalSession } from './helpers/browser-client.js';
import {
  PLANT_STORE_AUDIENCE,
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

const tokenEndpoint = () => `${ts.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`;

async function grant(
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(tokenEndpoint(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe('Service accounts: act for others', () => {
  test('When an Account Admin allows an account to act for others at the Plant Store, then it is shown and audited, its exchange succeeds, and taking it away refuses it again', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('middle') });
    const middle = { id: created.body.client_id as string, secret: created.body.secret as string };
    const callerCreated = await call('POST', '/service-accounts', { name: uniqueName('caller') });
    const subject = await grant({
      grant_type: 'client_credentials',
      client_id: callerCreated.body.client_id as string,
      client_secret: callerCreated.body.secret as string,
    });
    const exchange = () =>
      grant({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: middle.id,
        client_secret: middle.secret,
        subject_token: subject.body.access_token!,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: PLANT_STORE_AUDIENCE,
      });
    expect((await exchange()).body.error).toBe('unauthorized_client');

    const put = await call('PUT', `/service-accounts/${middle.id}/delegations`, {
      delegations: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read' }],
    });
    expect(put).toEqual({
      status: 200,
      body: {
        delegations: [
          {
            audience: PLANT_STORE_AUDIENCE,
            scope: 'plants:read',
            created_at: expect.any(String),
            created_by: expect.any(String),
          },
        ],
      },
    });
    expect((await call('GET', `/service-accounts/${middle.id}/delegations`)).body).toEqual(
      put.body,
    );
    const exchanged = await exchange();
    expect(exchanged).toMatchObject({ status: 200, body: { scope: 'plants:read' } });

    const removed = await call('PUT', `/service-accounts/${middle.id}/delegations`, {
      delegations: [],
    });
    expect(removed).toEqual({ status: 200, body: { delegations: [] } });
    expect((await exchange()).body.error).toBe('unauthorized_client');

    const events = (await fetch(`${portal.url}/api/v1/audit-events?limit=20`, {
      headers: admin.headers(),
    }).then((r) => r.json())) as Array<Record<string, unknown>>;
    const changes = events.filter(
      (e) => e.client_id === middle.id && e.action === 'service_account.delegation_change',
    );
    expect(changes.map((e) => e.details)).toEqual([
      { delegations: { from: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read' }], to: [] } },
      { delegations: { from: [], to: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read' }] } },
    ]);
  });

  test('When the audience is not an API of the platform, or the scope is not delegable, then 400 and nothing changes', async () => {
    const created = await call('POST', '/service-accounts', { name: uniqueName('middle') });
    const id = created.body.client_id as string;
    for (const delegations of [
      [{ audience: 'https://elsewhere.example', scope: 'plants:read' }],
      [{ audience: PLANT_STORE_AUDIENCE, scope: 'ssf.manage' }],
      [{ audience: 'not a url', scope: 'plants:read' }],
    ]) {
      const res = await call('PUT', `/service-accounts/${id}/delegations`, { delegations });
      expect({ delegations, status: res.status }).toEqual({ delegations, status: 400 });
    }
    expect((await call('GET', `/service-accounts/${id}/delegations`)).body).toEqual({
      delegations: [],
    });
  });
});
