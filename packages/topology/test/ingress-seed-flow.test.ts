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
import {
  runSeedFlow,
  signedInTenant,
  startTopology,
  type PortalUser,
  type Topology,
} from '../src/index.js';

const FAILURES_PER_CLIENT_IP = 4;
let t: Topology;
let tenant: string;
let admin: PortalUser;

beforeAll(async () => {
  t = await startTopology({
    platform: {
      serviceEnv: {
        'token-service': { CLIENT_AUTH_FAILURES_PER_CLIENT_IP: String(FAILURES_PER_CLIENT_IP) },
      },
    },
  });
  ({ tenant, admin } = await signedInTenant(t, 'ingress'));
}, 180_000);

afterAll(() => t?.close());

/** The replicas (`127.0.0.1:<port>`) nginx sent the requests with these ids to. */
function upstreamsOf(requestIds: string[]): Set<string> {
  const wanted = new Set(requestIds);
  return new Set(
    t.ingress
      .accessLog()
      .filter((line) => wanted.has(line.requestId))
      .flatMap((line) => line.upstreams),
  );
}

const addressesOf = (service: 'plant-store' | 'token-service' | 'account-admin') =>
  new Set(
    (service === 'plant-store'
      ? t.platform.plantStores
      : service === 'token-service'
        ? t.platform.tokenServices
        : t.platform.accountAdmins
    ).map((p) => `127.0.0.1:${p.port}`),
  );

describe('the seed flow through nginx, two replicas of each service', () => {
  test('When a signed-in admin creates a service account, gets tokens, creates and lists plants and resets the secret, all through nginx, then every step works whichever replica answers and the old token is refused at every Plant Store replica', async () => {
    const flow = await runSeedFlow(t, tenant, admin);

    expect(flow.me.map((res) => [res.status, (res.body as { email?: string }).email])).toEqual(
      Array(6).fill([200, `admin@${tenant}.test`]),
    );
    expect(upstreamsOf(flow.ids.me)).toEqual(addressesOf('account-admin'));
    expect(flow.account.role).toBe('View');
    expect(flow.grants.map((g) => g.status)).toEqual([200, 200, 200, 200]);
    expect(upstreamsOf(flow.ids.grants)).toEqual(addressesOf('token-service'));
    expect(flow.creates.map((c) => [c.status, c.body])).toEqual(
      flow.plants.map((plant) => [200, plant]),
    );
    for (const list of flow.lists) expect([list.status, list.body]).toEqual([200, flow.plants]);
    expect(upstreamsOf(flow.ids.plants)).toEqual(addressesOf('plant-store'));
    expect([
      flow.oldSecret.status,
      (flow.oldSecret.body as { error: string }).error,
      flow.newSecret.status,
    ]).toEqual([401, 'invalid_client', 200]);
    // The old token at every Plant Store replica directly (no retry can hide one that still accepts it), and through nginx.
    for (const refused of [...flow.oldTokenDirect, ...flow.oldTokenViaIngress]) {
      expect([refused.status, refused.headers['www-authenticate']]).toEqual([
        401,
        expect.stringContaining('error="invalid_token"'),
      ]);
    }
    expect(flow.newTokenDirect.map((a) => a.status)).toEqual(t.platform.plantStores.map(() => 200));
  });

  test('When a browser starts signing in through nginx, then every address it is sent to is a public one (the ingress hosts), and the issuer is the public auth host', async () => {
    const login = await httpRequest(`${t.urls.portal}/login?tenant=${tenant}`, { agent: t.agent });
    const discovery = await httpRequest(
      `${t.urls.auth}/realms/${tenant}/.well-known/openid-configuration`,
      { agent: t.agent },
    );
    const document = discovery.body as Record<string, string>;

    expect(login.status).toBe(303);
    expect(String(login.headers.location)).toMatch(
      new RegExp(`^${t.urls.auth}/realms/${tenant}/protocol/openid-connect/auth\\?`),
    );
    expect(new URL(String(login.headers.location)).searchParams.get('redirect_uri')).toBe(
      `${t.urls.portal}/auth/callback`,
    );
    expect([document.issuer, document.token_endpoint, document.jwks_uri]).toEqual([
      `${t.urls.auth}/realms/${tenant}`,
      `${t.urls.auth}/realms/${tenant}/protocol/openid-connect/token`,
      `${t.urls.auth}/realms/${tenant}/protocol/openid-connect/certs`,
    ]);
  });

  test('When clients send wrong secrets through nginx with a forged X-Forwarded-For each time, then each is counted by its own address across both token service replicas: the attacker is stopped at the limit, a bystander is not, and the audit trail names the client, not the ingress', async () => {
    const account = (
      await t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('target') })
    ).body as { client_id: string; secret: string };
    const attacker = t.ingress.agent('127.0.0.5');
    const bystander = t.ingress.agent('127.0.0.6');
    const wrong = (agent: Agent, forged: string, requestId = uniqueName('wrong')) =>
      httpRequest(`${t.urls.auth}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': forged,
          'x-request-id': requestId,
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: account.client_id,
          client_secret: 'pss_wrong',
        }).toString(),
      });

    const attackIds = Array.from({ length: FAILURES_PER_CLIENT_IP + 2 }, () =>
      uniqueName('attack'),
    );
    const attack: number[] = [];
    for (const [i, id] of attackIds.entries())
      attack.push((await wrong(attacker, `198.51.100.${i + 1}`, id)).status);
    // Straight to a replica, from an address TRUST_PROXY does not name, claiming to forward for the bystander.
    const spoofed: number[] = [];
    for (let i = 0; i < FAILURES_PER_CLIENT_IP + 1; i++) {
      spoofed.push(
        (
          await httpRequest(
            `${t.platform.tokenServices[i % 2]!.url}/realms/${tenant}/protocol/openid-connect/token`,
            {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                'x-forwarded-for': '127.0.0.6',
              },
              body: new URLSearchParams({
                grant_type: 'client_credentials',
                client_id: account.client_id,
                client_secret: 'pss_wrong',
              }).toString(),
            },
          )
        ).status,
      );
    }
    const bystanderWrong = await wrong(bystander, '198.51.100.99');
    const bystanderRight = await t.grant(tenant, account.client_id, account.secret, {
      agent: bystander,
    });
    const audit = await t.portalApi(admin, 'GET', '/api/v1/audit-events?limit=5');
    const created = (
      audit.body as Array<{ action: string; target_id?: string; address: string | null }>
    ).find((e) => e.action === 'service_account.create');

    expect(attack).toEqual([...Array<number>(FAILURES_PER_CLIENT_IP).fill(401), 429, 429]);
    expect(upstreamsOf(attackIds)).toEqual(addressesOf('token-service'));
    expect(spoofed).toEqual([...Array<number>(FAILURES_PER_CLIENT_IP).fill(401), 429]);
    expect([bystanderWrong.status, bystanderRight.status]).toEqual([401, 200]);
    expect(created?.address).toBe('127.0.0.1');
  });
});
