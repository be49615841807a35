/**
 * A service account's credentials through the account admin API (/api/v1), against the real
 * token service: keys, trusted workloads, the secret's removal, disabling; who may do each,
 * what the audit trail records, and that the token endpoint follows.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  assertionGrantBody,
  clientAssertion,
  clientKeyPair,
  freePort,
  rsaJwk,
  startWorkloadIssuer,
  TEST_DATABASE_URL,
  uniqueName,
  type WorkloadIssuer,
} from '@plant/test-kit';
import { clientCredentialsToken, signIn, type PortalSession } from './helpers/browser-client.js';
import { schemaErrors } from './helpers/openapi-check.js';
import {
  createTenant,
  startPortal,
  startTokenService,
  type Platform,
  type PortalHandle,
  type TestTenant,
} from './helpers/platform.js';

let ts: Platform;
let portal: PortalHandle;
let broken: PortalHandle;
let acme: TestTenant;
let admin: PortalSession;
let viewer: PortalSession;
let cluster: WorkloadIssuer;

beforeAll(async () => {
  cluster = await startWorkloadIssuer();
  ts = await startTokenService({
    serviceEnv: {
      'token-service': {
        FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
        FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
      },
    },
  });
  portal = await startPortal(ts);
  // A replica whose audit trail cannot be written (its database does not exist).
  broken = await startPortal(ts, {
    port: await freePort(),
    env: {
      DATABASE_URL: TEST_DATABASE_URL.replace(/\/[^/]*$/, '/plantstore_account_admin_missing'),
    },
  });
  acme = await createTenant(ts);
  // One after the other: the token service checks one password at a time on two cores.
  admin = await signIn(portal.url, acme.tenant, acme.admin);
  viewer = await signIn(portal.url, acme.tenant, acme.viewer);
}, 60_000);

afterAll(async () => {
  await broken?.stop();
  await portal?.stop();
  await ts?.close();
  await cluster?.close();
});

async function call(
  session: PortalSession,
  method: string,
  path: string,
  body?: unknown,
  base = portal.url,
) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: session.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    body: res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>),
  };
}

async function newAccount(): Promise<{ client_id: string; secret: string }> {
  const created = await call(admin, 'POST', '/service-accounts', { name: uniqueName('creds') });
  expect(created.status).toBe(201);
  return created.body as { client_id: string; secret: string };
}

async function auditOf(clientId: string): Promise<Array<Record<string, unknown>>> {
  return (
    (await call(admin, 'GET', '/audit-events?limit=100')).body as unknown as Array<
      Record<string, unknown>
    >
  ).filter((e) => e.client_id === clientId);
}

const tokenUrl = () => `${ts.authUrl}/realms/${acme.tenant}/protocol/openid-connect/token`;
const grant = (body: string) =>
  fetch(tokenUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });

describe('secrets through the account admin API', () => {
  const secretGrant = (clientId: string, secret: string) =>
    grant(
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      }).toString(),
    );

  test('When an Account Admin adds a second secret, then 201 with it shown once as documented, both secrets get tokens, the credentials list both, and the add is audited without the secret', async () => {
    const account = await newAccount();
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();

    const added = await call(admin, 'POST', `/service-accounts/${account.client_id}/secrets`, {
      expires_at: expiresAt,
    });
    const second = added.body as { id: string; secret: string; expires_at: string };

    expect(added.status).toBe(201);
    expect(schemaErrors('ServiceAccountSecretWithValue', added.body)).toEqual([]);
    expect(second).toMatchObject({
      id: expect.stringMatching(/^sec-[0-9a-f]{16}$/),
      expires_at: expiresAt,
    });
    expect((await secretGrant(account.client_id, account.secret)).status).toBe(200);
    expect((await secretGrant(account.client_id, second.secret)).status).toBe(200);
    const credentials = await call(
      admin,
      'GET',
      `/service-accounts/${account.client_id}/credentials`,
    );
    expect(schemaErrors('ServiceAccountCredentials', credentials.body)).toEqual([]);
    const secrets = credentials.body!.secrets as Array<Record<string, unknown>>;
    expect(secrets.map((s) => s.id)).toEqual([expect.any(String), second.id]);
    expect(JSON.stringify(credentials.body)).not.toContain(second.secret);
    const audit = await auditOf(account.client_id);
    expect(audit.map((e) => [e.action, e.details])).toEqual(
      expect.arrayContaining([
        ['service_account.secret_add', { secret: { id: second.id, expires_at: expiresAt } }],
      ]),
    );
    expect(JSON.stringify(audit)).not.toContain(second.secret);
  });

  test('When one of two secrets is removed, then 204, it is refused, the other keeps working, and the removal names it; a third secret is 409', async () => {
    const account = await newAccount();
    const first = (
      (await call(admin, 'GET', `/service-accounts/${account.client_id}/credentials`)).body!
        .secrets as Array<{ id: string }>
    )[0]!.id;
    const second = (await call(admin, 'POST', `/service-accounts/${account.client_id}/secrets`, {}))
      .body as { id: string; secret: string };
    const third = await call(admin, 'POST', `/service-accounts/${account.client_id}/secrets`, {});

    const removed = await call(
      admin,
      'DELETE',
      `/service-accounts/${account.client_id}/secrets/${first}`,
    );

    expect(third).toEqual({
      status: 409,
      body: {
        error: 409,
        message:
          'This service account already has two live secrets: remove one before adding another',
      },
    });
    expect(removed.status).toBe(204);
    expect((await secretGrant(account.client_id, account.secret)).status).toBe(401);
    expect((await secretGrant(account.client_id, second.secret)).status).toBe(200);
    expect((await auditOf(account.client_id)).map((e) => [e.action, e.details])).toEqual(
      expect.arrayContaining([['service_account.secret_remove', { secret: { id: first } }]]),
    );
    // The last secret is the last credential: refused.
    expect(
      (await call(admin, 'DELETE', `/service-accounts/${account.client_id}/secrets/${second.id}`))
        .status,
    ).toBe(409);
  });

  test('When a secret id is malformed or unknown, or the body is hostile, then 404 or 400 in the Error shape and nothing changes; a View user gets 403', async () => {
    const account = await newAccount();
    const base = `/service-accounts/${account.client_id}/secrets`;

    const answers = [
      await call(admin, 'DELETE', `${base}/not-a-secret`),
      await call(admin, 'DELETE', `${base}/sec-0000000000000000`),
      await call(admin, 'POST', base, { expires_at: 'tomorrow' }),
      await call(admin, 'POST', base, { expires_at: '2001-01-01T00:00:00Z' }),
      await call(admin, 'POST', base, { secret: 'pss_chosen' }),
      await call(viewer, 'POST', base, {}),
    ];

    expect(answers.map((a) => a.status)).toEqual([404, 404, 400, 400, 400, 403]);
    for (const answer of answers)
      expect(answer.body).toEqual({ error: answer.status, message: expect.any(String) });
    const credentials = await call(
      admin,
      'GET',
      `/service-accounts/${account.client_id}/credentials`,
    );
    expect(credentials.body!.secrets).toHaveLength(1);
  });

  test('When a secret add cannot be audited, then 503 and the secret is removed again', async () => {
    const account = await newAccount();

    const res = await call(
      admin,
      'POST',
      `/service-accounts/${account.client_id}/secrets`,
      {},
      broken.url,
    );

    expect(res.status).toBe(503);
    expect(
      (await call(admin, 'GET', `/service-accounts/${account.client_id}/credentials`)).body!
        .secrets,
    ).toHaveLength(1);
  });
});

describe('keys through the account admin API', () => {
  test('When an Account Admin adds a key, then 201 with the key as documented, the event is audited, and an assertion signed with it gets a token', async () => {
    const account = await newAccount();
    const key = clientKeyPair('ec');

    const added = await call(admin, 'POST', `/service-accounts/${account.client_id}/keys`, {
      jwk: { ...key.publicJwk, kid: 'ci-2026' },
    });
    const token = await grant(
      assertionGrantBody(
        account.client_id,
        clientAssertion({
          clientId: account.client_id,
          audience: `${ts.authUrl}/realms/${acme.tenant}`,
          key,
          kid: 'ci-2026',
        }),
      ),
    );

    expect(added).toEqual({
      status: 201,
      body: {
        id: 'ci-2026',
        alg: 'ES256',
        thumbprint: expect.any(String),
        created_at: expect.any(String),
        created_by: acme.admin.email,
        last_used_at: null,
      },
    });
    expect(schemaErrors('ServiceAccountKey', added.body)).toEqual([]);
    expect(token.status).toBe(200);
    expect(await auditOf(account.client_id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'service_account.key_add',
          details: { key: { id: 'ci-2026', alg: 'ES256', thumbprint: added.body!.thumbprint } },
        }),
      ]),
    );
  });

  test('When the key is removed, then 204, the event names it, and its assertions are refused', async () => {
    const account = await newAccount();
    const key = clientKeyPair('ed25519');
    const added = await call(admin, 'POST', `/service-accounts/${account.client_id}/keys`, {
      pem: key.publicPem,
    });
    const body = added.body as { id: string } | undefined;

    const removed = await call(
      admin,
      'DELETE',
      `/service-accounts/${account.client_id}/keys/${body!.id}`,
    );
    const token = await grant(
      assertionGrantBody(
        account.client_id,
        clientAssertion({
          clientId: account.client_id,
          audience: `${ts.authUrl}/realms/${acme.tenant}`,
          key,
          kid: body!.id,
        }),
      ),
    );

    expect(removed.status).toBe(204);
    expect(token.status).toBe(401);
    expect((await auditOf(account.client_id)).map((e) => [e.action, e.details])).toEqual(
      expect.arrayContaining([
        ['service_account.key_remove', { key: { id: body!.id, alg: 'EdDSA' } }],
      ]),
    );
  });

  test('When a key is refused by the token service, then its 400 message passes through and nothing is audited', async () => {
    const account = await newAccount();

    const res = await call(admin, 'POST', `/service-accounts/${account.client_id}/keys`, {
      jwk: clientKeyPair('ec').privateKey.export({ format: 'jwk' }),
    });

    expect(res).toEqual({
      status: 400,
      body: {
        error: 400,
        message: 'This JWK holds private or symmetric key material; add the public key only',
      },
    });
    expect((await auditOf(account.client_id)).map((e) => e.action)).toEqual([
      'service_account.create',
    ]);
  });

  test('When an Account Admin adds an RSA key whose exponent has 2047 bits (each check would cost milliseconds), then 400 saying why and nothing is stored or audited', async () => {
    const account = await newAccount();
    const hugeExponent = Buffer.concat([Buffer.from([0x7f]), Buffer.alloc(255, 0xff)]).toString(
      'base64url',
    );

    const res = await call(admin, 'POST', `/service-accounts/${account.client_id}/keys`, {
      jwk: rsaJwk(hugeExponent),
    });

    expect(res).toEqual({
      status: 400,
      body: {
        error: 400,
        message:
          'The RSA public exponent (e) must be odd and from 3 to 2^32 - 1 (65537 in practice)',
      },
    });
    expect(
      (await call(admin, 'GET', `/service-accounts/${account.client_id}/credentials`)).body?.keys,
    ).toEqual([]);
    expect((await auditOf(account.client_id)).map((e) => e.action)).toEqual([
      'service_account.create',
    ]);
  });

  test('When a key add cannot be audited, then 503 and the key is removed again', async () => {
    const account = await newAccount();

    const res = await call(
      admin,
      'POST',
      `/service-accounts/${account.client_id}/keys`,
      { jwk: clientKeyPair('ec').publicJwk },
      broken.url,
    );

    expect(res.status).toBe(503);
    expect(
      (await call(admin, 'GET', `/service-accounts/${account.client_id}/credentials`)).body!.keys,
    ).toEqual([]);
  });

  test('When a View user reads the credentials, then it sees them (never a secret), but adding or removing anything is 403', async () => {
    const account = await newAccount();

    const read = await call(viewer, 'GET', `/service-accounts/${account.client_id}/credentials`);
    const refused = [
      await call(viewer, 'POST', `/service-accounts/${account.client_id}/keys`, {
        jwk: clientKeyPair('ec').publicJwk,
      }),
      await call(viewer, 'POST', `/service-accounts/${account.client_id}/trusts`, {
        issuer: cluster.issuer,
        subject: 'x',
        audience: 'y',
      }),
      await call(viewer, 'DELETE', `/service-accounts/${account.client_id}/secret`),
      await call(viewer, 'POST', `/service-accounts/${account.client_id}/disable`),
    ];

    expect(read).toEqual({
      status: 200,
      body: {
        client_id: account.client_id,
        disabled: false,
        secret: { created_at: expect.any(String), last_used_at: null, expires_at: null },
        secrets: [expect.objectContaining({ id: expect.stringMatching(/^sec-/) })],
        keys: [],
        trusts: [],
        leaks: [],
      },
    });
    expect(schemaErrors('ServiceAccountCredentials', read.body)).toEqual([]);
    expect(JSON.stringify(read.body)).not.toContain(account.secret);
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403]);
  });

  test("When another tenant's Account Admin names this tenant's account, then 404 for every credential route", async () => {
    const account = await newAccount();
    const other = await createTenant(ts);
    const otherAdmin = await signIn(portal.url, other.tenant, other.admin);
    const path = `/service-accounts/${account.client_id}`;
    const before = (await call(admin, 'GET', `${path}/credentials`)).body!;
    const [secret] = before.secrets as Array<{ id: string }>;

    const answers = [
      await call(otherAdmin, 'GET', `${path}/credentials`),
      await call(otherAdmin, 'POST', `${path}/keys`, { jwk: clientKeyPair('ec').publicJwk }),
      await call(otherAdmin, 'POST', `${path}/trusts`, {
        issuer: cluster.issuer,
        subject: 'x',
        audience: 'y',
      }),
      await call(otherAdmin, 'DELETE', `${path}/secret`),
      await call(otherAdmin, 'POST', `${path}/secrets`, {}),
      await call(otherAdmin, 'DELETE', `${path}/secrets/${secret!.id}`),
      await call(otherAdmin, 'POST', `${path}/disable`),
    ];

    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    for (const answer of answers) expect(answer.body).toMatchObject({ error: 404 });
    const after = (await call(admin, 'GET', `${path}/credentials`)).body!;
    expect(after).toMatchObject({ keys: [], trusts: [], disabled: false });
    expect(after.secrets).toEqual(before.secrets);
  });
});

describe('trusts, the secret and the state through the account admin API', () => {
  test('When a trust is added, the secret removed and the workload asks for a token, then it gets one with no secret left anywhere, and each step is audited', async () => {
    const account = await newAccount();
    const audience = `${ts.authUrl}/realms/${acme.tenant}`;
    const subject = 'system:serviceaccount:shop:importer';

    const trust = await call(admin, 'POST', `/service-accounts/${account.client_id}/trusts`, {
      issuer: cluster.issuer,
      subject,
      audience,
    });
    const removed = await call(admin, 'DELETE', `/service-accounts/${account.client_id}/secret`);
    const bySecret = await clientCredentialsToken(
      ts.authUrl,
      acme.tenant,
      account.client_id,
      account.secret,
    );
    const byWorkload = await grant(
      assertionGrantBody(account.client_id, cluster.mint({ subject, audience })),
    );

    expect(trust).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(/^trust-[0-9a-f]{16}$/),
        issuer: cluster.issuer,
        subject,
        audience,
        created_at: expect.any(String),
        created_by: acme.admin.email,
        last_used_at: null,
      },
    });
    expect(schemaErrors('ServiceAccountTrust', trust.body)).toEqual([]);
    expect(removed.status).toBe(204);
    expect([bySecret.status, byWorkload.status]).toEqual([401, 200]);
    expect((await auditOf(account.client_id)).map((e) => e.action).reverse()).toEqual([
      'service_account.create',
      'service_account.trust_add',
      'service_account.secret_remove',
    ]);
  });

  test('When the secret is the only credential, then removing it is 409 with the reason', async () => {
    const account = await newAccount();

    expect(await call(admin, 'DELETE', `/service-accounts/${account.client_id}/secret`)).toEqual({
      status: 409,
      body: {
        error: 409,
        message:
          "The secret is this service account's only credential: add a key or a trust before removing it",
      },
    });
  });

  test('When an account is disabled and enabled, then the list shows the state, the secret is refused meanwhile, and both are audited', async () => {
    const account = await newAccount();

    const disabled = await call(admin, 'POST', `/service-accounts/${account.client_id}/disable`);
    const listed = (
      (await call(admin, 'GET', '/service-accounts')).body as unknown as Array<
        Record<string, unknown>
      >
    ).find((a) => a.client_id === account.client_id);
    const whileDisabled = await clientCredentialsToken(
      ts.authUrl,
      acme.tenant,
      account.client_id,
      account.secret,
    );
    const enabled = await call(admin, 'POST', `/service-accounts/${account.client_id}/enable`);
    const afterwards = await clientCredentialsToken(
      ts.authUrl,
      acme.tenant,
      account.client_id,
      account.secret,
    );

    expect(disabled.body).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    expect(schemaErrors('ServiceAccount', disabled.body)).toEqual([]);
    expect(listed).toMatchObject({ disabled: true });
    expect([whileDisabled.status, afterwards.status]).toEqual([401, 200]);
    expect(enabled.body).toMatchObject({ disabled: false, disabled_at: null });
    expect((await auditOf(account.client_id)).map((e) => e.action).reverse()).toEqual([
      'service_account.create',
      'service_account.disable',
      'service_account.enable',
    ]);
  });

  test('When a session request changes a credential without the CSRF header, then 403 and nothing changes', async () => {
    const account = await newAccount();

    const res = await fetch(`${portal.url}/api/v1/service-accounts/${account.client_id}/disable`, {
      method: 'POST',
      headers: { cookie: admin.headers().cookie as string },
    });

    expect(res.status).toBe(403);
    expect((await call(admin, 'GET', `/service-accounts/${account.client_id}`)).body).toMatchObject(
      { disabled: false },
    );
  });
});
