/**
 * Topology 1: two replicas of each service behind Debian's nginx, configured from k8s/base's
 * Ingress. The seed's whole flow goes through the ingress only, and whichever replica answers
 * a request must answer it the same: portal sessions live in Redis, tokens verify at every
 * Plant Store, a reset revokes at every Plant Store.
 */
import type { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { httpRequest } from '@plant/e2e';
import { uniqueName } from '@plant/test-kit';
import { startTopology, type PortalUser, type Topology } from '../src/index.js';

const FAILURES_PER_CLIENT_IP = 4;
let t: Topology;
let tenant: string;
let admin: PortalUser;

beforeAll(async () => {
  t = await startTopology({ platform: { serviceEnv: { 'token-service': { CLIENT_AUTH_FAILURES_PER_CLIENT_IP: String(FAILURES_PER_CLIENT_IP) } } } });
  tenant = await t.platform.createTenant('ingress');
  const session = await t.signIn.portalSession(tenant, `admin@${tenant}.test`);
  admin = { cookie: session.cookie, csrf: session.csrf };
}, 180_000);

afterAll(() => t?.close());

/** The replicas (`127.0.0.1:<port>`) nginx sent the requests with these ids to. */
function upstreamsOf(requestIds: string[]): Set<string> {
  const wanted = new Set(requestIds);
  return new Set(t.ingress.accessLog().filter((line) => wanted.has(line.requestId)).flatMap((line) => line.upstreams));
}

const addressesOf = (service: 'plant-store' | 'token-service' | 'account-admin') =>
  new Set((service === 'plant-store' ? t.platform.plantStores : service === 'token-service' ? t.platform.tokenServices : t.platform.accountAdmins).map((p) => `127.0.0.1:${p.port}`));

describe('the seed flow through nginx, two replicas of each service', () => {
  test('When a signed-in admin creates a service account, gets tokens, creates and lists plants and resets the secret, all through nginx, then every step works whichever replica answers and the old token is refused at every Plant Store replica', async () => {
    const me = await Promise.all(Array.from({ length: 6 }, (_, i) => t.portalApi(admin, 'GET', '/api/v1/me').then((res) => ({ res, i }))));
    expect(me.map(({ res }) => [res.status, (res.body as { email?: string }).email])).toEqual(Array(6).fill([200, `admin@${tenant}.test`]));
    expect(upstreamsOf(me.map(({ res }) => String(res.headers['x-request-id'])))).toEqual(addressesOf('account-admin'));

    const created = await t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('robot') });
    expect(created.status).toBe(201);
    const account = created.body as { client_id: string; secret: string; role: string };
    expect(account.role).toBe('View');
    const promoted = await t.portalApi(admin, 'PATCH', `/api/v1/service-accounts/${account.client_id}`, { role: 'Edit' });
    expect(promoted.status).toBe(200);

    const grantIds = Array.from({ length: 4 }, () => uniqueName('grant'));
    const grants = await Promise.all(grantIds.map((requestId) => t.grant(tenant, account.client_id, account.secret, { requestId })));
    expect(grants.map((g) => g.status)).toEqual([200, 200, 200, 200]);
    expect(upstreamsOf(grantIds)).toEqual(addressesOf('token-service'));
    const token = (grants[0]!.body as { access_token: string }).access_token;

    const base = Date.now() * 1000;
    const createIds = Array.from({ length: 4 }, () => uniqueName('create'));
    const creates = await Promise.all(createIds.map((requestId, i) => t.createPlant(token, { id: base + i, name: `Ficus ${i}`, tag: 'topology' }, { requestId })));
    expect(creates.map((c) => [c.status, c.body])).toEqual(Array.from({ length: 4 }, (_, i) => [200, { name: `Ficus ${i}`, tag: 'topology' }]));
    const listIds = [uniqueName('list'), uniqueName('list')];
    const lists = await Promise.all(listIds.map((requestId) => t.listPlants(token, { requestId })));
    for (const list of lists) expect(list.body).toEqual(Array.from({ length: 4 }, (_, i) => ({ name: `Ficus ${i}`, tag: 'topology' })));
    expect(upstreamsOf([...createIds, ...listIds])).toEqual(addressesOf('plant-store'));

    const reset = await t.portalApi(admin, 'POST', `/api/v1/service-accounts/${account.client_id}/reset-secret`);
    expect(reset.status).toBe(200);
    const newSecret = (reset.body as { secret: string }).secret;

    const oldSecret = await t.grant(tenant, account.client_id, account.secret);
    const newGrant = await t.grant(tenant, account.client_id, newSecret);
    expect([oldSecret.status, (oldSecret.body as { error: string }).error, newGrant.status]).toEqual([401, 'invalid_client', 200]);
    // The old token at every Plant Store replica directly (no retry can hide one that still accepts it), and through nginx.
    const direct = await Promise.all(t.platform.plantStores.map((store) => t.listPlants(token, { base: store.url })));
    const viaIngress = await Promise.all([t.listPlants(token), t.listPlants(token)]);
    for (const refused of [...direct, ...viaIngress]) {
      expect([refused.status, refused.headers['www-authenticate']]).toEqual([401, expect.stringContaining('error="invalid_token"')]);
    }
    const fresh = (newGrant.body as { access_token: string }).access_token;
    const accepted = await Promise.all(t.platform.plantStores.map((store) => t.listPlants(fresh, { base: store.url })));
    expect(accepted.map((a) => a.status)).toEqual(t.platform.plantStores.map(() => 200));
  });

  test('When a browser starts signing in through nginx, then every address it is sent to is a public one (the ingress hosts), and the issuer is the public auth host', async () => {
    const login = await httpRequest(`${t.urls.portal}/login?tenant=${tenant}`, { agent: t.agent });
    const discovery = await httpRequest(`${t.urls.auth}/realms/${tenant}/.well-known/openid-configuration`, { agent: t.agent });
    const document = discovery.body as Record<string, string>;

    expect(login.status).toBe(303);
    expect(String(login.headers.location)).toMatch(new RegExp(`^${t.urls.auth}/realms/${tenant}/protocol/openid-connect/auth\\?`));
    expect(new URL(String(login.headers.location)).searchParams.get('redirect_uri')).toBe(`${t.urls.portal}/auth/callback`);
    expect([document.issuer, document.token_endpoint, document.jwks_uri]).toEqual([
      `${t.urls.auth}/realms/${tenant}`,
      `${t.urls.auth}/realms/${tenant}/protocol/openid-connect/token`,
      `${t.urls.auth}/realms/${tenant}/protocol/openid-connect/certs`,
    ]);
  });

  test('When clients send wrong secrets through nginx with a forged X-Forwarded-For each time, then each is counted by its own address across both token service replicas: the attacker is stopped at the limit, a bystander is not, and the audit trail names the client, not the ingress', async () => {
    const account = (await t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('target') })).body as { client_id: string; secret: string };
    const attacker = t.ingress.agent('127.0.0.5');
    const bystander = t.ingress.agent('127.0.0.6');
    const wrong = (agent: Agent, forged: string, requestId = uniqueName('wrong')) =>
      httpRequest(`${t.urls.auth}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forged, 'x-request-id': requestId },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: account.client_id, client_secret: 'pss_wrong' }).toString(),
      });

    const attackIds = Array.from({ length: FAILURES_PER_CLIENT_IP + 2 }, () => uniqueName('attack'));
    const attack: number[] = [];
    for (const [i, id] of attackIds.entries()) attack.push((await wrong(attacker, `198.51.100.${i + 1}`, id)).status);
    // Straight to a replica, from an address TRUST_PROXY does not name, claiming to forward for the bystander.
    const spoofed: number[] = [];
    for (let i = 0; i < FAILURES_PER_CLIENT_IP + 1; i++) {
      spoofed.push((await httpRequest(`${t.platform.tokenServices[i % 2]!.url}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '127.0.0.6' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: account.client_id, client_secret: 'pss_wrong' }).toString(),
      })).status);
    }
    const bystanderWrong = await wrong(bystander, '198.51.100.99');
    const bystanderRight = await t.grant(tenant, account.client_id, account.secret, { agent: bystander });
    const audit = await t.portalApi(admin, 'GET', '/api/v1/audit-events?limit=5');
    const created = (audit.body as Array<{ action: string; target_id?: string; address: string | null }>).find((e) => e.action === 'service_account.create');

    expect(attack).toEqual([...Array<number>(FAILURES_PER_CLIENT_IP).fill(401), 429, 429]);
    expect(upstreamsOf(attackIds)).toEqual(addressesOf('token-service'));
    expect(spoofed).toEqual([...Array<number>(FAILURES_PER_CLIENT_IP).fill(401), 429]);
    expect([bystanderWrong.status, bystanderRight.status]).toEqual([401, 200]);
    expect(created?.address).toBe('127.0.0.1');
  });
});
