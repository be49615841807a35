/**
 * A trusted issuer that misbehaves, or one the operator did not allow: the token service
 * fetches its documents within size and time limits, from public https addresses only unless
 * allowed, refuses the workload's tokens meanwhile (401, not counted against the client), logs
 * why, and stays up. The issuer is local (test-kit), never the internet.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startWorkloadIssuer, type WorkloadIssuer, type WorkloadIssuerMode } from '@plant/test-kit';
import request from 'supertest';
import { loadTokenServiceConfig } from '../src/config.js';
import { startHarness, TEST_ENV, uniqueIp, type Harness } from './helpers/harness.js';
import { sendAssertion } from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { FEDERATION_TEST_ENV, trustedWorkload, workloadGrant } from './helpers/workload-client.js';

let h: Harness;
let strict: Harness;
let tenant: string;

beforeAll(async () => {
  // Refetches limited as in production (30 s), so a flood's fetches can be counted exactly.
  [h, strict] = await Promise.all([
    startHarness({ ...FEDERATION_TEST_ENV, FEDERATION_JWKS_REFETCH_SECONDS: '30' }),
    startHarness(),
  ]);
  ({ tenant } = await h.createTenant());
});

afterAll(() => Promise.all([h.close(), strict.close()]));

const unavailable = {
  error: 'invalid_client',
  error_description: "the trusted issuer's keys are unavailable",
};

async function withIssuer(run: (issuer: WorkloadIssuer) => Promise<void>): Promise<void> {
  const issuer = await startWorkloadIssuer();
  try {
    await run(issuer);
  } finally {
    await issuer.close();
  }
}

describe('an issuer that misbehaves', () => {
  const modes: WorkloadIssuerMode[] = [
    'huge-jwks',
    'slow-jwks',
    'trickle-jwks',
    'many-keys',
    'redirect',
    'wrong-issuer',
    'down',
  ];
  test.each(modes)(
    'When the issuer answers %s, then the workload gets 401 saying the keys are unavailable, the warning names the issuer, and the service stays healthy',
    async (mode) => {
      await withIssuer(async (issuer) => {
        const workload = await trustedWorkload(h, tenant, issuer);
        issuer.setMode(mode);

        const res = await workloadGrant(h, tenant, workload);

        expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: unavailable });
        expect(
          h.logs.some(
            (l) => l.includes("trusted issuer's keys unavailable") && l.includes(issuer.issuer),
          ),
        ).toBe(true);
        await request(h.managementUrl).get('/healthz').expect(200);
      });
    },
  );

  test('When an unavailable issuer is asked again and again from one address, then it is fetched once per refetch period and the address is never locked out', async () => {
    await withIssuer(async (issuer) => {
      const workload = await trustedWorkload(h, tenant, issuer);
      issuer.setMode('down');
      const ip = uniqueIp();

      const statuses = [];
      for (let i = 0; i < h.config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP + 5; i += 1) {
        statuses.push(
          (
            await sendAssertion(
              h,
              tenant,
              workload.account.client_id,
              issuer.mint({ subject: workload.subject, audience: workload.audience }),
            ).set('x-forwarded-for', ip)
          ).status,
        );
      }

      expect(new Set(statuses)).toEqual(new Set([401]));
      expect(issuer.requests().discovery).toBe(1);
    });
  });

  test('When tokens with unknown kids follow one another, then the JWKS is not fetched again within the refetch period', async () => {
    await withIssuer(async (issuer) => {
      const workload = await trustedWorkload(h, tenant, issuer);
      await workloadGrant(h, tenant, workload).expect(200);
      const fetched = issuer.requests().jwks;

      for (let i = 0; i < 20; i += 1)
        await sendAssertion(
          h,
          tenant,
          workload.account.client_id,
          issuer.mintWithUnpublishedKey({ subject: workload.subject, audience: workload.audience }),
        ).expect(401);

      expect(issuer.requests().jwks).toBe(fetched);
    });
  });
});

describe('issuers the operator did not allow', () => {
  test('When a trust names an issuer on a loopback or private address and private issuers are not allowed, then 400 and nothing is stored', async () => {
    const { tenant: own } = await strict.createTenant();
    const account = await internal(strict).createServiceAccount(own);
    const trust = (issuer: string) =>
      internal(strict).addTrust(own, account.client_id, {
        issuer,
        subject: 'repo:acme/app:ref:refs/heads/main',
        audience: strict.issuer(own),
      });

    const answers = await Promise.all(
      [
        'https://127.0.0.1:8443',
        'https://10.1.2.3',
        'https://[::1]',
        'https://169.254.169.254',
        'https://[::ffff:127.0.0.1]',
      ].map(async (issuer) => (await trust(issuer)).body),
    );

    expect(answers).toEqual(
      Array(5).fill({ error: 400, message: 'issuer is on a private or loopback address' }),
    );
    expect((await internal(strict).credentials(own, account.client_id)).body.trusts).toEqual([]);
  });

  const embeddedIPv4: Array<[string, string]> = [
    ['NAT64 to the metadata service', 'https://[64:ff9b::a9fe:a9fe]'],
    ['local-use NAT64', 'https://[64:ff9b:1::a00:1]'],
    ['6to4 to the metadata service', 'https://[2002:a9fe:a9fe::]'],
    ['Teredo to a loopback client', 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]'],
    ['IPv4-compatible loopback', 'https://[::7f00:1]:9082'],
    ['site-local', 'https://[fec0::1]'],
  ];
  test.each(embeddedIPv4)(
    'When a trust names an issuer on an IPv6 address of %s (%s) and private issuers are not allowed, then 400 and nothing is stored',
    async (_family, issuer) => {
      const { tenant: own } = await strict.createTenant();
      const account = await internal(strict).createServiceAccount(own);

      const res = await internal(strict).addTrust(own, account.client_id, {
        issuer,
        subject: 'ci',
        audience: strict.issuer(own),
      });

      expect(res.body).toEqual({
        error: 400,
        message: 'issuer is on a private or loopback address',
      });
      expect((await internal(strict).credentials(own, account.client_id)).body.trusts).toEqual([]);
    },
  );

  test('When a trusted issuer’s name resolves to a loopback address and private issuers are not allowed, then its tokens are refused and nothing is fetched from it', async () => {
    await withIssuer(async (issuer) => {
      const { tenant: own } = await strict.createTenant();
      const account = await internal(strict).createServiceAccount(own);
      const https = issuer.issuerByName.replace('http:', 'https:');
      await internal(strict)
        .addTrust(own, account.client_id, {
          issuer: https,
          subject: 'ci',
          audience: strict.issuer(own),
        })
        .expect(201);
      const token = issuer.mint({
        subject: 'ci',
        audience: strict.issuer(own),
        claims: { iss: https },
      });

      const res = await sendAssertion(strict, own, account.client_id, token);

      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: unavailable });
      expect(strict.logs.some((l) => l.includes('resolves to a private or loopback address'))).toBe(
        true,
      );
      expect(issuer.requests()).toEqual({ discovery: 0, jwks: 0 });
    });
  });

  const refusedIssuers: Array<[string, string]> = [
    ['http://issuer.example', 'issuer must be an https URL'],
    ['ftp://issuer.example', 'issuer must be an https URL'],
    ['https://user:pass@issuer.example', 'issuer must not carry credentials'],
    ['https://issuer.example/?tenant=a', 'issuer must not have a query'],
    ['https://issuer.example/#x', 'issuer must not have a fragment'],
    ['not a url', 'issuer must be a URL'],
  ];
  test.each(refusedIssuers)(
    'When a trust names %s without http allowed, then 400: %s',
    async (issuer, message) => {
      const { tenant: own } = await strict.createTenant();
      const account = await internal(strict).createServiceAccount(own);

      const res = await internal(strict).addTrust(own, account.client_id, {
        issuer,
        subject: 'ci',
        audience: 'x',
      });

      expect(res.body).toEqual({ error: 400, message });
    },
  );

  test("When a trust names one of this service's own realms, then 400 (one account's token must not authenticate another)", async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const res = await internal(h).addTrust(tenant, account.client_id, {
      issuer: h.issuer(tenant),
      subject: 'sa-x',
      audience: h.issuer(tenant),
    });

    expect(res.body).toEqual({
      error: 400,
      message: "issuer must not be one of this service's own realms",
    });
  });

  test('When production is configured to allow http issuers, then the token service refuses to start, naming the variable', () => {
    const strong = () => randomBytes(32).toString('base64');
    const production = {
      ...TEST_ENV,
      NODE_ENV: 'production',
      RESOURCE_SERVER_TOKENS: strong(),
      ACCOUNT_ADMIN_TOKEN: strong(),
      SECRET_PEPPER: strong(),
      COOKIE_KEYS: strong(),
      KEY_ENCRYPTION_KEY: strong(),
    };

    expect(() =>
      loadTokenServiceConfig({ ...production, FEDERATION_ALLOW_HTTP_ISSUERS: 'true' }),
    ).toThrow('FEDERATION_ALLOW_HTTP_ISSUERS must be false in production');
    expect(() => loadTokenServiceConfig(production)).not.toThrow();
  });
});
