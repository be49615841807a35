/**
 * Token exchange (RFC 8693) at a realm's token endpoint: a service account an Account Admin
 * allowed to act for others at an audience exchanges a subject's token for one naming both;
 * and every way an attacker would use it otherwise: another realm's token, a portal token, a
 * wider scope or audience, a revoked or expired subject, an actor without the permission, a
 * chain deeper than the bound, a subject token replayed after the subject's reset; and a
 * trusted workload's platform token as the subject (RFC 8693 `jwt` type), forged, foreign or
 * untrusted ones refused.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { dpopKey, eventually } from '@plant/test-kit';
import {
  ADMIN_PASSWORD,
  basic,
  decodeJwt,
  TEST_ENV,
  uniqueIp,
  useHarness,
  type Harness,
} from './helpers/harness.js';
import { AUTH, internal, type CreatedAccount } from './helpers/internal-client.js';
import { portalDriver, REDIRECT_URI } from './helpers/portal-driver.js';
import {
  FEDERATION_TEST_ENV,
  startWorkloadIssuer,
  trustedWorkload,
  type TrustedWorkload,
} from './helpers/workload-client.js';
import type { WorkloadIssuer } from '@plant/test-kit';
import { tokenRequest } from './helpers/token-client.js';

const INVENTORY = 'http://inventory.test';
const PLANTS = TEST_ENV.PLANT_STORE_AUDIENCE;
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';
const [PLANT_STORE_CREDENTIAL] = TEST_ENV.RESOURCE_SERVER_TOKENS.split(',');

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

useHarness(
  (started, first) => {
    h = started;
    tenant = first;
    api = internal(h);
  },
  { API_AUDIENCES: INVENTORY, ...FEDERATION_TEST_ENV },
);

// The platform of the callers' workloads (a CI system, a cluster): a local issuer of the test kit.
let platform: WorkloadIssuer;
beforeAll(async () => {
  platform = await startWorkloadIssuer();
});
afterAll(() => platform.close());

let adminEmail: string;

// A realm of each test's own: the tests make many accounts, and a realm holds 25.
beforeEach(async () => {
  ({ tenant, adminEmail } = await h.createTenant());
});

/** A person's portal token: the Account Admin signed in to the portal, a token for account-admin's API. */
async function portalToken(): Promise<string> {
  const driver = portalDriver(h, tenant);
  const b = driver.browser();
  const resource = TEST_ENV.ACCOUNT_ADMIN_AUDIENCE;
  const started = await driver.startSignIn(b, {
    resource,
    scope: 'openid email profile plants:read plants:write',
  });
  const { callback } = await driver.completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
  const res = await request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .type('form')
    .send({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URI,
      client_id: 'portal',
      code_verifier: started.verifier,
      resource,
    });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

function delegate(realm: string, clientId: string, delegations: object[]) {
  return api.raw
    .put(`/internal/v1/realms/${realm}/service-accounts/${clientId}/delegations`)
    .set('authorization', AUTH)
    .send({ delegations, actor: 'admin@example.test' });
}

async function tokenOf(
  account: CreatedAccount,
  form: Record<string, string> = {},
  realm = tenant,
): Promise<string> {
  const res = await tokenRequest(h, realm)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form')
    .send({ grant_type: 'client_credentials', ...form });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

function exchange(
  actor: CreatedAccount,
  form: Record<string, string | string[]>,
  { realm = tenant, proof }: { realm?: string; proof?: string } = {},
) {
  const req = tokenRequest(h, realm)
    .set('authorization', basic(actor.client_id, actor.secret))
    .type('form');
  if (proof !== undefined) req.set('dpop', proof);
  return req.send({ grant_type: GRANT, subject_token_type: AT, audience: PLANTS, ...form });
}

function introspect(token: string) {
  return request(h.publicUrl)
    .post(`/realms/${tenant}/protocol/openid-connect/token/introspect`)
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', `Bearer ${PLANT_STORE_CREDENTIAL}`)
    .type('form')
    .send({ token });
}

/** A caller (Edit, so its token has plants:write) whose token names the inventory API, and an inventory account allowed to act for others at the Plant Store. */
async function parties(scope = 'plants:read plants:write') {
  const caller = await api.createServiceAccount(tenant);
  await api.patch(tenant, caller.client_id, { role: 'Edit' }).expect(200);
  const inventory = await api.createServiceAccount(tenant);
  await delegate(tenant, inventory.client_id, [{ audience: PLANTS, scope }]).expect(200);
  const subjectToken = await tokenOf(caller, { resource: INVENTORY });
  return { caller, inventory, subjectToken };
}

describe('Token exchange: the permission', () => {
  test('When an Account Admin allows an account to act for others, then GET shows it and an unknown audience or a repeated one is 400', async () => {
    const account = await api.createServiceAccount(tenant);
    const put = await delegate(tenant, account.client_id, [
      { audience: `${PLANTS}/`, scope: 'plants:read' },
    ]);
    expect(put.status).toBe(200);
    expect(put.body.delegations).toEqual([
      {
        audience: PLANTS,
        scope: 'plants:read',
        created_at: expect.any(String),
        created_by: 'admin@example.test',
      },
    ]);
    const got = await api.raw
      .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/delegations`)
      .set('authorization', AUTH)
      .expect(200);
    expect(got.body).toEqual(put.body);
    for (const bad of [
      [{ audience: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE, scope: 'plants:read' }],
      [{ audience: 'https://elsewhere.test', scope: 'plants:read' }],
      [{ audience: PLANTS, scope: 'ssf.read' }],
      [
        { audience: PLANTS, scope: 'plants:read' },
        { audience: PLANTS, scope: 'plants:write' },
      ],
    ])
      expect((await delegate(tenant, account.client_id, bad)).status).toBe(400);
    expect((await delegate(tenant, 'no-such-account', [])).status).toBe(404);
  });

  test('When a resource server credential sets a permission, then 403', async () => {
    const account = await api.createServiceAccount(tenant);
    const res = await api.raw
      .put(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/delegations`)
      .set('authorization', `Bearer ${PLANT_STORE_CREDENTIAL}`)
      .send({ delegations: [] });
    expect(res.status).toBe(403);
  });
});

describe('Token exchange: the token', () => {
  test('When a permitted account exchanges a caller token, then it gets a token for the one audience naming both, within the subject token', async () => {
    const { caller, inventory, subjectToken } = await parties();
    const res = await exchange(inventory, { subject_token: subjectToken });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: AT,
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'plants:read plants:write',
    });
    const { header, payload } = decodeJwt(res.body.access_token);
    const subject = decodeJwt(subjectToken).payload;
    expect(header.typ).toBe('at+jwt');
    expect(payload).toMatchObject({
      iss: h.issuer(tenant),
      aud: PLANTS,
      sub: caller.client_id,
      client_id: inventory.client_id,
      tenant,
      principal_type: 'service_account',
      role: 'Edit',
      ver: subject.ver,
      scope: 'plants:read plants:write',
      act: { sub: inventory.client_id, ver: expect.any(Number) },
    });
    expect(payload.exp).toBeLessThanOrEqual(subject.exp as number);
    const seen = await introspect(res.body.access_token).expect(200);
    expect(seen.body).toMatchObject({ active: true, act: { sub: inventory.client_id } });
  });

  test('When the permission allows only reading, or only reading is asked, then the scope is the intersection', async () => {
    const narrow = await parties('plants:read');
    const res = await exchange(narrow.inventory, { subject_token: narrow.subjectToken });
    expect(res.body.scope).toBe('plants:read');
    const { inventory, subjectToken } = await parties();
    const asked = await exchange(inventory, { subject_token: subjectToken, scope: 'plants:read' });
    expect(asked.body.scope).toBe('plants:read');
  });

  test('When the actor sends a DPoP proof, then the token is bound to the actor key', async () => {
    const { inventory, subjectToken } = await parties();
    const key = dpopKey();
    const proof = key.proof({ htm: 'POST', htu: `${h.publicUrl}${h.tokenUrl(tenant)}` });
    const res = await exchange(inventory, { subject_token: subjectToken }, { proof });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(res.body.access_token).payload.cnf).toEqual({ jkt: key.thumbprint });
  });

  test('When an exchanged token is exchanged again, then act nests; beyond three actors, invalid_request', async () => {
    const { inventory, subjectToken } = await parties();
    let token = subjectToken;
    const actors: CreatedAccount[] = [];
    for (let depth = 1; depth <= 3; depth += 1) {
      const actor = depth === 1 ? inventory : await api.createServiceAccount(tenant);
      if (depth > 1)
        await delegate(tenant, actor.client_id, [
          { audience: PLANTS, scope: 'plants:read plants:write' },
        ]).expect(200);
      const res = await exchange(actor, { subject_token: token });
      expect(res.status).toBe(200);
      token = res.body.access_token;
      actors.push(actor);
    }
    const { act } = decodeJwt(token).payload as {
      act: { sub: string; act: { sub: string; act: { sub: string } } };
    };
    expect([act.sub, act.act.sub, act.act.act.sub]).toEqual(
      [...actors].reverse().map((a) => a.client_id),
    );
    const fourth = await api.createServiceAccount(tenant);
    await delegate(tenant, fourth.client_id, [{ audience: PLANTS, scope: 'plants:read' }]).expect(
      200,
    );
    const res = await exchange(fourth, { subject_token: token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('When the discovery document is read, then it names the grant', async () => {
    const res = await request(h.publicUrl).get(
      `/realms/${tenant}/.well-known/openid-configuration`,
    );
    expect(res.body.grant_types_supported).toContain(GRANT);
  });
});

describe('Token exchange: what an attacker tries', () => {
  test('When the actor has no permission at all, then unauthorized_client; for another audience, invalid_target', async () => {
    const { subjectToken } = await parties();
    const stranger = await api.createServiceAccount(tenant);
    const res = await exchange(stranger, { subject_token: subjectToken });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
    const elsewhere = await api.createServiceAccount(tenant);
    await delegate(tenant, elsewhere.client_id, [
      { audience: INVENTORY, scope: 'plants:read' },
    ]).expect(200);
    const other = await exchange(elsewhere, { subject_token: subjectToken });
    expect(other.body.error).toBe('invalid_target');
  });

  test('When the audience is widened (two audiences, an unknown one, account-admin), then invalid_target', async () => {
    const { inventory, subjectToken } = await parties();
    const widened: Record<string, string | string[]>[] = [
      { audience: [PLANTS, INVENTORY] },
      { audience: PLANTS, resource: INVENTORY },
      { audience: 'https://elsewhere.test' },
      { audience: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE },
    ];
    for (const form of widened) {
      const res = await exchange(inventory, { subject_token: subjectToken, ...form });
      expect({ form, error: res.body.error }).toEqual({ form, error: 'invalid_target' });
    }
  });

  test('When the scope is widened beyond the subject token, then the token keeps the subject scope; an undelegable scope is invalid_scope', async () => {
    const viewer = await api.createServiceAccount(tenant);
    const inventory = await api.createServiceAccount(tenant);
    await delegate(tenant, inventory.client_id, [
      { audience: PLANTS, scope: 'plants:read plants:write' },
    ]).expect(200);
    const subjectToken = await tokenOf(viewer, { resource: INVENTORY });
    const wide = await exchange(inventory, {
      subject_token: subjectToken,
      scope: 'plants:read plants:write',
    });
    expect(wide.body.scope).toBe('plants:read');
    const onlyWrite = await exchange(inventory, {
      subject_token: subjectToken,
      scope: 'plants:write',
    });
    expect(onlyWrite.body.error).toBe('invalid_scope');
    const ssf = await exchange(inventory, { subject_token: subjectToken, scope: 'ssf.read' });
    expect(ssf.body.error).toBe('invalid_scope');
  });

  test('When the subject token is of another realm, forged, or not an access token, then invalid_request', async () => {
    const { inventory, subjectToken } = await parties();
    const { tenant: other } = await h.createTenant();
    const stranger = await api.createServiceAccount(other);
    const foreign = await tokenOf(stranger, {}, other);
    const [head, body] = subjectToken.split('.');
    const refused: Record<string, string>[] = [
      { subject_token: foreign },
      { subject_token: `${head}.${body}.AAAA` },
      {
        subject_token: subjectToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      },
      { subject_token: subjectToken, actor_token: subjectToken },
      {
        subject_token: subjectToken,
        requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
      },
    ];
    for (const form of refused) {
      const res = await exchange(inventory, form);
      expect({ status: res.status, error: res.body.error }).toEqual({
        status: 400,
        error: 'invalid_request',
      });
    }
  });

  test("When a person's portal token is the subject or actor token, then invalid_request: the portal's power never passes to automation", async () => {
    const { inventory, subjectToken } = await parties();
    const portal = await portalToken();
    const person = decodeJwt(portal).payload;
    expect(person).toMatchObject({ aud: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE, principal_type: 'user' });
    // The portal token is live: introspection answers it, so only the exchange's rule refuses it.
    expect((await introspect(portal).expect(200)).body.active).toBe(true);
    const forms: Record<string, string>[] = [
      { subject_token: portal },
      { subject_token: portal, scope: 'plants:read' },
      { subject_token: subjectToken, actor_token: portal, actor_token_type: AT },
    ];
    for (const form of forms) {
      const res = await exchange(inventory, form);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: 'invalid_request', error_description: expect.any(String) },
      });
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  test('When the subject token is exchanged in another realm, then the actor is unknown there', async () => {
    const { inventory, subjectToken } = await parties();
    const { tenant: other } = await h.createTenant();
    const res = await exchange(inventory, { subject_token: subjectToken }, { realm: other });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('When the subject is reset, then its token cannot be exchanged again, and what was exchanged is refused', async () => {
    const { caller, inventory, subjectToken } = await parties();
    const exchanged = (await exchange(inventory, { subject_token: subjectToken }).expect(200)).body
      .access_token;
    await api.reset(tenant, caller.client_id).expect(200);
    await eventually(
      async () => (await introspect(exchanged)).body.active === false,
      'introspection refuses it',
    );
    const replay = await exchange(inventory, { subject_token: subjectToken });
    expect(replay.body.error).toBe('invalid_request');
  });

  test("When the actor's secret that made an exchange is removed, then exactly what it exchanged is refused; its other secret's exchange stays active", async () => {
    const { inventory, subjectToken } = await parties();
    const firstId = (await api.credentials(tenant, inventory.client_id).expect(200)).body.secrets[0]
      .id as string;
    const second = (await api.addSecret(tenant, inventory.client_id).expect(201)).body as {
      id: string;
      secret: string;
    };
    const viaFirst = (await exchange(inventory, { subject_token: subjectToken }).expect(200)).body
      .access_token as string;
    const viaSecond = (
      await exchange(
        { ...inventory, secret: second.secret },
        { subject_token: subjectToken },
      ).expect(200)
    ).body.access_token as string;
    expect(decodeJwt(viaFirst).payload.act).toMatchObject({ cred: `secret:${firstId}` });
    expect(decodeJwt(viaSecond).payload.act).toMatchObject({ cred: `secret:${second.id}` });
    expect(decodeJwt(viaFirst).payload.cred).toBe(decodeJwt(subjectToken).payload.cred);

    await api.removeSecretById(tenant, inventory.client_id, firstId).expect(204);
    await eventually(
      async () => (await introspect(viaFirst)).body.active === false,
      'introspection refuses it',
    );
    expect((await introspect(viaSecond)).body.active).toBe(true);
    expect((await introspect(subjectToken)).body.active).toBe(true);
  });

  test("When the subject's secret is removed, then what was exchanged from its token is refused", async () => {
    const { caller, inventory, subjectToken } = await parties();
    const firstId = (await api.credentials(tenant, caller.client_id).expect(200)).body.secrets[0]
      .id as string;
    await api.addSecret(tenant, caller.client_id).expect(201);
    const exchanged = (await exchange(inventory, { subject_token: subjectToken }).expect(200)).body
      .access_token as string;
    expect(decodeJwt(exchanged).payload.cred).toBe(`secret:${firstId}`);

    await api.removeSecretById(tenant, caller.client_id, firstId).expect(204);
    await eventually(
      async () => (await introspect(exchanged)).body.active === false,
      'introspection refuses it',
    );
    const replay = await exchange(inventory, { subject_token: subjectToken });
    expect(replay.body.error).toBe('invalid_request');
  });

  test('When the actor is reset or loses the permission, then what it exchanged is refused', async () => {
    const first = await parties();
    const token = (
      await exchange(first.inventory, { subject_token: first.subjectToken }).expect(200)
    ).body.access_token;
    await api.reset(tenant, first.inventory.client_id).expect(200);
    await eventually(
      async () => (await introspect(token)).body.active === false,
      'introspection refuses it',
    );
    const second = await parties();
    const kept = (
      await exchange(second.inventory, { subject_token: second.subjectToken }).expect(200)
    ).body.access_token;
    await delegate(tenant, second.inventory.client_id, []).expect(200);
    await eventually(
      async () => (await introspect(kept)).body.active === false,
      'introspection refuses it',
    );
    const again = await exchange(second.inventory, { subject_token: second.subjectToken });
    expect(again.body.error).toBe('unauthorized_client');
  });
});

/** A job of the workload platform, trusted by an Edit account, and an inventory account allowed to act for others at the Plant Store. */
async function workloadParties() {
  const job = await trustedWorkload(h, tenant, platform);
  await api.patch(tenant, job.account.client_id, { role: 'Edit' }).expect(200);
  const inventory = await api.createServiceAccount(tenant);
  await delegate(tenant, inventory.client_id, [
    { audience: PLANTS, scope: 'plants:read plants:write' },
  ]).expect(200);
  return { job, inventory };
}

const platformTokenOf = (job: TrustedWorkload, claims: Record<string, unknown> = {}) =>
  platform.mint({ subject: job.subject, audience: job.audience, claims });

const refusedBody = { error: 'invalid_request', error_description: expect.any(String) };

describe("Token exchange: a trusted workload's platform token as the subject", () => {
  test('When the actor exchanges a platform token of a trusted job, then the token speaks for the trusting account, names the actor, and lives no longer than the platform token', async () => {
    const { job, inventory } = await workloadParties();
    const exp = Math.floor(Date.now() / 1000) + 120;
    const subjectToken = platformTokenOf(job, { exp, may_act: { sub: inventory.client_id } });

    const res = await exchange(inventory, { subject_token: subjectToken, subject_token_type: JWT });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: AT,
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'plants:read plants:write',
    });
    const { payload } = decodeJwt(res.body.access_token);
    expect(payload).toMatchObject({
      iss: h.issuer(tenant),
      aud: PLANTS,
      sub: job.account.client_id,
      client_id: inventory.client_id,
      tenant,
      principal_type: 'service_account',
      role: 'Edit',
      act: { sub: inventory.client_id, ver: expect.any(Number) },
    });
    expect(payload.exp).toBeLessThanOrEqual(exp);
    expect((await introspect(res.body.access_token).expect(200)).body).toMatchObject({
      active: true,
      sub: job.account.client_id,
      act: { sub: inventory.client_id },
    });
  });

  test('When the trusting account is reset, then what was exchanged is refused; once the trust is removed, the platform token is no subject', async () => {
    const { job, inventory } = await workloadParties();
    const subjectToken = platformTokenOf(job);
    const form = { subject_token: subjectToken, subject_token_type: JWT };
    const exchanged = (await exchange(inventory, form).expect(200)).body.access_token;
    await api.reset(tenant, job.account.client_id).expect(200);
    await eventually(
      async () => (await introspect(exchanged)).body.active === false,
      'introspection refuses it',
    );
    // Minted after the reset, with the account's new version: live again.
    const again = (await exchange(inventory, form).expect(200)).body.access_token;
    expect((await introspect(again)).body.active).toBe(true);
    await api.removeTrust(tenant, job.account.client_id, job.trustId).expect(204);
    await eventually(
      async () => (await exchange(inventory, form)).body.error === 'invalid_request',
      'the platform token is refused once the trust is gone',
    );
  });

  test('When the platform token is forged, foreign, expired, for another audience, trusted elsewhere or names another actor, then 400 invalid_request in the RFC 6749 body', async () => {
    const { job, inventory } = await workloadParties();
    const foreign = await startWorkloadIssuer();
    try {
      const { tenant: other } = await h.createTenant();
      const elsewhere = await trustedWorkload(h, other, platform);
      const [head, body] = platformTokenOf(job).split('.');
      const realmToken = await tokenOf(inventory);
      const now = Math.floor(Date.now() / 1000);
      const refused: Record<string, string>[] = [
        // Signed by a key the platform does not publish.
        {
          subject_token: platform.mintWithUnpublishedKey({
            subject: job.subject,
            audience: job.audience,
          }),
        },
        { subject_token: `${head}.${body}.AAAA` },
        // Another platform's token about the same workload name: the trust names its issuer.
        { subject_token: foreign.mint({ subject: job.subject, audience: job.audience }) },
        { subject_token: platformTokenOf(job, { exp: now - 60, iat: now - 120 }) },
        {
          subject_token: platform.mint({
            subject: job.subject,
            audience: 'https://elsewhere.test',
          }),
        },
        {
          subject_token: platform.mint({ subject: `${job.subject}-other`, audience: job.audience }),
        },
        // Trusted by an account of another realm only.
        {
          subject_token: platform.mint({
            subject: elsewhere.subject,
            audience: elsewhere.audience,
          }),
        },
        // The platform says who may act for the job (RFC 8693 §4.4): someone else.
        { subject_token: platformTokenOf(job, { may_act: { sub: 'sa-someone-else' } }) },
        // The realm's own access token is no workload's, and a platform token is no access token.
        { subject_token: realmToken },
        { subject_token: platformTokenOf(job), subject_token_type: AT },
        { subject_token: 'not-a-jwt' },
      ];
      for (const form of refused) {
        const res = await exchange(inventory, { subject_token_type: JWT, ...form });
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: refusedBody });
      }
    } finally {
      await foreign.close();
    }
  });

  test('When two accounts trust the same workload, then its platform token names no single account: invalid_request', async () => {
    const { job, inventory } = await workloadParties();
    const twin = await api.createServiceAccount(tenant);
    const added = await api.addTrust(tenant, twin.client_id, {
      issuer: platform.issuer,
      subject: job.subject,
      audience: job.audience,
    });
    expect(added.status).toBe(201);
    const res = await exchange(inventory, {
      subject_token: platformTokenOf(job),
      subject_token_type: JWT,
    });
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: refusedBody });
  });

  test('When the trusting account is disabled, then its platform token is no subject', async () => {
    const { job, inventory } = await workloadParties();
    await api.setDisabled(tenant, job.account.client_id, true).expect(200);
    await eventually(
      async () =>
        (
          await exchange(inventory, {
            subject_token: platformTokenOf(job),
            subject_token_type: JWT,
          })
        ).body.error === 'invalid_request',
      'the disabled account stands for no one',
    );
  });
});
