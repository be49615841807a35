/**
 * Shared Signals push delivery shared fairly between tenants. The attacker is a tenant with many
 * push streams whose receivers take their time answering (2xx, inside the push deadline): its
 * pushes may only ever hold its own tenant's lanes, so another tenant's events go out while the
 * attacker's receivers still hold their requests open, and however many of its streams fall due
 * at once, no more of them are pushed at a time than the per-tenant bound, in each tenant,
 * exactly (counted at the receivers, real HTTP servers on loopback, whose answers the test
 * releases).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import {
  eventually,
  HeldAnswers,
  type SetExpectations,
  type SignalReceiver,
  startSignalReceiver,
} from '@plant/test-kit';
import { basic, type Harness, startHarness } from './helpers/harness.js';
import { type CreatedAccount, internal } from './helpers/internal-client.js';
import { tokenRequest } from './helpers/token-client.js';

const PUSH = 'urn:ietf:rfc:8935';
const CREDENTIAL_CHANGE = 'https://schemas.openid.net/secevent/caep/event-type/credential-change';
const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';
/** The per-tenant bound this suite runs with (the default). */
const PER_TENANT = 4;
/** The attacker's streams: three times its bound, more than the old shared slots (eight). */
const ATTACKER_STREAMS = 12;

let h: Harness;
let api: ReturnType<typeof internal>;
const receivers: SignalReceiver[] = [];

beforeAll(async () => {
  h = await startHarness({
    FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
    FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
    SSF_MIN_VERIFICATION_INTERVAL_SECONDS: '0',
    SSF_PUSH_CONCURRENCY_PER_TENANT: String(PER_TENANT),
    // Far beyond what the test takes: a held answer is never cut short by the deadline, so
    // "still open" at the receiver means the transmitter is still waiting on it.
    SSF_PUSH_TIMEOUT_MS: '20000',
  });
  api = internal(h);
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await h?.close();
});

interface Receiver {
  tenant: string;
  account: CreatedAccount;
  token: string;
  expect: SetExpectations;
}

async function newReceiver(realm: string): Promise<Receiver> {
  const account = await api.createServiceAccount(realm);
  expect((await api.patch(realm, account.client_id, { receive_signals: true })).status).toBe(200);
  const res = await tokenRequest(h, realm)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form')
    .send({ grant_type: 'client_credentials', scope: 'ssf.manage ssf.read' });
  expect(res.status).toBe(200);
  const issuer = h.issuer(realm);
  return {
    tenant: realm,
    account,
    token: res.body.access_token as string,
    expect: {
      issuer,
      jwksUri: `${issuer}/protocol/openid-connect/certs`,
      audience: account.client_id,
    },
  };
}

async function pushStream(
  r: Receiver,
  events: string[],
  held?: HeldAnswers,
): Promise<{ receiver: SignalReceiver; streamId: string }> {
  const receiver = await startSignalReceiver(r.expect, held === undefined ? {} : { held });
  receivers.push(receiver);
  const res = await request(h.publicUrl)
    .post(`/realms/${r.tenant}/ssf/streams`)
    .set('authorization', `Bearer ${r.token}`)
    .send({ delivery: { method: PUSH, endpoint_url: receiver.url }, events_requested: events });
  expect(res.status).toBe(201);
  return { receiver, streamId: res.body.stream_id as string };
}

describe('Shared Signals push: one tenant’s slow receivers and another tenant’s events', () => {
  test('When a tenant’s twelve push receivers hold their answers, then another tenant’s verification and reset events arrive while those requests are still open, and the attacker never has more than its bound in flight', async () => {
    const { tenant: attacker } = await h.createTenant();
    const { tenant: victim } = await h.createTenant();
    const held = new HeldAnswers();
    const slow = await newReceiver(attacker);
    const attackerStreams = [];
    for (let i = 0; i < ATTACKER_STREAMS; i += 1)
      attackerStreams.push(await pushStream(slow, [CREDENTIAL_CHANGE], held));
    const victimReceiver = await newReceiver(victim);
    const victimTarget = await api.createServiceAccount(victim);
    const { receiver: fast, streamId: victimStream } = await pushStream(victimReceiver, [
      CREDENTIAL_CHANGE,
      VERIFICATION,
    ]);
    try {
      // Two changes of one account: every attacker stream falls due at once, two events each.
      const target = await api.createServiceAccount(attacker);
      await api.reset(attacker, target.client_id).expect(200);
      await api.reset(attacker, target.client_id).expect(200);
      await held.openAtLeast(PER_TENANT);

      // The victim's verification, then a secret reset of one of its accounts.
      await request(h.publicUrl)
        .post(`/realms/${victim}/ssf/streams/verify`)
        .set('authorization', `Bearer ${victimReceiver.token}`)
        .send({ stream_id: victimStream, state: 'while-the-attacker-waits' })
        .expect(204);
      const [verification] = await fast.waitFor(1);
      expect(verification).toMatchObject({
        type: VERIFICATION,
        event: { state: 'while-the-attacker-waits' },
      });
      // Causality, not a clock: the attacker's pushes are still waiting on their receivers.
      expect(held.open).toBe(PER_TENANT);
      await api.reset(victim, victimTarget.client_id).expect(200);
      const [, reset] = await fast.waitFor(2);
      expect(reset).toMatchObject({ type: CREDENTIAL_CHANGE, event: { change_type: 'update' } });
      expect(held.open).toBe(PER_TENANT);
      expect(held.peak).toBe(PER_TENANT);
      // What the replica holds follows what is in flight: the attacker has its lanes, no more.
      expect(h.service.signals.delivery.inFlight.lanes.get(attacker)).toBe(PER_TENANT);
    } finally {
      held.release();
    }
    // Released: every attacker stream gets both events, never more than the bound at once.
    for (const { receiver } of attackerStreams) await receiver.waitFor(2);
    expect(held.peak).toBe(PER_TENANT);
    // A tenant is held only while a stream of it is in flight; no lane ever past the bound.
    const gone = () => {
      const { lanes } = h.service.signals.delivery.inFlight;
      return !lanes.has(attacker) && !lanes.has(victim);
    };
    await eventually(gone, 'both tenants’ rounds have ended');
    const { streams, lanes } = h.service.signals.delivery.inFlight;
    expect([...lanes.values()].reduce((a, b) => a + b, 0)).toBe(streams);
    for (const width of lanes.values()) expect(width).toBeLessThanOrEqual(PER_TENANT);
  }, 60_000);
});

describe('Shared Signals push: the per-tenant bound under racing claims', () => {
  test('When two tenants’ streams all fall due at once, then each tenant has exactly its bound of pushes open at its receivers, never more, and every event arrives', async () => {
    const tenants = await Promise.all([h.createTenant(), h.createTenant()]);
    const sides = [];
    for (const { tenant } of tenants) {
      const held = new HeldAnswers();
      const r = await newReceiver(tenant);
      const streams = [];
      for (let i = 0; i < PER_TENANT + 2; i += 1)
        streams.push(await pushStream(r, [CREDENTIAL_CHANGE], held));
      sides.push({ tenant, held, streams, target: await api.createServiceAccount(tenant) });
    }
    try {
      // One change in each tenant at once: every stream of both falls due in the same moment.
      await Promise.all(sides.map((s) => api.reset(s.tenant, s.target.client_id).expect(200)));
      await Promise.all(sides.map((s) => s.held.openAtLeast(PER_TENANT)));
      for (const { held } of sides) expect(held.open).toBe(PER_TENANT);
    } finally {
      for (const { held } of sides) held.release();
    }
    for (const { streams } of sides) for (const { receiver } of streams) await receiver.waitFor(1);
    for (const { held } of sides) expect(held.peak).toBe(PER_TENANT);
  }, 60_000);
});
