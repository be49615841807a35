import { beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { decodeJwt, TEST_ENV, useHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { HOSTILE_EMAILS } from '@plant/test-kit';
import { AUTH } from './helpers/internal-client.js';
import { pkce, portalDriver, REDIRECT_URI } from './helpers/portal-driver.js';

let h: Harness;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

useHarness((started) => {
  h = started;
});

const api = () => request(h.internalUrl);
const realmPath = (tenant: string) => `/internal/v1/realms/${tenant}`;

async function invite(tenant: string, email: string, role = 'View') {
  const res = await api()
    .post(`${realmPath(tenant)}/invitations`)
    .set('authorization', AUTH)
    .send({ email, role, actor: 'admin@example.test' });
  if (res.status !== 201)
    throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; email: string; role: string; url: string; expires_at: string };
}

/** The invitation page as a browser opens it: its cookie jar, its source address. */
function invitee() {
  const ip = uniqueIp();
  const agent = request.agent(h.publicUrl);
  return {
    ip,
    get: (path: string) => agent.get(path).set('x-forwarded-for', ip),
    post: (path: string) => agent.post(path).set('x-forwarded-for', ip).type('form'),
  };
}

function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function hiddenField(page: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  if (!match) throw new Error(`no ${name} field`);
  return match[1]!;
}

async function openAndAccept(url: string, password = 'a new password 1') {
  const b = invitee();
  const form = await b.get(pathOf(url));
  const token = hiddenField(form.text, 'token');
  const csrf = hiddenField(form.text, 'csrf');
  const tenant = new URL(url).pathname.split('/')[2]!;
  const answer = await b
    .post(`/realms/${tenant}/invitation`)
    .send({ token, csrf, password, confirm: password });
  return { b, form, answer, token, csrf, tenant };
}

describe('the User view', () => {
  test('When people are listed, then each comes with status, last sign-in, factor counts and token version', async () => {
    const { tenant, adminId, adminEmail } = await h.createTenant();

    const res = await api()
      .get(`${realmPath(tenant)}/users`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: adminId,
        email: adminEmail,
        role: 'Account Admin',
        status: 'active',
        created_at: expect.stringMatching(ISO),
        last_sign_in_at: null,
        factors: { passkeys: 0, totp: false, recovery_codes_left: 0 },
        token_version: expect.any(Number),
        factor_generation: 0,
        factor_required: false,
        revision: 1,
      },
    ]);
  });
});

describe('changing people', () => {
  test('When a person gets a new role, then it is answered, the token version is bumped and the change is in the revocation feed', async () => {
    const { tenant } = await h.createTenant();
    const viewer = await h.createUser(tenant, 'View');
    const before = await api()
      .get(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH);

    const res = await api()
      .patch(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH)
      .send({ role: 'Edit', actor: 'admin@example.test' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: viewer.id, role: 'Edit', status: 'active' });
    expect(res.body.token_version).toBe(before.body.token_version + 1);
    const principal = await api()
      .get(`${realmPath(tenant)}/principals/${viewer.id}`)
      .set('authorization', AUTH);
    expect(principal.body).toMatchObject({ version: res.body.token_version, deleted: false });
  });

  test('When a person is disabled, then their password no longer signs in, and enabled again it does', async () => {
    const { tenant } = await h.createTenant();
    const editor = await h.createUser(tenant, 'Edit');
    const driver = portalDriver(h, tenant);
    const signIn = async () => {
      const b = driver.browser();
      const started = await driver.startSignIn(b);
      return b
        .post(`${started.interactionPath}/login`)
        .type('form')
        .send({ csrf: started.csrf, email: editor.email, password: editor.password });
    };

    const disabled = await api()
      .patch(`${realmPath(tenant)}/users/${editor.id}`)
      .set('authorization', AUTH)
      .send({ status: 'disabled' });
    const refused = await signIn();
    const enabled = await api()
      .patch(`${realmPath(tenant)}/users/${editor.id}`)
      .set('authorization', AUTH)
      .send({ status: 'active' });
    const accepted = await signIn();

    expect(disabled.body).toMatchObject({ status: 'disabled' });
    expect(refused.status).toBe(401);
    expect(enabled.body).toMatchObject({ status: 'active' });
    expect(accepted.status).toBe(303);
  });

  test('When a signed-in View person is made Edit, then their next sign-in through the realm session gets the write scope', async () => {
    const { tenant } = await h.createTenant();
    const viewer = await h.createUser(tenant, 'View');
    const driver = portalDriver(h, tenant);
    const b = driver.browser();
    const resource = { resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE };
    await driver.completeSignIn(
      b,
      await driver.startSignIn(b, { ...resource, scope: 'openid email profile plants:read' }),
      viewer.email,
      viewer.password,
    );

    await api()
      .patch(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH)
      .send({ role: 'Edit' });
    const { verifier, challenge } = pkce();
    const silent = await b.get(
      `/realms/${tenant}/protocol/openid-connect/auth?${new URLSearchParams({
        client_id: 'portal',
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid email profile plants:read plants:write',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'state-2',
        ...resource,
      })}`,
    );
    const code = new URL(silent.headers.location!).searchParams.get('code');
    const tokens = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: 'portal',
        code_verifier: verifier,
        ...resource,
      });

    expect(code).toEqual(expect.any(String));
    expect(decodeJwt(tokens.body.access_token).payload).toMatchObject({
      role: 'Edit',
      scope: 'plants:read plants:write',
    });
  });

  test("When a signed-in person is disabled, then the realm's session no longer signs them in without the form", async () => {
    const { tenant } = await h.createTenant();
    const editor = await h.createUser(tenant, 'Edit');
    const driver = portalDriver(h, tenant);
    const b = driver.browser();
    await driver.completeSignIn(b, await driver.startSignIn(b), editor.email, editor.password);
    const authorize = () =>
      b.get(
        `/realms/${tenant}/protocol/openid-connect/auth?${new URLSearchParams({
          client_id: 'portal',
          response_type: 'code',
          redirect_uri: 'http://portal.test/auth/callback',
          scope: 'openid',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
          state: 'state-1',
        })}`,
      );
    const silent = await authorize();

    await api()
      .patch(`${realmPath(tenant)}/users/${editor.id}`)
      .set('authorization', AUTH)
      .send({ status: 'disabled' });
    const asked = await authorize();

    expect(silent.headers.location).toMatch(/^http:\/\/portal\.test\/auth\/callback\?code=/);
    expect(asked.headers.location).toMatch(new RegExp(`/realms/${tenant}/interaction/`));
  });

  test('When a person is removed, then they are gone with their factors, their principal is deleted and their email may be invited again', async () => {
    const { tenant } = await h.createTenant();
    const viewer = await h.createUser(tenant, 'View');
    await h.service.db('user_recovery_codes').insert({ sub: viewer.id, digest: 'ab'.repeat(32) });

    const removed = await api()
      .delete(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH);
    const after = await api()
      .get(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH);
    const principal = await api()
      .get(`${realmPath(tenant)}/principals/${viewer.id}`)
      .set('authorization', AUTH);
    const codes = await h.service.db('user_recovery_codes').where({ sub: viewer.id });
    const again = await invite(tenant, viewer.email);

    expect(removed.status).toBe(204);
    expect(after.status).toBe(404);
    expect(principal.body).toMatchObject({ deleted: true });
    expect(codes).toEqual([]);
    expect(again.email).toBe(viewer.email);
  });

  test.each([
    ['demoted', { role: 'Edit' }],
    ['disabled', { status: 'disabled' }],
    ['removed', undefined],
  ])('When the last active Account Admin is %s, then 409 and nothing changes', async (_n, body) => {
    const { tenant, adminId } = await h.createTenant();
    const path = `${realmPath(tenant)}/users/${adminId}`;

    const res = body
      ? await api().patch(path).set('authorization', AUTH).send(body)
      : await api().delete(path).set('authorization', AUTH);

    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 409,
      message:
        'This is the last active Account Admin of the tenant: make another person Account Admin first',
    });
    const admin = await api().get(path).set('authorization', AUTH);
    expect(admin.body).toMatchObject({ role: 'Account Admin', status: 'active' });
  });

  test('When both admins of a tenant are demoted, disabled and removed in one parallel burst, then exactly one active admin stays', async () => {
    const { tenant, adminId } = await h.createTenant();
    const second = await h.createUser(tenant, 'Account Admin');
    const calls = [adminId, second.id].flatMap((id) => {
      const path = `${realmPath(tenant)}/users/${id}`;
      return [
        api().patch(path).set('authorization', AUTH).send({ role: 'View' }),
        api().patch(path).set('authorization', AUTH).send({ status: 'disabled' }),
        api().delete(path).set('authorization', AUTH),
        api().patch(path).set('authorization', AUTH).send({ role: 'Edit' }),
      ];
    });

    const answers = await Promise.all(calls);

    expect(answers.every((a) => [200, 204, 404, 409].includes(a.status))).toBe(true);
    expect(answers.some((a) => a.status === 409)).toBe(true);
    const list = await api()
      .get(`${realmPath(tenant)}/users`)
      .set('authorization', AUTH);
    const activeAdmins = (list.body as Array<{ role: string; status: string }>).filter(
      (u) => u.role === 'Account Admin' && u.status === 'active',
    );
    expect(activeAdmins).toHaveLength(1);
  });

  test("When another tenant's person is named, then 404 and they are untouched", async () => {
    const { tenant } = await h.createTenant();
    const { tenant: other } = await h.createTenant();
    const stranger = await h.createUser(other, 'View');

    const read = await api()
      .get(`${realmPath(tenant)}/users/${stranger.id}`)
      .set('authorization', AUTH);
    const change = await api()
      .patch(`${realmPath(tenant)}/users/${stranger.id}`)
      .set('authorization', AUTH)
      .send({ role: 'Account Admin' });
    const remove = await api()
      .delete(`${realmPath(tenant)}/users/${stranger.id}`)
      .set('authorization', AUTH);

    expect([read.status, change.status, remove.status]).toEqual([404, 404, 404]);
    expect(change.body).toEqual({ error: 404, message: 'User not found' });
    const untouched = await api()
      .get(`${realmPath(other)}/users/${stranger.id}`)
      .set('authorization', AUTH);
    expect(untouched.body).toMatchObject({ role: 'View', status: 'active' });
  });

  test.each([
    [{}, 'give exactly one of role and status'],
    [{ role: 'Edit', status: 'active' }, 'give exactly one of role and status'],
    [{ role: 'Owner' }, 'role must be "View", "Edit" or "Account Admin"'],
    [{ status: 'gone' }, 'status must be "active" or "disabled"'],
  ])('When a change %j is sent, then 400 naming what is wrong', async (body, message) => {
    const { tenant } = await h.createTenant();
    const viewer = await h.createUser(tenant, 'View');

    const res = await api()
      .patch(`${realmPath(tenant)}/users/${viewer.id}`)
      .set('authorization', AUTH)
      .send(body);

    expect(res.status).toBe(400);
    expect(res.body.message).toContain(message);
  });
});

describe('invitations', () => {
  test('When an invitation is created, then its link is answered once, only a digest is stored and it is listed as pending', async () => {
    const { tenant } = await h.createTenant();

    const created = await invite(tenant, 'new.person@example.test', 'Edit');
    const list = await api()
      .get(`${realmPath(tenant)}/invitations`)
      .set('authorization', AUTH);

    expect(created).toEqual({
      id: expect.any(String),
      email: 'new.person@example.test',
      role: 'Edit',
      created_at: expect.stringMatching(ISO),
      created_by: 'admin@example.test',
      expires_at: expect.stringMatching(ISO),
      url: expect.stringMatching(
        new RegExp(`^${h.publicUrl}/realms/${tenant}/invitation\\?token=[A-Za-z0-9_-]{43}$`),
      ),
    });
    const days =
      (Date.parse(created.expires_at) - Date.parse(new Date().toISOString())) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    const { url: _url, ...listed } = created;
    expect(list.body).toEqual({ invitations: [listed], next_cursor: null });
    const token = new URL(created.url).searchParams.get('token')!;
    const rows = await h.service.db('user_invitations').where({ realm: tenant });
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  test('When the same email is invited again, then the first link is revoked and only the new one is pending', async () => {
    const { tenant } = await h.createTenant();
    const first = await invite(tenant, 'twice@example.test');

    const second = await invite(tenant, 'TWICE@example.test');
    const list = await api()
      .get(`${realmPath(tenant)}/invitations`)
      .set('authorization', AUTH);
    const old = await invitee().get(pathOf(first.url));

    expect(list.body.invitations.map((i: { id: string }) => i.id)).toEqual([second.id]);
    expect(old.status).toBe(410);
    expect(old.text).toContain('This invitation was revoked');
  });

  test("When a person's email is invited, then 409", async () => {
    const { tenant, adminEmail } = await h.createTenant();

    const res = await api()
      .post(`${realmPath(tenant)}/invitations`)
      .set('authorization', AUTH)
      .send({ email: adminEmail.toUpperCase(), role: 'View' });

    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 409, message: 'A user with this email already exists' });
  });

  test('When an invitation is revoked, then it is no longer listed, its link says so, and revoking again is 404', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'revoked@example.test');

    const revoked = await api()
      .delete(`${realmPath(tenant)}/invitations/${created.id}`)
      .set('authorization', AUTH);
    const again = await api()
      .delete(`${realmPath(tenant)}/invitations/${created.id}`)
      .set('authorization', AUTH);
    const page = await invitee().get(pathOf(created.url));

    const { url: _url, ...invitation } = created;
    expect({ status: revoked.status, body: revoked.body }).toEqual({
      status: 200,
      body: invitation,
    });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 404, message: 'Invitation not found' });
    expect(page.status).toBe(410);
    expect(page.text).toContain('This invitation was revoked');
  });

  test("When another tenant's invitation or a malformed id is revoked, then 404", async () => {
    const { tenant } = await h.createTenant();
    const { tenant: other } = await h.createTenant();
    const theirs = await invite(other, 'theirs@example.test');

    const cross = await api()
      .delete(`${realmPath(tenant)}/invitations/${theirs.id}`)
      .set('authorization', AUTH);
    const malformed = await api()
      .delete(`${realmPath(tenant)}/invitations/not-a-uuid%00`)
      .set('authorization', AUTH);

    expect(cross.status).toBe(404);
    expect(malformed.status).toBe(404);
    const list = await api()
      .get(`${realmPath(other)}/invitations`)
      .set('authorization', AUTH);
    expect(list.body.invitations).toHaveLength(1);
  });
});

describe('invitation emails', () => {
  let tenant: string;
  beforeAll(async () => {
    ({ tenant } = await h.createTenant());
  });

  test.each(HOSTILE_EMAILS)(
    'When the email is %s, then 400 in the Error shape and nothing is stored',
    async (_case, email) => {
      const res = await api()
        .post(`${realmPath(tenant)}/invitations`)
        .set('authorization', AUTH)
        .send({ email, role: 'View' });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.stringMatching(/^email must /) });
      expect(await h.service.db('user_invitations').where({ realm: tenant })).toEqual([]);
    },
  );

  test("When an email has the characters a mailbox may have, then it is recorded as given with the domain's case folded", async () => {
    const created = await invite(tenant, "Kim.O'Neil+ops_1-x@Mail.Example-Corp.test");

    expect(created.email).toBe("Kim.O'Neil+ops_1-x@mail.example-corp.test");
  });
});

describe('pending invitations: the bound and the pages', () => {
  const MAX = 100;
  const list = (tenant: string, query = '') =>
    api()
      .get(`${realmPath(tenant)}/invitations${query}`)
      .set('authorization', AUTH);
  const tryInvite = (tenant: string, email: string) =>
    api()
      .post(`${realmPath(tenant)}/invitations`)
      .set('authorization', AUTH)
      .send({ email, role: 'View' });
  async function inviteMany(tenant: string, count: number, prefix = 'p'): Promise<void> {
    for (let i = 0; i < count; i += 1) await invite(tenant, `${prefix}${i}@example.test`);
  }

  test('When a tenant has 100 pending invitations, then another is 409, re-inviting a pending email still works, and an expired one frees a place', async () => {
    const { tenant } = await h.createTenant();
    await inviteMany(tenant, MAX);

    const refused = await tryInvite(tenant, 'one-more@example.test');
    const again = await tryInvite(tenant, 'p7@example.test');
    await h.service
      .db('user_invitations')
      .where({ realm: tenant, email: 'p3@example.test' })
      .update({ expires_at: h.service.db.raw("now() - interval '1 second'") });
    const afterExpiry = await tryInvite(tenant, 'one-more@example.test');
    const refusedAgain = await tryInvite(tenant, 'two-more@example.test');

    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 409,
      message:
        'This tenant already has the maximum of 100 pending invitations: revoke one, or wait until one is accepted or expires',
    });
    expect(again.status).toBe(201);
    expect(afterExpiry.status).toBe(201);
    expect(refusedAgain.status).toBe(409);
    const pending = await h.service
      .db('user_invitations')
      .where({ realm: tenant })
      .whereNull('accepted_at')
      .whereNull('revoked_at')
      .whereRaw('expires_at > now()')
      .count<[{ count: string }]>('* as count');
    expect(Number(pending[0]?.count)).toBe(MAX);
  });

  test('When 30 invitations are created at once with 90 pending, then exactly 10 are created and 20 refused with 409', async () => {
    const { tenant } = await h.createTenant();
    await inviteMany(tenant, MAX - 10);

    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => tryInvite(tenant, `burst${i}@example.test`)),
    );

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(20).fill(409)]);
    const all: unknown[] = [];
    let next = '?limit=100';
    for (;;) {
      const page = await list(tenant, next);
      all.push(...page.body.invitations);
      if (page.body.next_cursor === null) break;
      next = `?limit=100&cursor=${page.body.next_cursor}`;
    }
    expect(all).toHaveLength(MAX);
  });

  test('When the pending invitations are listed a page at a time, then each comes once, newest first, and the last page has no cursor', async () => {
    const { tenant } = await h.createTenant();
    await inviteMany(tenant, 7, 'paged');

    const seen: string[] = [];
    let query = '?limit=3';
    const sizes: number[] = [];
    for (;;) {
      const page = await list(tenant, query);
      expect(page.status).toBe(200);
      sizes.push(page.body.invitations.length);
      seen.push(...page.body.invitations.map((i: { email: string }) => i.email));
      if (page.body.next_cursor === null) break;
      expect(page.body.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      query = `?limit=3&cursor=${page.body.next_cursor}`;
    }
    const whole = await list(tenant);

    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([6, 5, 4, 3, 2, 1, 0].map((i) => `paged${i}@example.test`));
    expect(whole.body).toEqual({ invitations: expect.any(Array), next_cursor: null });
    expect(whole.body.invitations).toHaveLength(7);
  });

  test('When the limit or the cursor is not one the API made, then 400 in the Error shape', async () => {
    const { tenant } = await h.createTenant();
    const forged = Buffer.from('before:99999999999999999999').toString('base64url');

    const answers = await Promise.all(
      [
        'limit=0',
        'limit=101',
        'limit=1e2',
        'limit=x',
        'cursor=%00',
        `cursor=${forged}`,
        'cursor=YQ',
      ].map((q) => list(tenant, `?${q}`)),
    );

    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.any(String) });
    }
  });

  test('When an invitation is created, then no query reads the pending list', async () => {
    const { tenant } = await h.createTenant();
    await inviteMany(tenant, 3, 'quiet');
    const statements: string[] = [];
    const record = (query: { sql: string }) => statements.push(query.sql);
    h.service.db.on('query', record);
    try {
      await invite(tenant, 'watched@example.test');
    } finally {
      h.service.db.off('query', record);
    }

    const selects = statements.filter(
      (sql) => /^select/i.test(sql) && /user_invitations/.test(sql),
    );
    // The realm lock and the bound's count may look; nothing lists the invitations.
    expect(selects.filter((sql) => !/count\(/i.test(sql))).toEqual([]);
  });
});

describe('accepting an invitation', () => {
  test('When the invitee sets a password, then the person exists with the role, signs in with it, the event is recorded and the browser goes to the portal sign-in', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'joiner@example.test', 'Edit');

    const { form, answer } = await openAndAccept(created.url, 'joiner password 1');

    expect(form.status).toBe(200);
    expect(form.headers['referrer-policy']).toBe('no-referrer');
    expect(form.headers['cache-control']).toBe('no-store');
    expect(form.text).toContain('joiner@example.test');
    expect(form.text).toContain('Set your password');
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`http://portal.test/login?tenant=${tenant}`);
    const list = await api()
      .get(`${realmPath(tenant)}/users`)
      .set('authorization', AUTH);
    const joiner = list.body.find((u: { email: string }) => u.email === 'joiner@example.test');
    expect(joiner).toMatchObject({ role: 'Edit', status: 'active' });
    const events = await api()
      .get(`${realmPath(tenant)}/security-events`)
      .set('authorization', AUTH);
    expect(events.body).toEqual([
      expect.objectContaining({
        action: 'invitation.accept',
        actor_sub: joiner.id,
        target_email: 'joiner@example.test',
        details: { invitation_id: created.id, role: 'Edit' },
        occurred_at: expect.stringMatching(ISO),
      }),
    ]);
    const driver = portalDriver(h, tenant);
    const b = driver.browser();
    const started = await driver.startSignIn(b);
    const signIn = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: 'joiner@example.test', password: 'joiner password 1' });
    expect(signIn.status).toBe(303);
    const invitations = await api()
      .get(`${realmPath(tenant)}/invitations`)
      .set('authorization', AUTH);
    expect(invitations.body).toEqual({ invitations: [], next_cursor: null });
  });

  test('When one link is accepted ten times at once, then exactly one person is created and the others read "already used"', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'burst@example.test');
    const b = invitee();
    const form = await b.get(pathOf(created.url));
    const token = hiddenField(form.text, 'token');
    const csrf = hiddenField(form.text, 'csrf');

    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        b
          .post(`/realms/${tenant}/invitation`)
          .send({ token, csrf, password: 'burst password', confirm: 'burst password' }),
      ),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    // The others: the link already used, or (all checker threads busy) asked to try again.
    expect(statuses.every((s) => [303, 410, 429].includes(s))).toBe(true);
    const users = await h.service.db('users').where({ realm: tenant, email: 'burst@example.test' });
    expect(users).toHaveLength(1);
    const again = await b.get(pathOf(created.url));
    expect(again.status).toBe(410);
    expect(again.text).toContain('This invitation was already used');
  });

  test('When the link has expired, then its page says so and nothing is created', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'late@example.test');
    await h.service
      .db('user_invitations')
      .where({ id: created.id })
      .update({ expires_at: h.service.db.raw("now() - interval '1 second'") });

    const page = await invitee().get(pathOf(created.url));

    expect(page.status).toBe(410);
    expect(page.text).toContain('This invitation has expired');
  });

  test('When a link is unknown, forged or malformed, then every one reads the same and is 404', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'real@example.test');
    const real = new URL(created.url).searchParams.get('token')!;
    const forged = `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`;

    const pages = await Promise.all(
      [forged, 'short', '%00', `${real}x`, '', 'a'.repeat(5000)].map((token) =>
        invitee().get(`/realms/${tenant}/invitation?token=${token}`),
      ),
    );
    const noToken = await invitee().get(`/realms/${tenant}/invitation`);

    for (const page of [...pages, noToken]) {
      expect(page.status).toBe(404);
      expect(page.text).toContain('This invitation link is not valid');
    }
    const unknownRealm = await invitee().get(`/realms/no-such-realm-q/invitation?token=${real}`);
    expect(unknownRealm.status).toBe(404);
  });

  test('When the form is posted without the cookie of the page or with a forged CSRF field, then 403 and the link still works', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'csrf@example.test');
    const b = invitee();
    const form = await b.get(pathOf(created.url));
    const token = hiddenField(form.text, 'token');
    const csrf = hiddenField(form.text, 'csrf');

    const noCookie = await invitee()
      .post(`/realms/${tenant}/invitation`)
      .send({ token, csrf, password: 'password 123', confirm: 'password 123' });
    const forged = await b.post(`/realms/${tenant}/invitation`).send({
      token,
      csrf: `${csrf.slice(0, -2)}xx`,
      password: 'password 123',
      confirm: 'password 123',
    });

    expect(noCookie.status).toBe(403);
    expect(forged.status).toBe(403);
    const still = await b.get(pathOf(created.url));
    expect(still.status).toBe(200);
  });

  test('When the passwords differ or are too short, then the form again with why, and the link still works', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'typo@example.test');
    const b = invitee();
    const form = await b.get(pathOf(created.url));
    const fields = { token: hiddenField(form.text, 'token'), csrf: hiddenField(form.text, 'csrf') };

    const differ = await b
      .post(`/realms/${tenant}/invitation`)
      .send({ ...fields, password: 'password one', confirm: 'password two' });
    const short = await b
      .post(`/realms/${tenant}/invitation`)
      .send({ ...fields, password: 'short', confirm: 'short' });
    const long = await b
      .post(`/realms/${tenant}/invitation`)
      .send({ ...fields, password: 'x'.repeat(1100), confirm: 'x'.repeat(1100) });

    expect(differ.status).toBe(400);
    expect(differ.text).toContain('The two passwords differ');
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 8 characters');
    expect(long.status).toBe(400);
    expect(long.text).toContain('at most 1024 characters');
    const ok = await b
      .post(`/realms/${tenant}/invitation`)
      .send({ ...fields, password: 'password one', confirm: 'password one' });
    expect(ok.status).toBe(303);
  });

  test('When one source posts acceptances beyond its budget, then 429 with Retry-After, and another source is not held back', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'budget@example.test');
    const b = invitee();
    const form = await b.get(pathOf(created.url));
    const fields = { token: hiddenField(form.text, 'token'), csrf: hiddenField(form.text, 'csrf') };
    const limit = h.config.INVITATION_ACCEPTS_PER_IP;

    const answers = [];
    for (let i = 0; i <= limit; i += 1)
      answers.push(
        await b
          .post(`/realms/${tenant}/invitation`)
          .send({ ...fields, password: 'differs 1', confirm: 'differs 2' }),
      );
    const other = await openAndAccept(created.url);

    expect(answers.slice(0, limit).every((a) => a.status === 400)).toBe(true);
    expect(answers[limit]!.status).toBe(429);
    expect(Number(answers[limit]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(other.answer.status).toBe(303);
  });

  test('When invitations are created, opened and accepted, then no log line holds a token', async () => {
    const { tenant } = await h.createTenant();
    const created = await invite(tenant, 'logs@example.test');
    const token = new URL(created.url).searchParams.get('token')!;

    await openAndAccept(created.url);

    const lines = h.logs.filter((l) => l.includes('/invitation'));
    expect(lines.length).toBeGreaterThan(0);
    expect(h.logs.some((l) => l.includes(token))).toBe(false);
  });
});

describe('security events', () => {
  test('When the events are paged with before and limit, then newest first and bad queries are 400', async () => {
    const { tenant } = await h.createTenant();
    for (const email of ['p1@example.test', 'p2@example.test', 'p3@example.test'])
      await openAndAccept((await invite(tenant, email)).url);
    const path = `${realmPath(tenant)}/security-events`;

    const all = await api().get(path).set('authorization', AUTH);
    const page = await api()
      .get(`${path}?limit=1&before=${all.body[0].id}`)
      .set('authorization', AUTH);
    const bad = await Promise.all(
      ['limit=0', 'limit=201', 'before=0', 'before=x', 'before=99999999999999999999'].map((q) =>
        api().get(`${path}?${q}`).set('authorization', AUTH),
      ),
    );

    expect(all.body.map((e: { target_email: string }) => e.target_email)).toEqual([
      'p3@example.test',
      'p2@example.test',
      'p1@example.test',
    ]);
    expect(page.body).toEqual([all.body[1]]);
    expect(bad.map((r) => r.status)).toEqual([400, 400, 400, 400, 400]);
  });
});
