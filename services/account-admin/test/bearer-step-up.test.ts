/**
 * Step-up by bearer token, end to end: a person signs in at the real realm for the
 * account-admin API (authorization code + PKCE, as a CLI tool does), with the password and an
 * authenticator-app code (RFC 6238, computed here with `otpauth` from the key the enrolment page
 * shows), and their access token's own `acr` and `auth_time` (RFC 9068 §2.2.1) let sensitive
 * changes through. A token of a sign-in before the person had the factor is refused outright:
 * enrolling the factor revoked it (a factor belongs to the person, so nothing minted before it
 * speaks for them), which is stricter than RFC 9470's challenge the portal answers a stale factor
 * with (step-up-gate.test.ts). A token whose factor is older than the step-up window (its own
 * `auth_time`, signed with the realm's real key as only an insider could) gets that challenge.
 */
import { describe, expect, test } from '@jest/globals';
import { realmSigningKey, signJws, TEST_SECRETS, uniqueName } from '@plant/test-kit';
import { Secret, TOTP } from 'otpauth';
import { postRealmForm, userAccessToken, type RealmStep } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();

/**
 * The enrolment of an authenticator app inside the sign-in (`plant_action=enrol-totp`): the
 * first code from the key the page shows (the realm takes a step either side), then past the
 * recovery codes.
 */
const enrolTotp: RealmStep = async (jar, url, page) => {
  const key = /id="totp-secret" type="text" readonly value="([A-Z2-7]+)"/.exec(page)?.[1];
  if (key !== undefined) {
    const code = new TOTP({ secret: Secret.fromBase32(key) }).generate();
    return postRealmForm(jar, url, page, 'enrol-totp', { code });
  }
  return postRealmForm(jar, url, page, 'continue');
};

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<
    string,
    unknown
  >;
}

function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<
    string,
    unknown
  >;
}

describe('step-up by bearer token', () => {
  test("When an Account Admin signs in with password and code, then their token's own acr and auth_time pass step-up; a token from their sign-in before the factor is refused as revoked", async () => {
    const email = await p.ts.createUser(p.acme.tenant, 'Account Admin');
    const person = { email, password: p.acme.admin.password };
    const beforeFactor = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, person);
    const withFactor = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, person, {
      extra: { plant_action: 'enrol-totp' },
      step: enrolTotp,
    });

    const created = await p.asBearer(withFactor, 'POST', '/service-accounts', {
      name: uniqueName('bearer-step-up'),
    });
    const refused = await p.asBearer(beforeFactor, 'POST', '/service-accounts', {
      name: uniqueName('bearer-step-up'),
    });

    expect(payloadOf(withFactor)).toMatchObject({
      acr: 'urn:plantstore:acr:factor',
      auth_time: expect.any(Number),
    });
    expect(created.status).toBe(201);
    expect(payloadOf(beforeFactor)).toMatchObject({ acr: 'urn:plantstore:acr:password' });
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 401,
      body: { error: 401, message: 'Token has been revoked' },
    });
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });

  test('When a person with a factor invites by a token of a code sign-in, then it is 201; by a token of a sign-in before the factor (revoked by the enrolment), 401 and no invitation', async () => {
    const email = await p.ts.createUser(p.acme.tenant, 'Account Admin');
    const person = { email, password: p.acme.admin.password };
    const beforeFactor = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, person);
    const withFactor = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, person, {
      extra: { plant_action: 'enrol-totp' },
      step: enrolTotp,
    });
    const invitee = (tag: string) => `${uniqueName(tag)}@${p.acme.tenant}.test`;
    const refusedEmail = invitee('refused');

    const invited = await p.asBearer(withFactor, 'POST', '/users', {
      email: invitee('invited'),
      role: 'View',
    });
    const refused = await p.asBearer(beforeFactor, 'POST', '/users', {
      email: refusedEmail,
      role: 'View',
    });

    expect(invited.status).toBe(201);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    const pending = (await (await p.asAdminSession('GET', '/invitations')).json()) as Array<{
      email: string;
    }>;
    expect(pending.map((i) => i.email)).not.toContain(refusedEmail);
  });

  test("When a token's factor was verified 11 minutes before it was issued, then a sensitive change gets RFC 9470's 401 and nothing is created, while the same token with a fresh auth_time goes through", async () => {
    const email = await p.ts.createUser(p.acme.tenant, 'Account Admin');
    const person = { email, password: p.acme.admin.password };
    const real = await userAccessToken(p.ts.authUrl, p.portal.url, p.acme.tenant, person, {
      extra: { plant_action: 'enrol-totp' },
      step: enrolTotp,
    });
    const { privateKey } = await realmSigningKey(
      p.ts.databaseUrl,
      p.acme.tenant,
      TEST_SECRETS.KEY_ENCRYPTION_KEY,
    );
    const claims = payloadOf(real);
    const issuedAt = Math.floor(Date.now() / 1000);
    const asIssued = (authTime: number) =>
      signJws(headerOf(real), { ...claims, iat: issuedAt, auth_time: authTime }, privateKey);
    const staleName = uniqueName('stale-factor');

    const stale = await p.asBearer(asIssued(issuedAt - 11 * 60), 'POST', '/service-accounts', {
      name: staleName,
    });
    const fresh = await p.asBearer(asIssued(issuedAt - 60), 'POST', '/service-accounts', {
      name: uniqueName('fresh-factor'),
    });

    expect(claims).toMatchObject({ acr: 'urn:plantstore:acr:factor' });
    expect({ status: stale.status, body: await stale.json() }).toEqual({
      status: 401,
      body: { error: 401, message: 'This action needs your second factor again' },
    });
    const challenge = stale.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer error="insufficient_user_authentication"/);
    expect(challenge).toContain('acr_values="urn:plantstore:acr:factor"');
    expect(challenge).toContain('max_age=600');
    expect(fresh.status).toBe(201);
    const names = (
      (await (await p.asAdminSession('GET', '/service-accounts')).json()) as Array<{
        name: string;
      }>
    ).map((a) => a.name);
    expect(names).not.toContain(staleName);
  });
});
