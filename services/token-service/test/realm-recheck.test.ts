import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { eventually, sleep } from '@plant/test-kit';
import request from 'supertest';
import { rotateSigningKey } from '../src/signing-keys/signing-keys.js';
import { RECHECK_MS } from '../src/oidc/realm-providers.js';
import { basic, decodeJwt, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

/** Just past the realm cache's re-check period. */
const PAST_RECHECK_MS = RECHECK_MS + 1000;
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

async function tokenKid(
  target: Harness,
  tenant: string,
  clientId: string,
  secret: string,
): Promise<unknown> {
  const res = await request(target.publicUrl)
    .post(target.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' })
    .expect(200);
  return decodeJwt(res.body.access_token as string).header.kid;
}

/** Run `fn` with the clock read as `at` (only the synchronous call: the re-check's query runs on the real clock). */
function atTime<T>(at: number, fn: () => T): T {
  const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    return fn();
  } finally {
    clock.mockRestore();
  }
}

describe('the realm keys re-check (a replica that missed the rotation event): one query a period for every realm', () => {
  test('When the re-check is due, then the built realm is served at once, and the key rotated without an event is used once the re-check lands', async () => {
    const { tenant, kid: oldKid } = await h.createTenant();
    const account = await internal(h).createServiceAccount(tenant);
    await tokenKid(h, tenant, account.client_id, account.secret);
    // Rotated in Postgres only: no Redis event, as for a replica that was disconnected.
    const rotated = await rotateSigningKey(h.service.identity, tenant);
    const beforeRecheck = await tokenKid(h, tenant, account.client_id, account.secret);
    const built = h.service.providers.builtHandler(tenant);

    const servedWhenDue = atTime(Date.now() + PAST_RECHECK_MS, () =>
      h.service.providers.builtHandler(tenant),
    );
    await eventually(
      () => h.service.providers.builtHandler(tenant) !== built,
      'the re-check to build the rotated key',
    );
    const afterRecheck = await tokenKid(h, tenant, account.client_id, account.secret);

    expect(beforeRecheck).toBe(oldKid);
    expect(built).toBeDefined();
    expect(servedWhenDue).toBe(built);
    expect(afterRecheck).toBe(rotated.kid);
  });

  test('When Postgres is gone at the re-check, then the built realm is still served, and one warning is logged per period, not per request', async () => {
    const outage = await startHarness();
    try {
      const { tenant } = await outage.createTenant();
      const account = await internal(outage).createServiceAccount(tenant);
      await tokenKid(outage, tenant, account.client_id, account.secret);
      const built = outage.service.providers.builtHandler(tenant);
      await outage.service.db.destroy();
      const due = Date.now() + PAST_RECHECK_MS;
      const warnings = () =>
        outage.logs
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.msg === 'realm key re-check failed; serving the cached signing keys');

      const servedWhenDue = atTime(due, () => outage.service.providers.builtHandler(tenant));
      await eventually(() => warnings().length > 0, 'the re-check to fail');
      const servedAgain = [1, 2, 3].map((s) =>
        atTime(due + s * 1000, () => outage.service.providers.builtHandler(tenant)),
      );
      await sleep(100);

      expect(servedWhenDue).toBe(built);
      expect(servedAgain).toEqual([built, built, built]);
      expect(warnings()).toEqual([
        expect.objectContaining({
          level: 'warn',
          err: expect.objectContaining({ message: 'Unable to acquire a connection' }),
        }),
      ]);
    } finally {
      await outage.close();
    }
  });
});
