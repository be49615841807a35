/**
 * Who may manage service accounts: View and Edit users, and service-account tokens whatever
 * their role, get 403 and change nothing (reads stay allowed); another tenant's admin gets 404.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, startTestIssuer, uniqueName, type TestIssuer } from '@plant/test-kit';
import { signIn, userAccessToken, type PortalSession } from './helpers/browser-client.js';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  createTenant,
  startPortal,
  type PortalHandle,
} from './helpers/platform.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
let viewer: PortalSession;
let globexAdmin: PortalSession;
let globexAdminEmail = '';
/** A service account of acme, created by its admin. */
let robot: { client_id: string; secret: string; name: string };

beforeAll(async () => {
  const globex = await createTenant(p.ts);
  // One after the other: a replica checks few passwords at once (SIGN_IN_CONCURRENT_HASHES, 1 on
  // two cores) and answers a sign-in over that 429.
  viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
  globexAdmin = await signIn(p.portal.url, globex.tenant, globex.admin);
  globexAdminEmail = globex.admin.email;
  robot = (await p.createAccount('robot')) as typeof robot;
}, 60_000);

const managementCalls = (clientId: string): Array<[string, string, unknown]> => [
  ['POST', '/service-accounts', { name: uniqueName('nope') }],
  ['PATCH', `/service-accounts/${clientId}`, { role: 'Edit' }],
  ['POST', `/service-accounts/${clientId}/reset-secret`, undefined],
  ['DELETE', `/service-accounts/${clientId}`, undefined],
];

async function auditCount(): Promise<number> {
  return (await p.auditEvents()).length;
}

describe('roles', () => {
  test('When a View user manages service accounts, then every management call answers 403 and nothing changes', async () => {
    const before = await auditCount();
    for (const [method, path, body] of managementCalls(robot.client_id)) {
      const res = await p.call(viewer, method, path, { body });
      expect({ method, path, status: res.status, body: await res.json() }).toEqual({
        method,
        path,
        status: 403,
        body: { error: 403, message: 'Managing service accounts needs the Account Admin role' },
      });
    }
    expect(await auditCount()).toBe(before);
    const still = await p.call(p.admin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(await still.json()).toMatchObject({ client_id: robot.client_id, role: 'View' });
  });

  test('When a View user reads, then the list, one account, /me and the audit trail are allowed', async () => {
    const list = await p.call(viewer, 'GET', '/service-accounts');
    const one = await p.call(viewer, 'GET', `/service-accounts/${robot.client_id}`);
    const me = await p.call(viewer, 'GET', '/me');
    const audit = await p.call(viewer, 'GET', '/audit-events');

    expect([list.status, one.status, me.status, audit.status]).toEqual([200, 200, 200, 200]);
    expect(await me.json()).toEqual({
      tenant: p.acme.tenant,
      sub: expect.any(String),
      email: p.acme.viewer.email,
      principal_type: 'user',
      role: 'View',
      can_manage_service_accounts: false,
    });
  });

  test('When an Edit user (bearer token) manages service accounts, then it answers 403 insufficient_scope', async () => {
    const token = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, p.acme.editor);

    const res = await p.call(undefined, 'POST', '/service-accounts', {
      body: { name: uniqueName('edit') },
      headers: { authorization: `Bearer ${token}` },
    });

    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="account-admin", error="insufficient_scope", error_description="Managing service accounts needs the Account Admin role"',
    );
    expect(await res.json()).toEqual({
      error: 403,
      message: 'Managing service accounts needs the Account Admin role',
    });
  });
});

describe('service-account tokens', () => {
  let issuer: TestIssuer;
  let issuerPortal: PortalHandle;

  beforeAll(async () => {
    // The token service never gives a service account a token for this API; a token signed
    // by a realm key with this audience is minted here to prove the API refuses it anyway.
    issuer = await startTestIssuer({ authUrl: p.ts.authUrl, audience: ACCOUNT_ADMIN_AUDIENCE });
    issuer.addRealm(p.acme.tenant);
    issuerPortal = await startPortal(p.ts, {
      port: await freePort(),
      jwksBaseUrl: issuer.url,
      revocation: false,
    });
  });

  afterAll(async () => {
    await issuerPortal?.stop();
    await issuer?.close();
  });

  test.each(['View', 'Edit', 'Account Admin'])(
    'When a service-account token with role %s manages service accounts, then every management call answers 403',
    async (role) => {
      const token = issuer.mint({
        tenant: p.acme.tenant,
        claims: {
          sub: robot.client_id,
          client_id: robot.client_id,
          principal_type: 'service_account',
          role,
        },
      });
      for (const [method, path, body] of managementCalls(robot.client_id)) {
        const res = await fetch(`${issuerPortal.url}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const message =
          'A service account cannot manage service accounts; sign in as a user with the Account Admin role';
        expect({
          method,
          status: res.status,
          body: await res.json(),
          challenge: res.headers.get('www-authenticate'),
        }).toEqual({
          method,
          status: 403,
          body: { error: 403, message },
          challenge: `Bearer realm="account-admin", error="insufficient_scope", error_description="${message}"`,
        });
      }
      const still = await p.call(p.admin, 'GET', `/service-accounts/${robot.client_id}`);
      expect(still.status).toBe(200);
    },
  );

  test('When a service-account token reads, then the read routes answer 200', async () => {
    const token = issuer.mint({
      tenant: p.acme.tenant,
      claims: {
        sub: robot.client_id,
        client_id: robot.client_id,
        principal_type: 'service_account',
        role: 'View',
      },
    });
    const headers = { authorization: `Bearer ${token}` };

    const list = await fetch(`${issuerPortal.url}/api/v1/service-accounts`, { headers });
    const me = await fetch(`${issuerPortal.url}/api/v1/me`, { headers });

    expect(list.status).toBe(200);
    expect(((await list.json()) as Array<{ client_id: string }>).map((a) => a.client_id)).toContain(
      robot.client_id,
    );
    expect(await me.json()).toEqual({
      tenant: p.acme.tenant,
      sub: robot.client_id,
      email: null,
      principal_type: 'service_account',
      role: 'View',
      can_manage_service_accounts: false,
    });
  });
});

describe('tenant isolation', () => {
  test("When an admin of another tenant reads, changes, resets or deletes acme's account, then each answers 404 and acme's account is untouched", async () => {
    const read = await p.call(globexAdmin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(read.status).toBe(404);
    expect(await read.json()).toEqual({ error: 404, message: 'Service account not found' });
    for (const [method, path, body] of managementCalls(robot.client_id).slice(1)) {
      const res = await p.call(globexAdmin, method, path, { body });
      expect({ method, status: res.status, body: await res.json() }).toEqual({
        method,
        status: 404,
        body: { error: 404, message: 'Service account not found' },
      });
    }
    const list = (await (await p.call(globexAdmin, 'GET', '/service-accounts')).json()) as Array<{
      client_id: string;
    }>;
    expect(list.map((a) => a.client_id)).not.toContain(robot.client_id);
    const events = (await (await p.call(globexAdmin, 'GET', '/audit-events')).json()) as Array<{
      action: string;
      name: string;
    }>;
    // Only globex's own admin signing in: nothing of acme's, nothing of the refused calls.
    expect(events.map((e) => [e.action, e.name])).toEqual([['user.sign_in', globexAdminEmail]]);
    const still = await p.call(p.admin, 'GET', `/service-accounts/${robot.client_id}`);
    expect(await still.json()).toMatchObject({ client_id: robot.client_id, role: 'View' });
  });
});
