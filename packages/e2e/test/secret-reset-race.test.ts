/**
 * A reset racing grants, against the token service process: a secret is reset while 50
 * grants with the old secret are in flight. The seed says the old secret stops working as
 * soon as the new one is issued: no grant answered after the reset's answer may get a token
 * with the old secret. Several rounds, with the credential cached and not, at different
 * moments of the burst. The failure throttles are raised for this file so every refusal is
 * the 401 of a wrong secret, never a 429.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPlatform, type Platform } from '../src/index.js';

/**
 * Each round starts the reset at another moment around the burst (3 ms before it to 4 ms into
 * it), with the credential cached and not: a read of the credential in flight across the
 * commit, and a grant past its secret comparison, each get their chance.
 */
const ROUNDS = 24;

let p: Platform;
let tenant: string;

beforeAll(async () => {
  p = await startPlatform({
    plantStores: 0,
    serviceEnv: {
      'token-service': {
        CLIENT_AUTH_FAILURES_PER_CLIENT_IP: '100000',
        CLIENT_AUTH_FAILURES_PER_IP: '100000',
        CLIENT_AUTH_FAILURES_PER_CLIENT: '1000000',
      },
    },
  });
  tenant = await p.createTenant('race');
}, 60_000);

afterAll(() => p?.close());

interface Timed {
  status: number;
  /** When the answer was read, performance.now(). */
  at: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 128, localAddress: '127.0.0.79' });
afterAll(() => agent.destroy());

async function grant(clientId: string, secret: string): Promise<Timed> {
  const answer = await p.requestToken(tenant, clientId, secret, {}, agent);
  return { status: answer.status, at: performance.now() };
}

describe('A secret reset racing grants with the old secret', () => {
  test('When a secret is reset while 50 grants with the old secret are in flight, then every grant answered after the reset answer is 401, and the new secret works', async () => {
    const late: Array<{ round: number; status: number; afterMs: number }> = [];
    let answeredAfter = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const account = await p.createServiceAccount(tenant);
      if (round % 2 === 0) expect((await grant(account.clientId, account.secret)).status).toBe(200);
      const offsetMs = (Math.floor(round / 2) % 8) - 3;
      const burst = () => Array.from({ length: 50 }, () => grant(account.clientId, account.secret));

      let inFlight: Array<Promise<Timed>>;
      let reset: Promise<string>;
      if (offsetMs < 0) {
        reset = p.resetSecret(tenant, account.clientId);
        await sleep(-offsetMs);
        inFlight = burst();
      } else {
        inFlight = burst();
        await sleep(offsetMs);
        reset = p.resetSecret(tenant, account.clientId);
      }
      const newSecret = await reset;
      const resetAt = performance.now();
      const after = Array.from({ length: 10 }, () => grant(account.clientId, account.secret));
      const answers = [...(await Promise.all(inFlight)), ...(await Promise.all(after))];

      for (const answer of answers.filter((a) => a.at > resetAt)) {
        answeredAfter += 1;
        if (answer.status !== 401)
          late.push({ round, status: answer.status, afterMs: answer.at - resetAt });
      }
      expect((await grant(account.clientId, newSecret)).status).toBe(200);
    }

    expect(late).toEqual([]);
    expect(answeredAfter).toBeGreaterThanOrEqual(10 * ROUNDS);
  }, 120_000);
});
