/**
 * The tenant's credential policy through /api/v1/settings/credentials and a service account's
 * own quota through PATCH /service-accounts/{id}: who may read and change them, what the token
 * endpoint then does, and what the audit trail records.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, type Knex } from '@plant/shared/db';
import { TEST_DATABASE_URL } from '@plant/test-kit';
import { signIn, type PortalSession } from './helpers/browser-client.js';
import { schemaErrors } from './helpers/openapi-check.js';
import { ISO, useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
let viewer: PortalSession;
/** The token service's schema, to backdate a secret (nothing in the API can). */
let auth: Knex;

beforeAll(async () => {
  viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);
  auth = createDatabase({ connectionString: TEST_DATABASE_URL, schema: 'auth', poolMax: 1 });
});

afterAll(async () => {
  await auth?.destroy();
});

async function grant(clientId: string, secret: string): Promise<Response> {
  return fetch(`${p.ts.authUrl}/realms/${p.acme.tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  });
}

describe('/api/v1/settings/credentials', () => {
  test('When a View user reads the policy, then it sees it, but changing it is 403 and records nothing', async () => {
    const before = await p.auditEvents();
    const read = await p.call(viewer, 'GET', '/settings/credentials');
    const change = await p.call(viewer, 'PATCH', '/settings/credentials', {
      body: { leak_response: 'notify' },
    });

    expect(read.status).toBe(200);
    const policy = await read.json();
    expect(schemaErrors('CredentialPolicy', policy)).toEqual([]);
    expect(policy).toMatchObject({
      leak_response: 'revoke',
      default_quota: { per_minute: 600, mode: 'off' },
    });
    expect(change.status).toBe(403);
    expect(await p.auditEvents()).toEqual(before);
  });

  test('When an Account Admin sets a maximum age, then older secrets are refused saying they expired, the accounts show their expiry, and the trail records the change from/to', async () => {
    const account = await p.createAccount('aged');
    const aged = new Date(Date.now() - 8 * 86_400_000);
    await auth('service_account_secrets')
      .where({ sub: account.client_id })
      .update({ created_at: aged });
    // The account row mirrors its newest secret (for replicas of the previous release).
    await auth('service_accounts')
      .where({ sub: account.client_id })
      .update({ secret_created_at: aged });

    const res = await p.asAdminSession('PATCH', '/settings/credentials', {
      secret_max_age_days: 7,
    });

    expect(res.status).toBe(200);
    const policy = await res.json();
    expect(policy).toMatchObject({
      secret_max_age_days: 7,
      updated_at: ISO,
      updated_by: p.acme.admin.email,
    });
    const refused = await grant(account.client_id!, account.secret!);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error_description: string }).error_description).toContain(
      'expired',
    );
    const shown = await (
      await p.asAdminSession('GET', `/service-accounts/${account.client_id}`)
    ).json();
    expect(shown.secret_expires_at).toEqual(ISO);
    const [latest] = await p.auditEvents();
    expect(latest).toMatchObject({
      action: 'credential_policy.update',
      actor_email: p.acme.admin.email,
      client_id: p.acme.tenant,
      details: { secret_max_age_days: { from: null, to: 7 } },
    });
    await p.asAdminSession('PATCH', '/settings/credentials', { secret_max_age_days: null });
    expect((await grant(account.client_id!, account.secret!)).status).toBe(200);
  });

  test('When the body is out of bounds, unknown or empty, then 400 with a message naming the rule', async () => {
    const answers = await Promise.all(
      [
        { secret_max_age_days: 731 },
        { leak_response: 'ignore' },
        { default_quota: { per_minute: 10, mode: 'sometimes' } },
        { extra: true },
        {},
      ].map((body) => p.asAdminSession('PATCH', '/settings/credentials', body)),
    );
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 400]);
    expect(bodies.map((b) => b.message)).toEqual([
      'secret_max_age_days must be an integer from 1 to 730',
      'leak_response must be "revoke" or "notify"',
      'default_quota.mode: mode must be "off", "log" or "enforce"',
      expect.stringContaining('Unknown field "extra"'),
      'secret_max_age_days, leak_response or default_quota is required',
    ]);
  });
});

describe("a service account's own quota", () => {
  test('When an Account Admin gives an account an enforced quota, then its grants beyond it get 429, its tokens are not revoked, and the trail records the quota from/to', async () => {
    const account = await p.createAccount('quota');
    await grant(account.client_id!, account.secret!);

    const res = await p.asAdminSession('PATCH', `/service-accounts/${account.client_id}`, {
      quota: { per_minute: 1, mode: 'enforce' },
    });

    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated.quota).toEqual({ per_minute: 1, mode: 'enforce' });
    expect(schemaErrors('ServiceAccount', updated)).toEqual([]);
    expect((await grant(account.client_id!, account.secret!)).status).toBe(200);
    const over = await grant(account.client_id!, account.secret!);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const events = await p.auditEvents();
    // Newest first: the realm's record of the refusal, after the change that set the quota.
    expect(events[0]).toMatchObject({
      action: 'service_account.quota_exceeded',
      client_id: account.client_id,
    });
    expect(events[1]).toMatchObject({
      action: 'service_account.update',
      client_id: account.client_id,
      details: { quota: { from: null, to: { per_minute: 1, mode: 'enforce' } } },
    });
    const viewerChange = await p.call(viewer, 'PATCH', `/service-accounts/${account.client_id}`, {
      body: { quota: null },
    });
    expect(viewerChange.status).toBe(403);
  });
});
