/**
 * Topology 3: Redis managed by Sentinel (a master, a replica, three sentinels, with
 * passwords), every service's Redis connections through REDIS_SENTINELS, the platform's
 * replicas behind nginx. The master is killed under mixed load: revocation falls back to the
 * token service, then re-syncs on the new master, and no revoked token is accepted; a signed-in
 * portal user keeps their session or is asked to sign in again, never shown an error; the
 * token endpoint's failure throttle goes on counting where it was.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { httpRequest, metric } from '@plant/e2e';
import { eventually, sleep, startSentinelGroup, type SentinelGroup } from '@plant/test-kit';
import {
  formatSummary,
  loadAccounts,
  startMixedLoad,
  startTopology,
  summarise,
  type LoadAccounts,
  type Topology,
} from '../src/index.js';

const FAILURES_PER_CLIENT_IP = 12;
let redis: SentinelGroup;
let t: Topology;
let accounts: LoadAccounts;

beforeAll(async () => {
  redis = await startSentinelGroup({ replicas: 1, sentinels: 3 });
  t = await startTopology({
    platform: {
      redisUrl: redis.redisUrl,
      env: {
        REDIS_SENTINELS: redis.sentinelAddresses,
        REDIS_SENTINEL_NAME: redis.masterName,
        REDIS_SENTINEL_PASSWORD: redis.sentinelPassword,
      },
      serviceEnv: {
        'token-service': { CLIENT_AUTH_FAILURES_PER_CLIENT_IP: String(FAILURES_PER_CLIENT_IP) },
      },
    },
  });
  accounts = await loadAccounts(t, 'sentinel');
}, 180_000);

afterAll(async () => {
  await t?.close();
  await redis?.stop();
});

describe('Redis with Sentinel: the master dies under load', () => {
  test('When the master is killed under mixed load, then revocation falls back and re-syncs on the new master with no revoked token accepted, portal pages never error, and the failure throttle keeps counting', async () => {
    const { tenant, admin } = accounts;
    // An attacker's wrong secrets from an address of its own, through the ingress: counted in Redis.
    const attacker = t.ingress.agent('127.0.0.7');
    const wrongSecret = async () =>
      (
        await httpRequest(`${t.urls.auth}/realms/${tenant}/protocol/openid-connect/token`, {
          method: 'POST',
          agent: attacker,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: accounts.editor.clientId,
            client_secret: 'pss_wrong',
          }).toString(),
        })
      ).status;
    const before: number[] = [];
    for (let i = 0; i < FAILURES_PER_CLIENT_IP - 3; i++) before.push(await wrongSecret());
    // The portal as a signed-in browser sees it, page after page, all through the failover.
    const pages: number[] = [];
    let browsing = true;
    const browse = (async () => {
      while (browsing) {
        const page = await httpRequest(`${t.urls.portal}/settings/service-accounts`, {
          agent: t.agent,
          headers: { cookie: admin.cookie },
        });
        pages.push(
          page.status === 303 && String(page.headers.location).includes('/login') ? 0 : page.status,
        );
        await sleep(20);
      }
    })();
    const load = startMixedLoad(t, accounts);
    await sleep(1500);
    const fallbacksBefore = await Promise.all(
      t.platform.plantStores.map((store) => metric(store, 'revocation_fallbacks_total')),
    );

    const failover = await redis.killMaster();
    // The subscription comes back on the new master and a snapshot makes the map live again.
    for (const store of t.platform.plantStores) {
      await eventually(
        async () =>
          (await metric(store, 'revocation_live')) === 1 &&
          (await metric(store, 'revocation_subscription_up')) === 1,
        `${store.name} is live on the new master`,
        30_000,
      );
    }
    await sleep(1500);
    await load.stop();
    browsing = false;
    await browse;
    const fallbacksAfter = await Promise.all(
      t.platform.plantStores.map((store) => metric(store, 'revocation_fallbacks_total')),
    );
    const after: number[] = [];
    while (after.length < FAILURES_PER_CLIENT_IP && !after.includes(429))
      after.push(await wrongSecret());
    const summary = summarise(load, [], t.ingress.accessLog(), new Set(load.acknowledgedIds));
    process.stdout.write(
      formatSummary(
        `Sentinel failover under mixed load (master ${failover.killed} killed, ${failover.promoted} promoted after ${failover.failoverMs} ms)`,
        summary,
      ),
    );
    process.stdout.write(
      `  portal pages during the failover: ${pages.filter((s) => s === 200).length} served, ${pages.filter((s) => s === 0).length} asked to sign in, ${pages.filter((s) => s !== 200 && s !== 0).length} errors\n\n`,
    );

    expect(failover.promoted).not.toBe(failover.killed);
    expect(summary.revokedAccepted).toBe(0);
    expect(summary.revokedTokens).toBeGreaterThan(3);
    expect(
      summary.failures.map((f) => `${f.request.op} ${f.request.status} ${f.request.error ?? ''}`),
    ).toEqual([]);
    expect(pages.filter((status) => status !== 200 && status !== 0)).toEqual([]);
    expect(pages.length).toBeGreaterThan(5);
    // Checks fell back to the token service while the subscription was down, on every replica.
    fallbacksAfter.forEach((n, i) => {
      expect(n!).toBeGreaterThan(fallbacksBefore[i] ?? 0);
    });
    // The counter went on from where it was before the failover: at most 3 more failures.
    expect(before).toEqual(Array(FAILURES_PER_CLIENT_IP - 3).fill(401));
    expect(after.at(-1)).toBe(429);
    expect(after.length).toBeLessThanOrEqual(4);
  });
});
