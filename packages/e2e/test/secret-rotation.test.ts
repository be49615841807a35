/**
 * Rotation without an outage, every service a process (two token service processes, two Plant
 * Stores that re-sync only every 60 s, so only the published events can revoke in time): an
 * Account Admin adds a second secret through account-admin's /api/v1, a client calling in a loop
 * moves to it, and the old secret is removed while the loop runs. No call of the loop fails; the
 * token the old secret obtained is refused at its next use on every Plant Store; the old secret
 * gets nothing at either token service process.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually, type ServiceProcess } from '@plant/test-kit';
import { httpRequest, startPlatform, type Answer, type Platform } from '../src/index.js';
import { eventsReceived } from './revocation-platform.js';

let p: Platform;
let tenant: string;
let adminToken: string;
let replica: ServiceProcess;

beforeAll(async () => {
  p = await startPlatform({ accountAdmin: true, plantStores: 2, resyncMs: 60_000 });
  replica = await p.startTokenServiceReplica();
  tenant = await p.createTenant('rotate');
  adminToken = await p.userToken(tenant, `admin@${tenant}.test`);
}, 120_000);

afterAll(() => p?.close(), 60_000);

function api(method: string, path: string, body?: unknown): Promise<Answer> {
  return httpRequest(`${p.portalUrl}/api/v1/service-accounts${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A client-credentials grant at one of the token service processes (the loop alternates them). */
function grantAt(base: string, clientId: string, secret: string): Promise<Answer> {
  return httpRequest(`${base}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  });
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
    cred?: string;
  };

/**
 * A client as automation runs it: it gets a token with the secret it is configured with and
 * calls both Plant Stores with it, taking a new token every few calls (and at once when it is
 * moved to another secret). Every answer that is not a 200 is a failed call.
 */
class LoopingClient {
  secret: string;
  calls = 0;
  readonly failures: string[] = [];
  #token: string | undefined;
  #stopped = false;
  #done: Promise<void> | undefined;

  constructor(
    private readonly clientId: string,
    secret: string,
  ) {
    this.secret = secret;
  }

  start(): void {
    this.#done = this.#run();
  }

  /** Moves to another secret: the next call takes a token with it (what a redeploy with the new secret does). */
  async moveTo(secret: string): Promise<string> {
    this.secret = secret;
    this.#token = await this.#grant();
    return this.#token;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
  }

  async #grant(): Promise<string> {
    const bases = [p.authUrl, replica.url];
    const res = await grantAt(bases[this.calls % 2]!, this.clientId, this.secret);
    if (res.status !== 200) {
      this.failures.push(`grant ${res.status} ${res.text}`);
      throw new Error('grant failed');
    }
    return (res.body as { access_token: string }).access_token;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        if (this.#token === undefined || this.calls % 10 === 0) this.#token = await this.#grant();
        const answers = await Promise.all(
          p.plantStores.map((s) => p.listPlants(this.#token!, 'limit=1', s)),
        );
        for (const answer of answers)
          if (answer.status !== 200) this.failures.push(`call ${answer.status} ${answer.text}`);
      } catch {
        // Counted in `failures` already.
      }
      this.calls += 1;
    }
  }
}

describe('rotation without an outage', () => {
  test('When a second secret is added, the looping client moved to it and the old secret removed, then no call of the loop fails and the old secret’s token is refused at its next use on every Plant Store', async () => {
    const account = await p.createServiceAccount(tenant);
    const before = await api('GET', `/${account.clientId}/credentials`);
    expect(before.status).toBe(200);
    const oldId = (before.body as { secrets: Array<{ id: string }> }).secrets[0]!.id;
    const client = new LoopingClient(account.clientId, account.secret);
    client.start();
    await eventually(() => client.calls >= 5, 'the loop runs');
    const oldToken = (
      (await grantAt(p.authUrl, account.clientId, account.secret)).body as { access_token: string }
    ).access_token;
    expect(claimsOf(oldToken).cred).toBe(`secret:${oldId}`);

    const added = await api('POST', `/${account.clientId}/secrets`, {});
    expect(added.status).toBe(201);
    const second = added.body as { id: string; secret: string; expires_at: string | null };
    expect(second).toMatchObject({ id: expect.stringMatching(/^sec-/), expires_at: null });
    await eventually(() => client.calls >= 10, 'the loop runs with two secrets live');
    const newToken = await client.moveTo(second.secret);
    expect(claimsOf(newToken).cred).toBe(`secret:${second.id}`);
    await eventually(() => client.calls >= 15, 'the loop runs on the new secret');

    const stores = [...p.plantStores];
    const eventsBefore = await Promise.all(stores.map(eventsReceived));
    const removed = await api('DELETE', `/${account.clientId}/secrets/${oldId}`);
    expect(removed.status).toBe(204);
    await eventually(
      async () =>
        (await Promise.all(stores.map(eventsReceived))).every((n, i) => n > eventsBefore[i]!),
      'every Plant Store received the removal',
      10_000,
    );
    const callsAtRemoval = client.calls;
    // The old token at its next use, on every Plant Store, and a burst of both tokens at once.
    const oldAnswers = await Promise.all(stores.map((s) => p.listPlants(oldToken, 'limit=1', s)));
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        p.listPlants(i % 2 === 0 ? oldToken : newToken, 'limit=1', stores[i % stores.length]),
      ),
    );
    await eventually(() => client.calls >= callsAtRemoval + 10, 'the loop runs after the removal');
    await client.stop();

    expect(oldAnswers.map((a) => [a.status, (a.body as { message?: string }).message])).toEqual([
      [401, 'Token has been revoked'],
      [401, 'Token has been revoked'],
    ]);
    expect(burst.map((a) => a.status)).toEqual(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 401 : 200)),
    );
    expect(client.failures).toEqual([]);
    for (const base of [p.authUrl, replica.url])
      expect((await grantAt(base, account.clientId, account.secret)).status).toBe(401);
    const after = await api('GET', `/${account.clientId}/credentials`);
    expect((after.body as { secrets: Array<{ id: string }> }).secrets.map((s) => s.id)).toEqual([
      second.id,
    ]);
  });

  test('When an account holds two live secrets, then a third is refused with an Error and nothing changes', async () => {
    const account = await p.createServiceAccount(tenant);
    expect((await api('POST', `/${account.clientId}/secrets`, {})).status).toBe(201);

    const third = await api('POST', `/${account.clientId}/secrets`, {});

    expect({ status: third.status, body: third.body }).toEqual({
      status: 409,
      body: {
        error: 409,
        message:
          'This service account already has two live secrets: remove one before adding another',
      },
    });
    const credentials = await api('GET', `/${account.clientId}/credentials`);
    expect((credentials.body as { secrets: unknown[] }).secrets).toHaveLength(2);
    expect((await p.requestToken(tenant, account.clientId, account.secret)).status).toBe(200);
  });
});
