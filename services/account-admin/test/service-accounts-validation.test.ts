/**
 * Bad bodies at the service-account routes of /api/v1: each answers 400 (or 415) in the Error
 * shape with a message that names the fault, and changes nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
const INVISIBLE = (field: string) =>
  `${field} must not contain invisible or formatting characters (bidi controls, zero-width and the like)`;

describe('create bodies', () => {
  test('When the body is invalid, then create answers 400 and creates nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name is required'],
      [{ name: '' }, 'name must not be empty'],
      [{ name: 'x'.repeat(65) }, 'name must be at most 64 characters'],
      [{ name: 'bad\u0007name' }, 'name must not contain control characters'],
      [{ name: 'ad\u200Bmin' }, INVISIBLE('name')],
      [{ name: 'deploy\u202Edlo-' }, INVISIBLE('name')],
      [{ name: 'a\u2066b\u2069' }, INVISIBLE('name')],
      [{ name: 42 }, 'name must be a string'],
      [{ name: 'ok', role: 'Edit' }, 'Unknown field "role"; the body is {name}'],
      [[], 'Body must be a JSON object {name}'],
    ];
    const listed = async () =>
      (await (await p.asAdminSession('GET', '/service-accounts')).json()) as unknown;
    const [accountsBefore, eventsBefore] = [await listed(), await p.auditEvents()];
    for (const [body, message] of cases) {
      const res = await p.asAdminSession('POST', '/service-accounts', body);
      expect({ body, status: res.status, answer: await res.json() }).toEqual({
        body,
        status: 400,
        answer: { error: 400, message },
      });
    }
    expect({ accounts: await listed(), events: await p.auditEvents() }).toEqual({
      accounts: accountsBefore,
      events: eventsBefore,
    });
  });

  test('When the body is not JSON, then create answers 415 or 400 in the Error shape', async () => {
    const wrongType = await p.api('/service-accounts', {
      method: 'POST',
      headers: p.admin.headers({ 'content-type': 'text/plain' }),
      body: 'name=x',
    });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toEqual({
      error: 415,
      message: 'Content-Type must be application/json',
    });
    const malformed = await p.api('/service-accounts', {
      method: 'POST',
      headers: p.admin.headers({ 'content-type': 'application/json' }),
      body: '{"name":',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({
      error: 400,
      message: 'Request body is not valid JSON',
    });
  });
});

describe('change bodies', () => {
  test('When PATCH bodies are invalid, then they answer 400 and change nothing', async () => {
    const created = await p.createAccount('badpatch');
    const cases: Array<[unknown, string]> = [
      [{}, 'role, grants, dpop_bound_access_tokens, receive_signals or quota is required'],
      [{ role: 'Account Admin' }, 'role must be "View" or "Edit"'],
      [{ grants: [{ permission: 'edit' }] }, 'grants.0.tag: tag is required'],
      [
        { grants: [{ tag: 'a', permission: 'view' }] },
        'grants.0.permission: permission must be "edit"',
      ],
      [
        {
          grants: [
            { tag: 'a', permission: 'edit' },
            { tag: 'a', permission: 'edit' },
          ],
        },
        'grants must not repeat a tag',
      ],
      [{ grants: 'roses' }, 'grants must be an array'],
      [
        { grants: [{ tag: 'fern\u202Es', permission: 'edit' }] },
        `grants.0.tag: ${INVISIBLE('tag')}`,
      ],
      [{ dpop_bound_access_tokens: 'yes' }, 'dpop_bound_access_tokens must be true or false'],
      [{ quota: 'lots' }, 'quota must be an object {per_minute, mode}'],
      [
        { quota: { per_minute: 0, mode: 'enforce' } },
        'quota.per_minute: per_minute must be an integer from 1 to 100000',
      ],
      [
        { quota: { per_minute: 10, mode: 'block' } },
        'quota.mode: mode must be "off", "log" or "enforce"',
      ],
      [
        { role: 'Edit', actor: 'someone-else' },
        'Unknown field "actor"; the body is {role?, grants?, dpop_bound_access_tokens?, receive_signals?, quota?}',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await p.asAdminSession('PATCH', `/service-accounts/${created.client_id}`, body);
      expect({ body, status: res.status, answer: await res.json() }).toEqual({
        body,
        status: 400,
        answer: { error: 400, message },
      });
    }
    const after = (await (
      await p.asAdminSession('GET', `/service-accounts/${created.client_id}`)
    ).json()) as Record<string, unknown>;
    expect(after).toMatchObject({ role: 'View', grants: [] });
  });
});
