/**
 * The audit trail of service-account changes (/api/v1/audit-events): one event per action,
 * no secret in it or in the logs, the request id carried through, and keyset paging.
 */
import { describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { signIn } from './helpers/browser-client.js';
import { arraySchemaErrors } from './helpers/openapi-check.js';
import { createTenant } from './helpers/platform.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

describe('the audit trail', () => {
  test('When an admin creates, changes, resets and deletes an account, then one audit event per action is listed newest first, none holding a secret', async () => {
    const name = uniqueName('audited');
    const created = (await (
      await p.asAdminSession('POST', '/service-accounts', { name })
    ).json()) as Record<string, string>;
    await p.asAdminSession('PATCH', `/service-accounts/${created.client_id}`, { role: 'Edit' });
    const reset = (await (
      await p.asAdminSession('POST', `/service-accounts/${created.client_id}/reset-secret`)
    ).json()) as Record<string, string>;
    await p.asAdminSession('DELETE', `/service-accounts/${created.client_id}`);

    const events = (await p.auditEvents()).filter((e) => e.client_id === created.client_id);

    const common = {
      id: expect.stringMatching(/^\d+$/),
      occurred_at: ISO,
      actor_sub: expect.any(String),
      actor_email: p.acme.admin.email,
      actor_type: 'user',
      target_type: 'service_account',
      client_id: created.client_id,
      name,
      request_id: expect.any(String),
      address: expect.stringMatching(/127\.0\.0\.1$/),
    };
    expect(events).toEqual([
      { ...common, action: 'service_account.delete', details: {} },
      { ...common, action: 'service_account.reset_secret', details: {} },
      {
        ...common,
        action: 'service_account.update',
        details: { role: { from: 'View', to: 'Edit' } },
      },
      { ...common, action: 'service_account.create', details: { role: 'View' } },
    ]);
    expect(arraySchemaErrors('AuditEvent', events)).toEqual([]);
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.secret);
    expect(text).not.toContain(reset.secret);
    expect(p.portal.logs.join('\n')).not.toContain(created.secret);
    expect(p.portal.logs.join('\n')).not.toContain(reset.secret);
  });

  test('When the request carries an x-request-id, then its audit event records it', async () => {
    const res = await p.call(p.admin, 'POST', '/service-accounts', {
      body: { name: uniqueName('reqid') },
      headers: { 'x-request-id': 'req-audit-1234' },
    });
    const created = (await res.json()) as Record<string, string>;

    const [latest] = (await p.auditEvents()).filter((e) => e.client_id === created.client_id);

    expect(res.headers.get('x-request-id')).toBe('req-audit-1234');
    expect(latest).toMatchObject({
      action: 'service_account.create',
      request_id: 'req-audit-1234',
    });
    // The same id crossed to the token service's internal API.
    const crossed = (await p.ts.tokenService.flushedLogs())
      .filter((line) => line.includes('"reqId":"req-audit-1234"'))
      .map((line) => JSON.parse(line) as { req?: { method: string; path: string } });
    expect(crossed).toContainEqual(
      expect.objectContaining({
        req: { method: 'POST', path: `/internal/v1/realms/${p.acme.tenant}/service-accounts` },
      }),
    );
  });

  test('When events are paged, then pages follow the Link header newest first without overlap, and a bad cursor or limit is 400', async () => {
    const paged = await createTenant(p.ts);
    const session = await signIn(p.portal.url, paged.tenant, paged.admin);
    for (let i = 0; i < 5; i += 1) {
      await p.call(session, 'POST', '/service-accounts', { body: { name: `page-${i}` } });
    }

    const first = await p.api('/audit-events?limit=2', { headers: session.headers() });
    const firstBody = (await first.json()) as Array<Record<string, unknown>>;
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    const second = await fetch(next!, { headers: session.headers() });
    const secondBody = (await second.json()) as Array<Record<string, unknown>>;
    const third = await fetch(/<([^>]+)>; rel="next"/.exec(second.headers.get('link') ?? '')![1]!, {
      headers: session.headers(),
    });
    const thirdBody = (await third.json()) as Array<Record<string, unknown>>;

    // The admin's sign-in to the portal came first, from the realm's trail.
    expect([...firstBody, ...secondBody, ...thirdBody].map((e) => e.name)).toEqual([
      'page-4',
      'page-3',
      'page-2',
      'page-1',
      'page-0',
      paged.admin.email,
    ]);
    expect(thirdBody.at(-1)).toMatchObject({ action: 'user.sign_in', target_type: 'user' });
    expect(third.headers.get('link')).toBeNull();
    const cursorOf = (text: string) => `cursor=${Buffer.from(text).toString('base64url')}`;
    // Past int64, zero and negative ids, a leading zero, and the Plant Store's cursor: none reach Postgres.
    const forged = [
      'before:9999999999999999999',
      'before:9223372036854775808',
      'before:0',
      'before:-1',
      'before:01',
      'v1:5',
    ].map(cursorOf);
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=nonsense', ...forged]) {
      const res = await p.api(`/audit-events?${query}`, { headers: session.headers() });
      expect({ query, status: res.status, body: await res.json() }).toEqual({
        query,
        status: 400,
        body: { error: 400, message: expect.any(String) },
      });
    }
    for (const query of ['cursor=nonsense', ...forged]) {
      const page = await fetch(`${p.portal.url}/activity?${query}`, { headers: session.headers() });
      expect({ query, page: page.status }).toEqual({ query, page: 400 });
    }
  });
});
