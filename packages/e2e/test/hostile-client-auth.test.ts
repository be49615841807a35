/**
 * Client authentication under attack, against the token service process: failures from one address slow down
 * that address's FAILING attempts, but never lock out the right secret of a client that is not
 * itself locked (clients behind one NAT or CI runner pool share an address). The client binds
 * its own loopback address, so no other test's counters reach it; the throttles keep their
 * defaults (10 per client and address, 50 per address, 500 per client).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import {
  startPlatformWithEditor,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let account: ServiceAccount;

beforeAll(async () => {
  ({ p, tenant, account } = await startPlatformWithEditor('hca', { plantStores: 0 }));
}, 60_000);

afterAll(() => p?.close());

/** A client credentials grant sent from `agent`'s loopback address. */
const grant = (agent: Agent, clientId: string, secret: string): Promise<Answer> =>
  p.requestToken(tenant, clientId, secret, {}, agent);

const unknownClientId = () => `sa-${randomBytes(16).toString('hex')}`;
const TOO_MANY = {
  error: 'too_many_requests',
  error_description: 'too many failed client authentications; retry later',
};

describe('One address full of failures', () => {
  test('When 70 grants with random unknown client_ids come from one address, then the right secret of a real account from that address still gets a token, while its wrong secrets and unknown ids are slowed to 429', async () => {
    const shared = new Agent({ keepAlive: true, localAddress: '127.0.0.77' });
    try {
      const guesses: number[] = [];
      for (let i = 0; i < 70; i += 1)
        guesses.push((await grant(shared, unknownClientId(), 'pss_guess')).status);

      const right = await grant(shared, account.clientId, account.secret);
      const wrong = await grant(shared, account.clientId, 'pss_wrong');
      const unknown = await grant(shared, unknownClientId(), 'pss_guess');
      const rightAgain = await grant(shared, account.clientId, account.secret);

      expect(guesses).toEqual([...Array<number>(50).fill(401), ...Array<number>(20).fill(429)]);
      expect({
        status: right.status,
        tokenType: (right.body as { token_type?: string }).token_type,
      }).toEqual({ status: 200, tokenType: 'Bearer' });
      for (const slowed of [wrong, unknown]) {
        expect({
          status: slowed.status,
          body: slowed.body,
          retryAfter: Number(slowed.headers['retry-after']) > 0,
        }).toEqual({ status: 429, body: TOO_MANY, retryAfter: true });
      }
      expect(rightAgain.status).toBe(200);
    } finally {
      shared.destroy();
    }
  });

  test('When bursts of unknown client_ids and wrong secrets come from one address at once, then every answer is 401 or 429, and right secrets sent amid the next burst get their tokens', async () => {
    const burst = new Agent({ keepAlive: true, localAddress: '127.0.0.78', maxSockets: 64 });
    try {
      const own = await p.createServiceAccount(tenant);
      const failing = (n: number) =>
        Array.from({ length: n }, (_, i) =>
          i % 2 === 0
            ? grant(burst, unknownClientId(), 'pss_guess')
            : grant(burst, own.clientId, `pss_wrong${i}`),
        );

      const first = await Promise.all(failing(120));
      const [rights, second] = await Promise.all([
        Promise.all(
          Array.from({ length: 5 }, () => grant(burst, account.clientId, account.secret)),
        ),
        Promise.all(failing(20)),
      ]);

      expect(
        [...first, ...second]
          .filter((a) => a.status !== 401 && a.status !== 429)
          .map((a) => a.status),
      ).toEqual([]);
      expect(first.filter((a) => a.status === 429).length).toBeGreaterThan(0);
      expect(second.map((a) => a.status)).toEqual(Array<number>(20).fill(429));
      expect(rights.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    } finally {
      burst.destroy();
    }
  });
});
