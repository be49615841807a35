/**
 * Changing a service account through /api/v1: its role and grants, a new secret, its deletion,
 * each followed to the token endpoint; and an unknown client_id, which changes nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { clientCredentialsToken } from './helpers/browser-client.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

/** Whether the token service still takes `token` (RFC 7662 introspection, as a resource server asks it). */
async function active(token: string): Promise<boolean> {
  const res = await fetch(
    `${p.ts.authUrl}/realms/${p.acme.tenant}/protocol/openid-connect/token/introspect`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${p.ts.secrets.PLANT_STORE_INTERNAL_TOKEN}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { active: boolean }).active;
}

/** Asks until `token` is refused (the change reaches the token service's revocation map over Redis), at most 5 s. */
async function refusedSoon(token: string): Promise<boolean> {
  for (
    const until = Date.now() + 5_000;
    Date.now() < until;
    await new Promise((resolve) => setTimeout(resolve, 50))
  )
    if (!(await active(token))) return true;
  return false;
}

describe('changing, resetting and deleting', () => {
  test('When an unknown client_id is changed, reset or deleted, then each answers 404 and writes no audit event', async () => {
    const before = await p.auditEvents();
    const id = 'sa-ffffffffffffffffffffffffffffffff';
    for (const [method, path, body] of [
      ['PATCH', `/service-accounts/${id}`, { role: 'Edit' }],
      ['POST', `/service-accounts/${id}/reset-secret`, undefined],
      ['DELETE', `/service-accounts/${id}`, undefined],
    ] as const) {
      const res = await p.asAdminSession(method, path, body);
      expect({ method, status: res.status, body: await res.json() }).toEqual({
        method,
        status: 404,
        body: { error: 404, message: 'Service account not found' },
      });
    }
    expect(await p.auditEvents()).toEqual(before);
  });

  test('When the role and grants are changed, then the account shows them, its older tokens are refused, and an audit event records the change', async () => {
    const created = await p.createAccount('patch');
    const older = (await (
      await clientCredentialsToken(p.ts.authUrl, p.acme.tenant, created.client_id!, created.secret!)
    ).json()) as { access_token: string };
    expect(await active(older.access_token)).toBe(true);

    const res = await p.asAdminSession('PATCH', `/service-accounts/${created.client_id}`, {
      role: 'Edit',
      grants: [{ tag: 'roses', permission: 'edit' }],
    });

    expect(res.status).toBe(200);
    const changed = (await res.json()) as Record<string, unknown>;
    // The grant above is recorded as a use behind the answer: by now, or not yet.
    expect(
      changed.last_used_at === null || !Number.isNaN(Date.parse(String(changed.last_used_at))),
    ).toBe(true);
    expect(changed).toEqual({
      name: created.name,
      client_id: created.client_id,
      role: 'Edit',
      grants: [{ tag: 'roses', permission: 'edit' }],
      created_at: created.created_at,
      created_by: p.acme.admin.email,
      last_used_at: changed.last_used_at,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
      receive_signals: false,
      secret_expires_at: null,
      quota: null,
    });
    const [latest] = await p.auditEvents();
    expect(latest).toEqual({
      id: expect.stringMatching(/^\d+$/),
      occurred_at: ISO,
      actor_sub: expect.any(String),
      actor_email: p.acme.admin.email,
      actor_type: 'user',
      action: 'service_account.update',
      target_type: 'service_account',
      client_id: created.client_id,
      name: created.name,
      details: { role: { from: 'View', to: 'Edit' }, grants: { from: [], to: ['roses'] } },
      request_id: expect.any(String),
      address: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(await refusedSoon(older.access_token)).toBe(true);
    const fresh = (await (
      await clientCredentialsToken(p.ts.authUrl, p.acme.tenant, created.client_id!, created.secret!)
    ).json()) as { access_token: string };
    expect(await active(fresh.access_token)).toBe(true);
  });

  test('When the secret is reset, then the answer has a new secret, the old one is refused and the new one works', async () => {
    const created = await p.createAccount('reset');

    const res = await p.asAdminSession(
      'POST',
      `/service-accounts/${created.client_id}/reset-secret`,
    );

    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const reset = (await res.json()) as Record<string, string>;
    expect(reset).toEqual({ ...created, secret: expect.any(String) });
    expect(reset.secret).not.toBe(created.secret);
    expect(
      (
        await clientCredentialsToken(
          p.ts.authUrl,
          p.acme.tenant,
          created.client_id!,
          created.secret!,
        )
      ).status,
    ).toBe(401);
    expect(
      (await clientCredentialsToken(p.ts.authUrl, p.acme.tenant, created.client_id!, reset.secret!))
        .status,
    ).toBe(200);
  });

  test('When an account is deleted, then it answers 204, the account is gone and its secret is refused', async () => {
    const created = await p.createAccount('del');

    const res = await p.asAdminSession('DELETE', `/service-accounts/${created.client_id}`);

    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await p.asAdminSession('GET', `/service-accounts/${created.client_id}`)).status).toBe(
      404,
    );
    expect(
      (
        await clientCredentialsToken(
          p.ts.authUrl,
          p.acme.tenant,
          created.client_id!,
          created.secret!,
        )
      ).status,
    ).toBe(401);
  });
});
