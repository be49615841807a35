/**
 * What one client assertion may cost in signature checks, whoever supplied the keys: at most
 * MAX_SIGNATURE_CHECKS per assertion or workload token, none against a key the key rule refuses
 * (stored before the rule, or published by a trusted issuer), and a trusted issuer's JWKS
 * bounded in keys and bytes. Checks are counted by the service's own counter
 * (`client_assertion_signature_checks_total`), never timed.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import {
  clientAssertion,
  clientKeyPair,
  hostileKeys,
  signJws,
  startWorkloadIssuer,
  type WorkloadIssuer,
} from '@plant/test-kit';
import request from 'supertest';
import { MAX_SIGNATURE_CHECKS } from '../src/client-auth/jws.js';
import { thumbprintOf } from '../src/credentials/public-keys.js';
import { uniqueIp, useHarness, type Harness } from './helpers/harness.js';
import { assertionGrant, keyedAccount, sendAssertion } from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { FEDERATION_TEST_ENV, trustedWorkload, workloadGrant } from './helpers/workload-client.js';

let h: Harness;
let tenant: string;

useHarness((started, first) => {
  h = started;
  tenant = first;
}, FEDERATION_TEST_ENV);

/** Signature checks the service has made so far for assertions against `credential` keys or trusts. */
async function checksMade(credential: 'key' | 'trust'): Promise<number> {
  const text = (await request(h.managementUrl).get('/metrics').expect(200)).text;
  const value = new RegExp(
    `^client_assertion_signature_checks_total\\{[^}]*credential="${credential}"[^}]*\\} (\\S+)$`,
    'm',
  ).exec(text)?.[1];
  if (value === undefined)
    throw new Error('client_assertion_signature_checks_total is not in /metrics');
  return Number(value);
}

/** The checks `act` made (the tests of this file run one after another, so no other grant counts meanwhile). */
async function checksDuring(
  credential: 'key' | 'trust',
  act: () => Promise<unknown>,
): Promise<number> {
  const before = await checksMade(credential);
  await act();
  return (await checksMade(credential)) - before;
}

const refused = { error: 'invalid_client', error_description: 'client authentication failed' };

describe("an account's own keys", () => {
  test(`When an assertion without kid is signed by none of an account's five keys, then 401 after ${MAX_SIGNATURE_CHECKS} signature checks, not five`, async () => {
    const keyed = await keyedAccount(h, tenant);
    for (let i = 0; i < 4; i += 1)
      await internal(h)
        .addKey(tenant, keyed.account.client_id, { jwk: clientKeyPair('ec').publicJwk })
        .expect(201);
    const stranger = clientKeyPair('ec');

    let res: request.Response | undefined;
    const checks = await checksDuring('key', async () => {
      res = await sendAssertion(
        h,
        tenant,
        keyed.account.client_id,
        clientAssertion({
          clientId: keyed.account.client_id,
          audience: h.issuer(tenant),
          key: stranger,
        }),
      ).set('x-forwarded-for', uniqueIp());
    });

    expect({ status: res?.status, body: res?.body }).toEqual({ status: 401, body: refused });
    expect(checks).toBe(MAX_SIGNATURE_CHECKS);
  });

  test('When an account has five keys, then an assertion without kid authenticates with one of the newest, and the oldest key must be named by its kid', async () => {
    const oldest = await keyedAccount(h, tenant);
    const keys = [];
    for (let i = 0; i < 4; i += 1) {
      const key = clientKeyPair('ec');
      const added = await internal(h)
        .addKey(tenant, oldest.account.client_id, { jwk: key.publicJwk })
        .expect(201);
      keys.push({ ...oldest, key, kid: added.body.id as string });
    }
    const newest = keys[keys.length - 1]!;
    const noKid = { kid: undefined as unknown as string };

    const byNewest = await checksDuring('key', () =>
      assertionGrant(h, tenant, { ...newest, ...noKid }).expect(200),
    );
    const unnamedOldest = await assertionGrant(h, tenant, { ...oldest, ...noKid }).set(
      'x-forwarded-for',
      uniqueIp(),
    );
    const namedOldest = await checksDuring('key', () =>
      assertionGrant(h, tenant, oldest).expect(200),
    );

    expect([byNewest, unnamedOldest.status, namedOldest]).toEqual([1, 401, 1]);
  });

  test('When a key stored before the rule (RSA-1024) signs assertions, then it is never tried: 401 without a check, and one warning for all of them', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const jwk = weak.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    // As an upload before the rule tightened left it: straight into the table, past today's checks.
    await h.service.db('service_account_keys').insert({
      sub: account.client_id,
      realm: tenant,
      id: 'legacy-1024',
      alg: 'RS256',
      public_jwk: jwk,
      thumbprint: thumbprintOf(jwk),
      created_by: 'admin@example.test',
    });
    const assertion = () =>
      clientAssertion({
        clientId: account.client_id,
        audience: h.issuer(tenant),
        key: { type: 'rsa', alg: 'RS256', ...weak, publicJwk: jwk, publicPem: '' },
        kid: 'legacy-1024',
      });

    const statuses: number[] = [];
    const checks = await checksDuring('key', async () => {
      for (let i = 0; i < 3; i += 1)
        statuses.push(
          (
            await sendAssertion(h, tenant, account.client_id, assertion()).set(
              'x-forwarded-for',
              uniqueIp(),
            )
          ).status,
        );
    });

    expect(statuses).toEqual([401, 401, 401]);
    expect(checks).toBe(0);
    expect(
      h.logs.filter(
        (l) => l.includes('stored key refused by the key rule') && l.includes('legacy-1024'),
      ),
    ).toHaveLength(1);
  });
});

describe("a trusted issuer's keys", () => {
  test('When a trusted issuer publishes hostile keys beside its own, then they are never tried: its own key still works, and an RS256 token without kid costs no check', async () => {
    const hostile = await startWorkloadIssuer();
    try {
      for (const [, jwk] of hostileKeys())
        hostile.publishJwk({ ...jwk, kid: randomUUID(), use: 'sig' });
      const workload = await trustedWorkload(h, tenant, hostile);
      const rsa = clientKeyPair('rsa');
      const now = Math.floor(Date.now() / 1000);
      const rs256 = signJws(
        { alg: 'RS256', typ: 'JWT' },
        {
          iss: hostile.issuer,
          sub: workload.subject,
          aud: workload.audience,
          iat: now,
          exp: now + 300,
        },
        rsa.privateKey,
      );

      const own = await checksDuring('trust', () => workloadGrant(h, tenant, workload).expect(200));
      let forged: request.Response | undefined;
      const spent = await checksDuring('trust', async () => {
        forged = await sendAssertion(h, tenant, workload.account.client_id, rs256).set(
          'x-forwarded-for',
          uniqueIp(),
        );
      });

      expect([own, forged?.status, spent]).toEqual([1, 401, 0]);
    } finally {
      await hostile.close();
    }
  });

  test(`When a trusted issuer publishes as many usable keys as allowed and a token without kid matches none, then 401 after ${MAX_SIGNATURE_CHECKS} checks`, async () => {
    const crowded = await startWorkloadIssuer();
    try {
      for (let i = 0; i < 15; i += 1)
        crowded.publishJwk({
          ...clientKeyPair('ec').publicJwk,
          kid: randomUUID(),
          use: 'sig',
          alg: 'ES256',
        });
      const workload = await trustedWorkload(h, tenant, crowded);
      await workloadGrant(h, tenant, workload).expect(200);
      const token = crowded.mintWithUnpublishedKey({
        subject: workload.subject,
        audience: workload.audience,
        header: { kid: undefined },
      });

      let res: request.Response | undefined;
      const checks = await checksDuring('trust', async () => {
        res = await sendAssertion(h, tenant, workload.account.client_id, token).set(
          'x-forwarded-for',
          uniqueIp(),
        );
      });

      expect([res?.status, checks]).toEqual([401, MAX_SIGNATURE_CHECKS]);
    } finally {
      await crowded.close();
    }
  });

  const oversized: Array<[string, (issuer: WorkloadIssuer) => void]> = [
    [
      '17 keys',
      (i) =>
        Array.from({ length: 16 }, () =>
          i.publishJwk({ ...clientKeyPair('ec').publicJwk, kid: randomUUID() }),
        ),
    ],
    [
      'a document over 32 KiB',
      (i) => i.publishJwk({ kty: 'oct', use: 'enc', padding: 'x'.repeat(33 * 1024) }),
    ],
  ];
  test.each(oversized)(
    'When a trusted issuer publishes a JWKS of %s, then its keys are unavailable: 401 without a check',
    async (_case, publish) => {
      const bloated = await startWorkloadIssuer();
      try {
        publish(bloated);
        const workload = await trustedWorkload(h, tenant, bloated);

        let res: request.Response | undefined;
        const checks = await checksDuring('trust', async () => {
          res = await workloadGrant(h, tenant, workload);
        });

        expect({ status: res?.status, body: res?.body, checks }).toEqual({
          status: 401,
          body: {
            error: 'invalid_client',
            error_description: "the trusted issuer's keys are unavailable",
          },
          checks: 0,
        });
      } finally {
        await bloated.close();
      }
    },
  );
});
