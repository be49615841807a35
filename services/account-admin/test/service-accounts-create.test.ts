/**
 * Creating service accounts through /api/v1: the account and its secret (once), unique names,
 * the 25-account cap and concurrent creates. Bad bodies: service-accounts-validation.test.ts.
 */
import { describe, expect, test } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import { clientCredentialsToken, signIn } from './helpers/browser-client.js';
import { createTenant } from './helpers/platform.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';
import { schemaErrors } from './helpers/openapi-check.js';

const p = useSignedInPortal();

describe('creating service accounts', () => {
  test('When an Account Admin creates a service account from the portal session, then it answers 201 with the account and its secret, once', async () => {
    const name = uniqueName('robot');

    const res = await p.asAdminSession('POST', '/service-accounts', { name });

    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      name,
      client_id: expect.stringMatching(/^sa-[0-9a-f]{32}$/),
      role: 'View',
      grants: [],
      created_at: ISO,
      created_by: p.acme.admin.email,
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      dpop_bound_access_tokens: false,
      receive_signals: false,
      secret_expires_at: null,
      quota: null,
      secret: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(
      `/api/v1/service-accounts/${body.client_id as string}`,
    );
    expect(schemaErrors('ServiceAccountWithSecret', body)).toEqual([]);
    const token = await clientCredentialsToken(
      p.ts.authUrl,
      p.acme.tenant,
      body.client_id as string,
      body.secret as string,
    );
    expect(token.status).toBe(200);
  });

  test('When a name is taken (in any letter case), then create answers 409 with the duplicate-name message', async () => {
    const name = uniqueName('dup');
    expect((await p.asAdminSession('POST', '/service-accounts', { name })).status).toBe(201);

    const res = await p.asAdminSession('POST', '/service-accounts', { name: name.toUpperCase() });

    expect(res.status).toBe(409);
    const answer = await res.json();
    expect(answer).toEqual({
      error: 409,
      message: 'A service account with this name already exists',
    });
    expect(schemaErrors('Error', answer)).toEqual([]);
  });
});

describe('names that look alike', () => {
  /** Each printable ASCII character as its fullwidth form (U+FF01…), which NFKC folds back. */
  const fullwidth = (text: string) =>
    text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

  test.each([
    ['a Cyrillic а for the Latin a', (name: string) => `\u0430${name.slice(1)}`],
    ['fullwidth letters and digits', fullwidth],
  ])(
    'When a name exists and another with %s is created, then it answers 409 and the list shows only the first',
    async (_case, lookalike) => {
      const name = uniqueName('admin');
      expect((await p.asAdminSession('POST', '/service-accounts', { name })).status).toBe(201);

      const res = await p.asAdminSession('POST', '/service-accounts', { name: lookalike(name) });
      const listed = (await (await p.asAdminSession('GET', '/service-accounts')).json()) as Array<{
        name: string;
      }>;

      expect({ status: res.status, answer: await res.json() }).toEqual({
        status: 409,
        answer: { error: 409, message: 'A service account with this name already exists' },
      });
      expect(
        listed.map((a) => a.name).filter((n) => n.endsWith(name.slice(1)) || n === lookalike(name)),
      ).toEqual([name]);
    },
  );
});

describe('the 25-account cap', () => {
  test('When a tenant has 25 service accounts, then the 26th create answers 409 with the cap message, and no audit event is written for it', async () => {
    const capped = await createTenant(p.ts);
    const session = await signIn(p.portal.url, capped.tenant, capped.admin);
    for (let i = 0; i < 25; i += 1) {
      const res = await p.call(session, 'POST', '/service-accounts', {
        body: { name: `bot-${i}` },
      });
      expect(res.status).toBe(201);
    }

    const res = await p.call(session, 'POST', '/service-accounts', { body: { name: 'bot-25' } });

    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: 409,
      message: 'This tenant already has the maximum of 25 service accounts',
    });
    // The admin's own sign-in is on the trail too (oldest); the creates are what is counted.
    const events = (await p.auditEvents(session)).filter((e) => e.action !== 'user.sign_in');
    expect(events).toHaveLength(25);
    expect(events.map((e) => e.name)).not.toContain('bot-25');
    const page = await (
      await fetch(`${p.portal.url}/settings/service-accounts`, {
        headers: { cookie: session.cookie() },
      })
    ).text();
    expect(page).toContain(
      'This tenant has the maximum of 25 service accounts. Delete one before creating another.',
    );

    // 27 entries (26 changes, then the sign-in): the Activity page shows 25, newest first, and links to the older two.
    await p.call(session, 'PATCH', `/service-accounts/${events[0]!.client_id as string}`, {
      body: { role: 'Edit' },
    });
    const first = await (
      await fetch(`${p.portal.url}/activity`, { headers: { cookie: session.cookie() } })
    ).text();
    const rows = (html: string) => (html.match(/<td data-label="What">/g) ?? []).length;
    expect(rows(first)).toBe(25);
    expect(first.indexOf('Changed role or grants of')).toBeLessThan(first.indexOf('bot-24'));
    const older = /href="(\/activity\?cursor=[^"]+)" rel="next"/.exec(first)?.[1];
    expect(older).toBeDefined();
    const second = await (
      await fetch(`${p.portal.url}${older!}`, { headers: { cookie: session.cookie() } })
    ).text();
    expect(rows(second)).toBe(2);
    expect(second).toContain('bot-0');
    expect(second).toContain(', to the portal');
    expect(second).not.toContain('rel="next"');
  });

  test('When ten admins create the same name at once, then exactly one gets 201, the others 409, and exactly one audit event exists', async () => {
    const racing = await createTenant(p.ts);
    const session = await signIn(p.portal.url, racing.tenant, racing.admin);

    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        p.call(session, 'POST', '/service-accounts', { body: { name: 'same-name' } }),
      ),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([
      201, 409, 409, 409, 409, 409, 409, 409, 409, 409,
    ]);
    const creates = (await p.auditEvents(session)).filter((e) => e.action !== 'user.sign_in');
    expect(creates.map((e) => [e.action, e.name])).toEqual([
      ['service_account.create', 'same-name'],
    ]);
  });
});
