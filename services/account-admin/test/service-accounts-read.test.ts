/**
 * Reading service accounts through /api/v1: the list and one account, never with a secret,
 * and the OpenAPI document that describes every route.
 */
import { describe, expect, test } from '@jest/globals';
import { arraySchemaErrors } from './helpers/openapi-check.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

describe('reading service accounts', () => {
  test('When the list is read, then each account appears without any secret', async () => {
    const created = await p.createAccount('lister');

    const res = await p.asAdminSession('GET', '/service-accounts');

    expect(res.status).toBe(200);
    const list = (await res.json()) as Array<Record<string, unknown>>;
    const { secret: _secret, ...withoutSecret } = created;
    expect(list).toContainEqual(withoutSecret);
    for (const account of list)
      expect(Object.keys(account).sort()).toEqual([
        'client_id',
        'created_at',
        'created_by',
        'disabled',
        'disabled_at',
        'dpop_bound_access_tokens',
        'grants',
        'last_used_at',
        'name',
        'quota',
        'receive_signals',
        'role',
        'secret_expires_at',
      ]);
    expect(arraySchemaErrors('ServiceAccount', list)).toEqual([]);
    expect(JSON.stringify(list)).not.toContain(created.secret);
  });

  test('When an account is read by client_id, then it answers 200 with the account; an unknown id answers 404', async () => {
    const created = await p.createAccount('one');
    const { secret: _s, ...account } = created;

    const found = await p.asAdminSession('GET', `/service-accounts/${created.client_id}`);
    const unknown = await p.asAdminSession(
      'GET',
      '/service-accounts/sa-00000000000000000000000000000000',
    );
    const garbage = await p.asAdminSession(
      'GET',
      `/service-accounts/${encodeURIComponent('../../etc/passwd')}`,
    );

    expect(found.status).toBe(200);
    expect(await found.json()).toEqual(account);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 404, message: 'Service account not found' });
    expect(garbage.status).toBe(404);
    expect(await garbage.json()).toEqual({ error: 404, message: 'Service account not found' });
  });
});

describe('the OpenAPI document', () => {
  test('When /api/v1/openapi.json is fetched without credentials, then it describes every route', async () => {
    const res = await p.api('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(
      Object.fromEntries(
        Object.entries(doc.paths).map(([path, ops]) => [
          path,
          Object.keys(ops)
            .filter((k) => k !== 'parameters')
            .sort(),
        ]),
      ),
    ).toEqual({
      '/me': ['get'],
      '/service-accounts': ['get', 'post'],
      '/service-accounts/{client_id}': ['delete', 'get', 'patch'],
      '/service-accounts/{client_id}/credentials': ['get'],
      '/service-accounts/{client_id}/delegations': ['get', 'put'],
      '/service-accounts/{client_id}/disable': ['post'],
      '/service-accounts/{client_id}/enable': ['post'],
      '/service-accounts/{client_id}/keys': ['post'],
      '/service-accounts/{client_id}/keys/{key_id}': ['delete'],
      '/service-accounts/{client_id}/reset-secret': ['post'],
      '/service-accounts/{client_id}/secret': ['delete'],
      '/service-accounts/{client_id}/secrets': ['post'],
      '/service-accounts/{client_id}/secrets/{secret_id}': ['delete'],
      '/service-accounts/{client_id}/trusts': ['post'],
      '/service-accounts/{client_id}/trusts/{trust_id}': ['delete'],
      '/settings/credentials': ['get', 'patch'],
      '/settings/people': ['get', 'patch'],
      '/users': ['get', 'post'],
      '/users/{id}': ['delete', 'get', 'patch'],
      '/users/{id}/factors': ['delete', 'get'],
      '/invitations': ['get'],
      '/invitations/{id}': ['delete'],
      '/audit-events': ['get'],
      '/me/sessions': ['get'],
      '/me/sessions/{id}': ['delete'],
      '/me/factors': ['get'],
      '/me/factors/{factor_id}': ['delete'],
      '/users/{id}/sessions': ['delete'],
    });
  });
});
