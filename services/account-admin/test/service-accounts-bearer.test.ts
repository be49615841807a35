/**
 * The service-account API called with a bearer token instead of the portal session: an
 * Account Admin's token for this API works, a service account's own token and no credentials
 * are refused with the challenge RFC 6750 asks for.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { clientCredentialsToken, userAccessToken } from './helpers/browser-client.js';
import { schemaErrors } from './helpers/openapi-check.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
let adminToken: string;

beforeAll(async () => {
  adminToken = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, p.acme.admin);
}, 60_000);

describe('bearer tokens', () => {
  test('When an Account Admin calls with a bearer token for this API, then they can read and manage service accounts', async () => {
    const me = await p.asBearer(adminToken, 'GET', '/me');
    expect(me.status).toBe(200);
    const meBody = await me.json();
    expect(meBody).toEqual({
      tenant: p.acme.tenant,
      sub: expect.any(String),
      email: p.acme.admin.email,
      principal_type: 'user',
      role: 'Account Admin',
      can_manage_service_accounts: true,
    });
    expect(schemaErrors('Me', meBody)).toEqual([]);

    const created = await p.asBearer(adminToken, 'POST', '/service-accounts', {
      name: uniqueName('bearer'),
    });

    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      role: 'View',
      created_by: p.acme.admin.email,
      secret: expect.any(String),
    });
  });

  test('When a service account presents its own (Plant Store) token, then the API refuses it as invalid_token', async () => {
    const created = await p.createAccount('sa-token');
    const token = (
      (await (
        await clientCredentialsToken(
          p.ts.authUrl,
          p.acme.tenant,
          created.client_id!,
          created.secret!,
        )
      ).json()) as { access_token: string }
    ).access_token;

    const res = await p.asBearer(token, 'GET', '/service-accounts');

    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="account-admin", error="invalid_token", error_description="Token audience is not accepted"',
    );
    expect(await res.json()).toEqual({ error: 401, message: 'Token audience is not accepted' });
  });

  test('When no credentials are sent, then the API answers 401 with a bare Bearer challenge', async () => {
    const res = await p.api('/service-accounts');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="account-admin"');
    expect(await res.json()).toEqual({
      error: 401,
      message:
        'Authentication required: sign in to the portal or send Authorization: Bearer <access token>',
    });
  });
});
