/**
 * /api/v1/users and /api/v1/invitations: People as an Account Admin manages them, the e-mail
 * through a real SMTP listener, the link that e-mail carries working end to end, the last-admin
 * rule under parallel bursts, and the audit trail merged with the realm's own events.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  freePort,
  HOSTILE_EMAILS,
  startSmtpListener,
  uniqueName,
  type SmtpListener,
} from '@plant/test-kit';
import { CookieJar, send, signIn, type PortalSession } from './helpers/browser-client.js';
import { arraySchemaErrors, schemaErrors } from './helpers/openapi-check.js';
import { createTenant, startPortal, type PortalHandle } from './helpers/platform.js';
import { ISO, SignedInApi } from './helpers/portal-api.js';
import { startSignedInPortal } from './helpers/platform.js';

// The person's sign-ins run one after another: parallel ones meet the busy password checkers (429).
const p = new SignedInApi();
let smtp: SmtpListener;

beforeAll(async () => {
  smtp = await startSmtpListener({ credentials: { user: 'mailer', pass: 'mail pass 123' } });
  Object.assign(
    p,
    await startSignedInPortal({
      env: { SMTP_URL: smtp.url, SMTP_FROM: 'Plants <p@example.test>' },
    }),
  );
}, 60_000);

afterAll(async () => {
  await p.portal?.stop();
  await p.ts?.close();
  await smtp?.close();
});

interface InviteAnswer {
  invitation: { id: string; email: string; role: string; url: string; expires_at: string };
  email: string;
}

async function invite(session: PortalSession, email: string, role = 'View'): Promise<InviteAnswer> {
  const res = await p.call(session, 'POST', '/users', { body: { email, role } });
  if (res.status !== 201) throw new Error(`invite: ${res.status} ${await res.text()}`);
  return (await res.json()) as InviteAnswer;
}

/** Opens the link as the invitee's browser and sets the password; the realm's answer. */
async function accept(url: string, password: string): Promise<Response> {
  const jar = new CookieJar();
  const form = await send(jar, url);
  const page = await form.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(page)![1]!, url).href;
  return send(jar, action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      token: field('token')!,
      csrf: field('csrf')!,
      password,
      confirm: password,
    }).toString(),
  });
}

async function people(session: PortalSession = p.admin) {
  const res = await p.call(session, 'GET', '/users');
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ id: string; email: string; role: string; status: string }>;
}

describe('invitations', () => {
  test('When an admin invites a person, then the link is answered once and e-mailed, and the e-mailed link lets them set a password and sign in', async () => {
    const email = `${uniqueName('joiner')}@example.test`;

    const answer = await invite(p.admin, email, 'Edit');
    const mail = await smtp.next();
    const link = /https?:\/\/\S+\/invitation\?token=[A-Za-z0-9_-]{43}/.exec(
      mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='),
    )?.[0];
    const accepted = await accept(link!, 'joiner password 1');
    const session = await signIn(p.portal.url, p.acme.tenant, {
      email,
      password: 'joiner password 1',
    });

    expect(answer).toEqual({
      invitation: {
        id: expect.any(String),
        email,
        role: 'Edit',
        created_at: ISO,
        created_by: p.acme.admin.email,
        expires_at: ISO,
        url: expect.stringMatching(/\/invitation\?token=[A-Za-z0-9_-]{43}$/),
      },
      email: 'sent',
    });
    expect(schemaErrors('InvitationCreated', answer)).toEqual([]);
    expect(mail.to).toEqual([email]);
    expect(mail.user).toBe('mailer');
    expect(mail.raw).toContain(p.acme.tenant);
    expect(link).toBe(answer.invitation.url);
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe(
      `${p.ts.portalUrl}/login?tenant=${p.acme.tenant}`,
    );
    expect(session.csrf).toEqual(expect.any(String));
    const joiner = (await people()).find((u) => u.email === email);
    expect(joiner).toMatchObject({ role: 'Edit', status: 'active' });
    const pending = (await (await p.call(p.admin, 'GET', '/invitations')).json()) as unknown[];
    expect(pending).not.toContainEqual(expect.objectContaining({ email }));
    expect(p.portal.logs.join('\n')).not.toContain(answer.invitation.url.split('token=')[1]);
  });

  test('When the SMTP server refuses the message, then the invitation stands, the answer says "failed" and the metric counts it', async () => {
    const refusing = await startSmtpListener({ failing: true });
    const portal: PortalHandle = await startPortal(p.ts, {
      port: await freePort(),
      env: { SMTP_URL: refusing.url },
    });
    try {
      const email = `${uniqueName('unmailed')}@example.test`;
      const res = await fetch(`${portal.url}/api/v1/users`, {
        method: 'POST',
        headers: { ...p.admin.headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ email, role: 'View' }),
      });
      const body = (await res.json()) as InviteAnswer;
      const metrics = await (await fetch(`${portal.managementUrl}/metrics`)).text();

      expect(res.status).toBe(201);
      expect(body.email).toBe('failed');
      expect(metrics).toMatch(/invitation_emails_total\{[^}]*outcome="failed"[^}]*\} 1/);
      const pending = (await (await p.call(p.admin, 'GET', '/invitations')).json()) as Array<{
        email: string;
      }>;
      expect(pending.map((i) => i.email)).toContain(email);
      expect(portal.logs.join('\n')).not.toContain(body.invitation.url.split('token=')[1]);
    } finally {
      await portal.stop();
      await refusing.close();
    }
  });

  test('When no SMTP is configured, then the answer says "not_configured"', async () => {
    const portal = await startPortal(p.ts, { port: await freePort() });
    try {
      const res = await fetch(`${portal.url}/api/v1/users`, {
        method: 'POST',
        headers: { ...p.admin.headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ email: `${uniqueName('nomail')}@example.test`, role: 'View' }),
      });

      expect(res.status).toBe(201);
      expect(((await res.json()) as InviteAnswer).email).toBe('not_configured');
    } finally {
      await portal.stop();
    }
  });

  test('When an invitation is revoked, then it is no longer pending, its link says so, it is audited, and revoking again is 404', async () => {
    const answer = await invite(p.admin, `${uniqueName('revoked')}@example.test`);
    await smtp.next();

    const revoked = await p.call(p.admin, 'DELETE', `/invitations/${answer.invitation.id}`);
    const again = await p.call(p.admin, 'DELETE', `/invitations/${answer.invitation.id}`);
    const link = await fetch(answer.invitation.url);

    expect(revoked.status).toBe(204);
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({ error: 404, message: 'Invitation not found' });
    expect(link.status).toBe(410);
    expect(await link.text()).toContain('This invitation was revoked');
    const events = await p.auditEvents();
    expect(events).toContainEqual(
      expect.objectContaining({
        action: 'invitation.revoke',
        target_type: 'invitation',
        client_id: answer.invitation.id,
        name: answer.invitation.email,
      }),
    );
  });

  test("When a person's email is invited, then 409", async () => {
    const res = await p.call(p.admin, 'POST', '/users', {
      body: { email: p.acme.viewer.email, role: 'Edit' },
    });

    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: 409,
      message: 'A user with this email already exists',
    });
  });

  test.each([
    [{ email: `${'x'.repeat(250)}@a.test`, role: 'View' }, 'email must be at most 254 characters'],
    [{ email: 'not an email', role: 'View' }, 'email must be an email address'],
    [{ email: 'a@b.test', role: 'Owner' }, 'role must be "View", "Edit" or "Account Admin"'],
    [{ email: 'a@b.test' }, 'role must be "View", "Edit" or "Account Admin"'],
    [{ email: 'a@b.test', role: 'View', admin: true }, 'Unknown field "admin"'],
  ])('When the invitation %j is sent, then 400 naming the problem', async (body, message) => {
    const res = await p.call(p.admin, 'POST', '/users', { body });

    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(message);
  });

  test('When a body over 16 KiB is sent, then 413', async () => {
    const res = await p.call(p.admin, 'POST', '/users', {
      body: { email: `${'a'.repeat(17_000)}@b.test`, role: 'View' },
    });

    expect(res.status).toBe(413);
  });
});

describe('invitation emails that are not one mailbox', () => {
  test.each(HOSTILE_EMAILS)(
    'When the email is %s, then 400 in the Error shape, nothing is pending and nothing is mailed',
    async (_case, email) => {
      const mailed = smtp.messages.length;

      const res = await p.call(p.admin, 'POST', '/users', { body: { email, role: 'View' } });

      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: 400,
        message: expect.stringMatching(/^email must /),
      });
      const pending = (await (
        await p.call(p.admin, 'GET', '/invitations?limit=100')
      ).json()) as Array<{
        email: string;
      }>;
      expect(pending.map((i) => i.email)).not.toContain(email);
      expect(smtp.messages.length).toBe(mailed);
    },
  );

  test('When a mailbox with every kind of character a mailbox may have is invited, then the one RCPT TO and the To header are exactly the recorded address', async () => {
    const local = `${uniqueName('kim')}.O'Neil+ops_1`;

    const answer = await invite(p.admin, `${local}@Mail.Example-Corp.TEST`);
    const mail = await smtp.next();

    expect(answer.invitation.email).toBe(`${local}@mail.example-corp.test`);
    expect(mail.to).toEqual([answer.invitation.email]);
    expect(mail.raw).toMatch(
      new RegExp(`^To: ${answer.invitation.email.replace(/[.+]/g, '\\$&')}\\r?$`, 'm'),
    );
  });
});

describe('pending invitations: the bound and the pages', () => {
  /** A tenant of its own and a portal without SMTP (nothing reaches this file's listener). */
  async function quietTenant() {
    const portal = await startPortal(p.ts, { port: await freePort() });
    const tenant = await createTenant(p.ts);
    // Signed in at the portal the realm redirects to; the session works at every replica.
    const admin = await signIn(p.portal.url, tenant.tenant, tenant.admin);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${portal.url}/api/v1${path}`, {
        method,
        headers: {
          ...admin.headers(),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const inviteAs = (email: string) => call('POST', '/users', { email, role: 'View' });
    return { portal, tenant, call, inviteAs };
  }

  test('When a tenant has 100 pending invitations, then the next is 409 in the Error shape and nothing more is pending', async () => {
    const { portal, call, inviteAs } = await quietTenant();
    try {
      for (let i = 0; i < 100; i += 1)
        expect((await inviteAs(`bound${i}@example.test`)).status).toBe(201);

      const refused = await inviteAs('one-too-many@example.test');

      expect({ status: refused.status, body: await refused.json() }).toEqual({
        status: 409,
        body: {
          error: 409,
          message:
            'This tenant already has the maximum of 100 pending invitations: revoke one, or wait until one is accepted or expires',
        },
      });
      const all = (await (await call('GET', '/invitations?limit=100')).json()) as unknown[];
      expect(all).toHaveLength(100);
    } finally {
      await portal.stop();
    }
  });

  test('When the invitations are listed a page at a time, then the Link rel="next" walks them newest first, each once, and the last page has none', async () => {
    const { portal, call, inviteAs } = await quietTenant();
    try {
      for (let i = 0; i < 5; i += 1) await inviteAs(`paged${i}@example.test`);

      const seen: string[] = [];
      const sizes: number[] = [];
      let path: string | undefined = '/invitations?limit=2';
      while (path !== undefined) {
        const res = await call('GET', path);
        expect(res.status).toBe(200);
        const page = (await res.json()) as Array<{ email: string }>;
        expect(arraySchemaErrors('Invitation', page)).toEqual([]);
        sizes.push(page.length);
        seen.push(...page.map((i) => i.email));
        const link = res.headers.get('link');
        const next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        if (link !== null)
          expect(next).toMatch(
            new RegExp(`^${portal.url}/api/v1/invitations\\?limit=2&cursor=[A-Za-z0-9_-]+$`),
          );
        path = next?.slice(`${portal.url}/api/v1`.length);
      }
      const byDefault = (await (await call('GET', '/invitations')).json()) as unknown[];

      expect(sizes).toEqual([2, 2, 1]);
      expect(seen).toEqual([4, 3, 2, 1, 0].map((i) => `paged${i}@example.test`));
      expect(byDefault).toHaveLength(5);
    } finally {
      await portal.stop();
    }
  });

  test.each([
    ['limit=0', 'limit must be an integer between 1 and 100'],
    ['limit=101', 'limit must be an integer between 1 and 100'],
    ['limit=1e1', 'limit must be an integer between 1 and 100'],
    ['cursor=%00', 'cursor is not valid'],
    ['cursor=a&cursor=b', 'cursor is not valid'],
    [
      `cursor=${Buffer.from('before:99999999999999999999').toString('base64url')}`,
      'cursor is not valid',
    ],
    [`cursor=${Buffer.from('before:0').toString('base64url')}`, 'cursor is not valid'],
  ])(
    'When the invitations are listed with %s, then 400 naming the problem',
    async (query, message) => {
      const res = await p.call(p.admin, 'GET', `/invitations?${query}`);

      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: number; message: string };
      expect(body.error).toBe(400);
      expect(body.message).toContain(message);
    },
  );
});

describe('people', () => {
  test('When an admin lists people, then each has email, role, factors, status and last sign-in, and no token version', async () => {
    const list = await people();

    expect(list.length).toBeGreaterThanOrEqual(3);
    expect(arraySchemaErrors('User', list)).toEqual([]);
    expect(list.find((u) => u.email === p.acme.admin.email)).toEqual({
      id: expect.any(String),
      email: p.acme.admin.email,
      role: 'Account Admin',
      status: 'active',
      created_at: ISO,
      // The admin signed in to the portal through the realm, which recorded when.
      last_sign_in_at: ISO,
      factors: { passkeys: 0, totp: false, recovery_codes_left: 0 },
    });
  });

  test('When an admin changes a role, disables, enables and removes a person, then each answer says so and each is audited with the person as target', async () => {
    const email = `${uniqueName('managed')}@example.test`;
    await p.ts.createUser(p.acme.tenant, 'View', email);
    const id = (await people()).find((u) => u.email === email)!.id;

    const role = await p.call(p.admin, 'PATCH', `/users/${id}`, { body: { role: 'Edit' } });
    const disabled = await p.call(p.admin, 'PATCH', `/users/${id}`, {
      body: { status: 'disabled' },
    });
    const enabled = await p.call(p.admin, 'PATCH', `/users/${id}`, { body: { status: 'active' } });
    const removed = await p.call(p.admin, 'DELETE', `/users/${id}`);
    const gone = await p.call(p.admin, 'GET', `/users/${id}`);

    expect(await role.json()).toMatchObject({ id, role: 'Edit', status: 'active' });
    expect(await disabled.json()).toMatchObject({ status: 'disabled' });
    expect(await enabled.json()).toMatchObject({ status: 'active' });
    expect(removed.status).toBe(204);
    expect(gone.status).toBe(404);
    const events = (await p.auditEvents()).filter((e) => e.client_id === id);
    const common = { target_type: 'user', name: email, actor_email: p.acme.admin.email };
    expect(events).toEqual([
      expect.objectContaining({ ...common, action: 'user.remove', details: { role: 'Edit' } }),
      expect.objectContaining({ ...common, action: 'user.enable' }),
      expect.objectContaining({ ...common, action: 'user.disable' }),
      expect.objectContaining({
        ...common,
        action: 'user.role_change',
        details: { role: { from: 'View', to: 'Edit' } },
      }),
    ]);
  });

  test('When the only admin demotes, disables or removes themselves, then 409 and they stay admin', async () => {
    const tenant = await createTenant(p.ts);
    const admin = await signIn(p.portal.url, tenant.tenant, tenant.admin);
    const self = (await people(admin)).find((u) => u.email === tenant.admin.email)!;

    const answers = await Promise.all([
      p.call(admin, 'PATCH', `/users/${self.id}`, { body: { role: 'View' } }),
      p.call(admin, 'PATCH', `/users/${self.id}`, { body: { status: 'disabled' } }),
      p.call(admin, 'DELETE', `/users/${self.id}`),
    ]);

    expect(answers.map((a) => a.status)).toEqual([409, 409, 409]);
    expect((await people(admin)).find((u) => u.id === self.id)).toMatchObject({
      role: 'Account Admin',
      status: 'active',
    });
  });

  test('When two admins demote, disable and remove each other and themselves in one parallel burst, then exactly one active admin stays', async () => {
    const tenant = await createTenant(p.ts);
    const secondEmail = `second@${tenant.tenant}.test`;
    await p.ts.createUser(tenant.tenant, 'Account Admin', secondEmail);
    const first = await signIn(p.portal.url, tenant.tenant, tenant.admin);
    const second = await signIn(p.portal.url, tenant.tenant, {
      email: secondEmail,
      password: tenant.admin.password,
    });
    const admins = (await people(first)).filter((u) => u.role === 'Account Admin');
    expect(admins).toHaveLength(2);

    const calls = [first, second].flatMap((session) =>
      admins.flatMap((target) => [
        p.call(session, 'PATCH', `/users/${target.id}`, { body: { role: 'Edit' } }),
        p.call(session, 'PATCH', `/users/${target.id}`, { body: { status: 'disabled' } }),
        p.call(session, 'DELETE', `/users/${target.id}`),
      ]),
    );
    const statuses = (await Promise.all(calls)).map((r) => r.status);

    // A demoted, disabled or removed caller is refused afterwards (403 or 401): never a 5xx.
    expect(statuses.every((s) => s < 500)).toBe(true);
    expect(statuses).toContain(409);
    // Read from the token service itself: whoever survived, the realm has exactly one active admin.
    const res = await fetch(`${p.ts.internalUrl}/internal/v1/realms/${tenant.tenant}/users`, {
      headers: { authorization: `Bearer ${p.ts.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}` },
    });
    const all = (await res.json()) as Array<{ role: string; status: string }>;
    expect(all.filter((u) => u.role === 'Account Admin' && u.status === 'active')).toHaveLength(1);
  });

  test("When another tenant's person or invitation is named, then 404 and nothing changes there", async () => {
    const other = await createTenant(p.ts);
    const otherAdmin = await signIn(p.portal.url, other.tenant, other.admin);
    const stranger = (await people(otherAdmin)).find((u) => u.email === other.viewer.email)!;
    const theirs = await invite(otherAdmin, `${uniqueName('theirs')}@example.test`);
    await smtp.next();

    const answers = await Promise.all([
      p.call(p.admin, 'GET', `/users/${stranger.id}`),
      p.call(p.admin, 'PATCH', `/users/${stranger.id}`, { body: { role: 'Account Admin' } }),
      p.call(p.admin, 'DELETE', `/users/${stranger.id}`),
      p.call(p.admin, 'DELETE', `/invitations/${theirs.invitation.id}`),
      p.call(p.admin, 'GET', '/users/%00'),
    ]);

    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404]);
    expect((await people(otherAdmin)).find((u) => u.id === stranger.id)).toMatchObject({
      role: 'View',
      status: 'active',
    });
  });

  test('When a View or Edit person or a session without an admin role manages people, then 403', async () => {
    const viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
    const editor = await signIn(p.portal.url, p.acme.tenant, p.acme.editor);
    const target = (await people()).find((u) => u.email === p.acme.viewer.email)!;

    const answers = await Promise.all(
      [viewer, editor].flatMap((s) => [
        p.call(s, 'GET', '/users'),
        p.call(s, 'POST', '/users', { body: { email: 'x@example.test', role: 'Account Admin' } }),
        p.call(s, 'PATCH', `/users/${target.id}`, { body: { role: 'Account Admin' } }),
        p.call(s, 'DELETE', `/users/${target.id}`),
        p.call(s, 'GET', '/invitations'),
      ]),
    );

    const page = await fetch(`${p.portal.url}/settings/people`, { headers: viewer.headers() });

    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(403));
    expect(page.status).toBe(403);
    expect(await page.text()).toContain('Managing people needs the Account Admin role');
    expect(await answers[1]!.json()).toEqual({
      error: 403,
      message: 'Managing people needs the Account Admin role',
    });
  });
});

describe('the merged audit trail', () => {
  test('When an invitation is accepted, then the realm event shows in the trail after the invite, and paging one by one walks both trails without a repeat or a gap', async () => {
    const tenant = await createTenant(p.ts);
    const admin = await signIn(p.portal.url, tenant.tenant, tenant.admin);
    for (const n of [1, 2]) {
      const answer = await invite(admin, `merged${n}@example.test`);
      await smtp.next();
      expect((await accept(answer.invitation.url, `merged password ${n}`)).status).toBe(303);
    }

    const all = (await (await p.call(admin, 'GET', '/audit-events?limit=100')).json()) as Array<{
      id: string;
      action: string;
      name: string;
    }>;
    const walked: string[] = [];
    let next: string | undefined = `${p.portal.url}/api/v1/audit-events?limit=1`;
    while (next !== undefined) {
      const res: Response = await fetch(next, { headers: admin.headers() });
      const page = (await res.json()) as Array<{ id: string }>;
      walked.push(...page.map((e) => e.id));
      next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }

    expect(all.map((e) => [e.action, e.name])).toEqual([
      ['invitation.accept', 'merged2@example.test'],
      ['user.invite', 'merged2@example.test'],
      ['invitation.accept', 'merged1@example.test'],
      ['user.invite', 'merged1@example.test'],
      ['user.sign_in', tenant.admin.email],
    ]);
    expect(all[0]!.id).toMatch(/^realm-\d+$/);
    expect(arraySchemaErrors('AuditEvent', all)).toEqual([]);
    expect(walked).toEqual(all.map((e) => e.id));
  });

  test.each([
    'x',
    'YmVmb3JlOjE',
    'YmVmb3JlOjA6MQ',
    Buffer.from('before:1:99999999999999999999').toString('base64url'),
  ])('When the cursor %s was not made by the API, then 400', async (cursor) => {
    const res = await p.call(p.admin, 'GET', `/audit-events?cursor=${cursor}`);

    expect(res.status).toBe(400);
  });
});
