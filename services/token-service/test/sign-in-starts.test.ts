import { describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { eventually } from '@plant/test-kit';
import request from 'supertest';
import { startHarness, uniqueIp, useHarness, type Harness } from './helpers/harness.js';
import { pkce, REDIRECT_URI } from './helpers/portal-driver.js';

const PER_IP = 5;
let h: Harness;
let _tenant: string;

useHarness(
  (started, first) => {
    h = started;
    _tenant = first;
  },
  { SIGN_IN_STARTS_PER_IP: String(PER_IP) },
);

/** The portal client's authorization request to `realm`, with `extra` parameters. */
function authorizationPath(realm: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid email profile',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    ...extra,
  });
  return `/realms/${realm}/protocol/openid-connect/auth?${query}`;
}

const start = (realm: string, ip: string, extra?: Record<string, string>) =>
  request(h.publicUrl).get(authorizationPath(realm, extra)).set('x-forwarded-for', ip);

async function storedRows(realm: string, model: string): Promise<number> {
  const [row] = await h.service
    .db('oidc_payloads')
    .where({ realm, model })
    .count<{ count: string }[]>('* as count');
  return Number(row!.count);
}

describe('state stored before sign-in', () => {
  test('When one address starts more sign-ins than its budget, then the extra ones get 429 with Retry-After and the error page, and no interaction row is added for them', async () => {
    const realm = (await h.createTenant()).tenant;
    const attacker = uniqueIp();

    const answers = [];
    for (let i = 0; i < PER_IP; i += 1) answers.push(await start(realm, attacker));
    // Refusals are held a second each (a flood is slowed): the rest at once.
    answers.push(...(await Promise.all(Array.from({ length: 10 }, () => start(realm, attacker)))));

    expect(answers.slice(0, PER_IP).map((a) => a.status)).toEqual(Array(PER_IP).fill(303));
    for (const refused of answers.slice(PER_IP)) {
      expect({
        status: refused.status,
        type: refused.headers['content-type'],
        cache: refused.headers['cache-control'],
      }).toEqual({ status: 429, type: expect.stringMatching(/^text\/html/), cache: 'no-store' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.text).toContain('too many sign-ins were started from this network');
    }
    expect(await storedRows(realm, 'Interaction')).toBe(PER_IP);
  });

  test('When one address floods the authorization endpoint, then another address still starts a sign-in', async () => {
    const realm = (await h.createTenant()).tenant;
    const attacker = uniqueIp();

    const flood = await Promise.all(Array.from({ length: 40 }, () => start(realm, attacker)));
    const other = await start(realm, uniqueIp());

    expect(flood.filter((a) => a.status === 303)).toHaveLength(PER_IP);
    expect(flood.filter((a) => a.status === 429)).toHaveLength(40 - PER_IP);
    expect(other.status).toBe(303);
    expect(other.headers.location).toMatch(new RegExp(`/realms/${realm}/interaction/`));
  });

  test('When many addresses together start more sign-ins than the total budget, then the extra ones get 429 and the interaction rows stop growing', async () => {
    const capped = await startHarness({ SIGN_IN_STARTS_TOTAL: '8' });
    try {
      const { tenant: realm } = await capped.createTenant();
      const answers = [];
      for (let i = 0; i < 12; i += 1)
        answers.push(
          await request(capped.publicUrl)
            .get(authorizationPath(realm))
            .set('x-forwarded-for', uniqueIp()),
        );

      expect(answers.map((a) => a.status)).toEqual([...Array(8).fill(303), ...Array(4).fill(429)]);
      expect(Number(answers[11]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(await storedRows(realm, 'Interaction')).toBe(8);
    } finally {
      await capped.close();
    }
  });

  test('When the path is spelled in another case or with a trailing slash, then it counts against the same budget', async () => {
    const realm = (await h.createTenant()).tenant;
    const attacker = uniqueIp();
    for (let i = 0; i < PER_IP; i += 1) await start(realm, attacker);

    const spelled = await request(h.publicUrl)
      .get(
        authorizationPath(realm).replace(
          '/protocol/openid-connect/auth?',
          '/PROTOCOL/openid-connect/Auth/?',
        ),
      )
      .set('x-forwarded-for', attacker);

    expect(spelled.status).toBe(429);
    expect(await storedRows(realm, 'Interaction')).toBe(PER_IP);
  });

  test('When a state, nonce or other parameter is oversize, then the request is refused with 400 invalid_request before anything is stored, and it spends no budget', async () => {
    const realm = (await h.createTenant()).tenant;
    const ip = uniqueIp();

    const longState = await start(realm, ip, { state: 'x'.repeat(600) });
    const reportedState = await start(realm, ip, { state: 'x'.repeat(12_000) });
    const longNonce = await start(realm, ip, { nonce: 'n'.repeat(513) });
    const longUnknown = await start(realm, ip, { 'x-padding': 'p'.repeat(600) });
    const longQuery = await start(
      realm,
      ip,
      Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`p${i}`, 'q'.repeat(400)])),
    );
    const longPost = await request(h.publicUrl)
      .post(`/realms/${realm}/protocol/openid-connect/auth`)
      .set('x-forwarded-for', ip)
      .type('form')
      .send({ client_id: 'portal', state: 's'.repeat(5000) });

    for (const answer of [longState, reportedState, longNonce, longUnknown, longQuery, longPost]) {
      expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
        status: 400,
        type: expect.stringMatching(/^text\/html/),
      });
      expect(answer.text).toContain('This sign-in cannot continue');
    }
    expect(longState.text).toContain('the state parameter is longer than 512 characters');
    expect(longNonce.text).toContain('the nonce parameter is longer than 512 characters');
    expect(reportedState.text).toContain(
      'the authorization request is longer than 4096 characters',
    );
    expect(longQuery.text).toContain('the authorization request is longer than 4096 characters');
    expect(longPost.text).toContain('the authorization request is longer than 4096 bytes');
    expect(await storedRows(realm, 'Interaction')).toBe(0);
    // None of them spent a start: the address still has its whole budget.
    for (let i = 0; i < PER_IP; i += 1) expect((await start(realm, ip)).status).toBe(303);
  });

  test('When a state of the longest size allowed is sent, then the sign-in starts as usual', async () => {
    const realm = (await h.createTenant()).tenant;

    const answer = await start(realm, uniqueIp(), { state: 's'.repeat(512) });

    expect(answer.status).toBe(303);
    expect(await storedRows(realm, 'Interaction')).toBe(1);
  });

  test('When an interaction row expires, then it is deleted within seconds, not at a sweep minutes later', async () => {
    const realm = (await h.createTenant()).tenant;
    const id = randomBytes(16).toString('base64url');
    await h.service.identity.oidcPayloads.upsert(
      realm,
      'Interaction',
      id,
      { uid: randomBytes(8).toString('hex'), params: {} },
      1,
    );
    expect(await storedRows(realm, 'Interaction')).toBe(1);

    await eventually(
      async () => (await storedRows(realm, 'Interaction')) === 0,
      'the expired interaction row is deleted',
    );
  });

  test('When a pushed authorization request is sent, then the endpoint does not exist and nothing is stored', async () => {
    const realm = (await h.createTenant()).tenant;

    const pushed = await request(h.publicUrl)
      .post(`/realms/${realm}/request`)
      .type('form')
      .send({
        client_id: 'portal',
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        state: 's'.repeat(50_000),
      });
    const discovery = await request(h.publicUrl).get(
      `/realms/${realm}/.well-known/openid-configuration`,
    );

    expect(pushed.status).toBe(404);
    expect(discovery.body.pushed_authorization_request_endpoint).toBeUndefined();
    expect(await storedRows(realm, 'PushedAuthorizationRequest')).toBe(0);
  });
});
