import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import {
  ADMIN_PASSWORD,
  basic,
  decodeJwt,
  startHarness,
  uniqueIp,
  type Harness,
} from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';
import { portalDriver } from './helpers/portal-driver.js';
import { verifyToken } from './helpers/token-client.js';

/**
 * One oidc-provider serves every realm's token endpoint, the realm bound per request: whatever
 * it does for a request is of the URL's realm, even with requests of other realms in flight at
 * the same moment, and nothing of one realm is usable at another's.
 */
let h: Harness;
const realms: Array<{
  tenant: string;
  kid: string;
  alg: string;
  adminEmail: string;
  account: CreatedAccount;
}> = [];

beforeAll(async () => {
  h = await startHarness();
  // One realm of each algorithm: the engine signs with the request's realm's key and algorithm.
  for (const alg of ['RS256', 'ES256'] as const) {
    const { tenant, kid, adminEmail } = await h.createTenant(alg);
    realms.push({
      tenant,
      kid,
      alg,
      adminEmail,
      account: await internal(h).createServiceAccount(tenant),
    });
  }
});

afterAll(async () => {
  await h.close();
});

const grant = (tenant: string, account: CreatedAccount) =>
  request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(account.client_id, account.secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });

describe("the grant engine: the realm is the request's", () => {
  test("When 60 grants of two realms (RS256, ES256) are in flight at once, then every token carries its own realm's issuer, tenant, key and algorithm, and verifies against that realm's keys", async () => {
    const sent = Array.from({ length: 60 }, (_, i) => realms[i % 2]!);

    const answers = await Promise.all(sent.map((realm) => grant(realm.tenant, realm.account)));
    const seen = answers.map((res, i) => {
      const { header, payload } = decodeJwt(res.body.access_token as string);
      return {
        status: res.status,
        kid: header.kid,
        alg: header.alg,
        iss: payload.iss,
        tenant: payload.tenant,
        sub: payload.sub,
        expected: sent[i]!.tenant,
      };
    });

    expect(seen).toEqual(
      sent.map((realm) => ({
        status: 200,
        kid: realm.kid,
        alg: realm.alg,
        iss: h.issuer(realm.tenant),
        tenant: realm.tenant,
        sub: realm.account.client_id,
        expected: realm.tenant,
      })),
    );
    await Promise.all(
      answers
        .slice(0, 4)
        .map((res, i) => verifyToken(h, res.body.access_token as string, sent[i]!.tenant)),
    );
  });

  test("When one realm's service account and secret are presented at another realm's token endpoint, then 401 invalid_client with that realm in the challenge", async () => {
    const [a, b] = realms as [(typeof realms)[number], (typeof realms)[number]];

    const res = await grant(b.tenant, a.account);

    expect({
      status: res.status,
      body: res.body,
      challenge: res.headers['www-authenticate'],
    }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
      challenge: `Basic realm="${h.issuer(b.tenant)}", error="invalid_client", error_description="client authentication failed"`,
    });
  });

  test("When an authorization code of one realm is redeemed at another realm's token endpoint, then invalid_grant, and the code still works at its own realm", async () => {
    const [a, b] = realms as [(typeof realms)[number], (typeof realms)[number]];
    const signIn = portalDriver(h, a.tenant);
    const browser = signIn.browser();
    const started = await signIn.startSignIn(browser);
    const { callback } = await signIn.completeSignIn(
      browser,
      started,
      a.adminEmail,
      ADMIN_PASSWORD,
    );
    const code = callback.searchParams.get('code')!;

    const elsewhere = await portalDriver(h, b.tenant).exchange(code, started.verifier);
    const home = await signIn.exchange(code, started.verifier);

    expect({ status: elsewhere.status, error: elsewhere.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
    expect(home.status).toBe(200);
    expect(decodeJwt(home.body.id_token as string).payload).toMatchObject({
      iss: h.issuer(a.tenant),
      tenant: a.tenant,
    });
    expect(decodeJwt(home.body.id_token as string).header.kid).toBe(a.kid);
  });

  test("When portal users of an RS256 and an ES256 realm redeem their codes at the same moment, then each ID token is in its realm's algorithm under its realm's key", async () => {
    // One sign-in after the other (the sign-in pages admit a bounded number of password checks at once).
    const codes = [];
    for (const realm of realms) {
      const signIn = portalDriver(h, realm.tenant);
      const browser = signIn.browser();
      const started = await signIn.startSignIn(browser);
      const { callback } = await signIn.completeSignIn(
        browser,
        started,
        realm.adminEmail,
        ADMIN_PASSWORD,
      );
      codes.push({ signIn, code: callback.searchParams.get('code')!, verifier: started.verifier });
    }

    const answers = await Promise.all(
      codes.map(({ signIn, code, verifier }) => signIn.exchange(code, verifier)),
    );

    expect(
      answers.map((res) => ({
        status: res.status,
        ...decodeJwt(res.body.id_token as string).header,
      })),
    ).toEqual(
      realms.map((realm) =>
        expect.objectContaining({ status: 200, alg: realm.alg, kid: realm.kid }),
      ),
    );
  });
});
