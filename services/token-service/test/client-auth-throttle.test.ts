import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';

let h: Harness;
let tenant: string;

beforeAll(async () => {
  h = await startHarness({
    CLIENT_AUTH_FAILURES_PER_CLIENT_IP: '3',
    CLIENT_AUTH_FAILURES_PER_IP: '6',
    CLIENT_AUTH_FAILURES_PER_CLIENT: '8',
  });
  ({ tenant } = await h.createTenant());
});

afterAll(async () => {
  await h.close();
});

function attempt(account: CreatedAccount, secret: string, ip: string) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', ip)
    .set('authorization', basic(account.client_id, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

function guess(ip: string, clientId: string) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', ip)
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'pss_guess' });
}

const guessedId = () => `sa-${randomBytes(16).toString('hex')}`;

/** The queries naming any of `ids` sent from the service's pool from now on. */
function pointQueries(ids: string[]) {
  const wanted = new Set(ids);
  let total = 0;
  const started = (q: { bindings?: unknown[] }) => {
    if (q.bindings?.some((b) => wanted.has(String(b)))) total += 1;
  };
  const { db } = h.service;
  db.on('query', started);
  return { total: () => total, stop: () => db.off('query', started) };
}

const TOO_MANY = {
  error: 'too_many_requests',
  error_description: 'too many failed client authentications; retry later',
};

describe('throttling of failed client authentications', () => {
  test('When one address fails for a client too often, then it gets 429 with Retry-After even with the right secret, while the owner elsewhere is unaffected', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const attacker = uniqueIp();
    const failures = [];
    for (let i = 0; i < 3; i += 1)
      failures.push((await attempt(account, 'pss_guess', attacker)).status);

    const blocked = await attempt(account, account.secret, attacker);
    const owner = await attempt(account, account.secret, uniqueIp());

    expect(failures).toEqual([401, 401, 401]);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['cache-control']).toBe('no-store');
    expect(blocked.body).toEqual(TOO_MANY);
    expect(owner.status).toBe(200);
  });

  test('When one address sprays many clients, then its wrong secrets and unknown ids get 429 for every client, but the right secret of a client not locked still gets a token', async () => {
    const api = internal(h);
    const accounts = await Promise.all(
      Array.from({ length: 7 }, () => api.createServiceAccount(tenant)),
    );
    const sprayer = uniqueIp();
    for (const account of accounts.slice(0, 6))
      await attempt(account, 'pss_guess', sprayer).expect(401);

    const wrong = await attempt(accounts[6]!, 'pss_guess', sprayer);
    const unknownClient = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('x-forwarded-for', sprayer)
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: 'sa-nobody', client_secret: 'x' });
    const right = await attempt(accounts[6]!, accounts[6]!.secret, sprayer);

    expect(wrong.status).toBe(429);
    expect(wrong.body).toEqual(TOO_MANY);
    expect(Number(wrong.headers['retry-after'])).toBeGreaterThan(0);
    expect(unknownClient.status).toBe(429);
    expect(unknownClient.body).toEqual(TOO_MANY);
    expect(Number(unknownClient.headers['retry-after'])).toBeGreaterThan(0);
    expect(right.status).toBe(200);
  });

  test('When unknown client ids are guessed from one address, then the address is stopped too', async () => {
    const guesser = uniqueIp();
    for (let i = 0; i < 6; i += 1) {
      await request(h.publicUrl)
        .post(h.tokenUrl(tenant))
        .set('x-forwarded-for', guesser)
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: `sa-guess-${i}`, client_secret: 'x' })
        .expect(401);
    }

    const res = await request(h.publicUrl)
      .post(h.tokenUrl(tenant))
      .set('x-forwarded-for', guesser)
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: 'sa-guess-x', client_secret: 'x' });

    expect(res.status).toBe(429);
  });

  test('When an address is over its budget, then the right secret of an account this replica never read still gets a token, and the ids it guesses cost no query each', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const guesser = uniqueIp();
    for (let i = 0; i < 6; i += 1) await guess(guesser, guessedId()).expect(401);
    const guessed = Array.from({ length: 30 }, guessedId);
    const queries = pointQueries(guessed);

    const answers = await Promise.all(guessed.map((id) => guess(guesser, id)));
    const right = await attempt(account, account.secret, guesser);
    queries.stop();

    expect(answers.map((res) => res.status)).toEqual(guessed.map(() => 429));
    expect(answers[0]!.body).toEqual(TOO_MANY);
    expect(right.status).toBe(200);
    expect(queries.total()).toBe(0);
  });

  test('When one clean address sends a burst of unknown ids, then at most four of its lookups are in flight at once; the rest go through the realm list', async () => {
    const burster = uniqueIp();
    const guessed = Array.from({ length: 30 }, guessedId);
    const wanted = new Set(guessed);
    const credentials = h.service.identity.clientCredentials;
    const find = credentials.find;
    let inFlight = 0;
    let maxInFlight = 0;
    // Slow lookups, so a burst has many in flight unless something holds them back.
    credentials.find = async (realm, clientId) => {
      if (!wanted.has(clientId)) return find.call(credentials, realm, clientId);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        await sleep(50);
        return await find.call(credentials, realm, clientId);
      } finally {
        inFlight -= 1;
      }
    };
    let answers: request.Response[];
    try {
      answers = await Promise.all(guessed.map((id) => guess(burster, id)));
    } finally {
      credentials.find = find;
    }

    expect(answers.filter((res) => res.status !== 401 && res.status !== 429)).toEqual([]);
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(4);
  });

  test('When a client is attacked from many addresses, then wrong secrets get 429 but the right secret still gets a token', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    for (let i = 0; i < 8; i += 1) await attempt(account, 'pss_guess', uniqueIp());

    const wrong = await attempt(account, 'pss_guess', uniqueIp());
    const right = await attempt(account, account.secret, uniqueIp());

    expect(wrong.status).toBe(429);
    expect(wrong.body).toEqual(TOO_MANY);
    expect(right.status).toBe(200);
  });

  test('When a client succeeds, then its earlier failures from that address are forgotten', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const ip = uniqueIp();
    await attempt(account, 'pss_guess', ip).expect(401);
    await attempt(account, 'pss_guess', ip).expect(401);
    await attempt(account, account.secret, ip).expect(200);

    const statuses = [];
    for (let i = 0; i < 2; i += 1) statuses.push((await attempt(account, 'pss_guess', ip)).status);
    const stillOk = await attempt(account, account.secret, ip);

    expect(statuses).toEqual([401, 401]);
    expect(stillOk.status).toBe(200);
  });
});

describe('last_used_at', () => {
  test('When a service account gets a token, then last_used_at is set shortly after, off the request path', async () => {
    const api = internal(h);
    const account = await api.createServiceAccount(tenant);
    await attempt(account, account.secret, uniqueIp()).expect(200);

    await h.service.usage.flush();
    const res = await api.raw
      .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
      .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`);

    expect(res.body.last_used_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(Date.parse(res.body.last_used_at)).toBeGreaterThanOrEqual(
      Date.parse(account.created_at),
    );
  });

  test('When tokens are requested again within the minute, then last_used_at is not rewritten', async () => {
    const api = internal(h);
    const account = await api.createServiceAccount(tenant);
    await attempt(account, account.secret, uniqueIp()).expect(200);
    await h.service.usage.flush();
    const first = (
      await api.raw
        .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
        .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`)
    ).body.last_used_at;

    await attempt(account, account.secret, uniqueIp()).expect(200);
    await h.service.usage.flush();
    const second = (
      await api.raw
        .get(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`)
        .set('authorization', `Bearer ${h.config.ACCOUNT_ADMIN_TOKEN}`)
    ).body.last_used_at;

    expect(second).toBe(first);
  });
});
