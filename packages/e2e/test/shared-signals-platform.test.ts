/**
 * Shared Signals across processes: the token service as separate processes (two replicas on
 * one database), a push receiver and a poll client of the test kit verifying every SET against
 * the realm's published keys, and the token service killed with SIGKILL while committed events
 * wait undelivered: after the restart every one arrives, in order, nothing lost.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  pollSignals,
  type SetExpectations,
  type SignalReceiver,
  startSignalReceiver,
} from '@plant/test-kit';
import { httpRequest, type Platform, type ServiceAccount, startPlatform } from '../src/index.js';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const CREDENTIAL_CHANGE = `${CAEP}/credential-change`;
const SESSION_REVOKED = `${CAEP}/session-revoked`;
const DISABLED = `${RISC}/account-disabled`;
const ENABLED = `${RISC}/account-enabled`;
const EVENTS = [CREDENTIAL_CHANGE, SESSION_REVOKED, DISABLED, ENABLED];

let p: Platform;
let tenant: string;
let receiverAccount: ServiceAccount;
let expectation: SetExpectations;

beforeAll(async () => {
  p = await startPlatform({
    plantStores: 0,
    // Receivers on loopback: the documented development switches.
    serviceEnv: {
      'token-service': {
        FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
        FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
      },
    },
  });
  tenant = await p.createTenant('ssf');
  receiverAccount = await p.createServiceAccount(tenant);
  await p.updateServiceAccount(tenant, receiverAccount.clientId, { receive_signals: true });
  const issuer = `${p.authUrl}/realms/${tenant}`;
  expectation = {
    issuer,
    jwksUri: `${issuer}/protocol/openid-connect/certs`,
    audience: receiverAccount.clientId,
  };
}, 120_000);

afterAll(() => p?.close());

async function receiverToken(): Promise<string> {
  return p.grantToken(tenant, receiverAccount, { scope: 'ssf.manage ssf.read' });
}

async function createStream(delivery: Record<string, string>): Promise<{
  stream_id: string;
  delivery: { endpoint_url: string };
}> {
  const configuration = (
    await httpRequest(`${p.authUrl}/.well-known/ssf-configuration/realms/${tenant}`)
  ).body as { configuration_endpoint: string };
  const answer = await httpRequest(configuration.configuration_endpoint, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await receiverToken()}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ delivery, events_requested: EVENTS }),
  });
  expect(answer.status).toBe(201);
  return answer.body as { stream_id: string; delivery: { endpoint_url: string } };
}

/** Five changes of one account, each answered (committed) before the next. */
async function changeAccount(account: ServiceAccount): Promise<void> {
  await p.resetSecret(tenant, account.clientId);
  const disable = `/internal/v1/realms/${tenant}/service-accounts/${account.clientId}/disable`;
  expect((await p.internal('POST', disable, { actor: 'e2e' })).status).toBe(200);
  const enable = `/internal/v1/realms/${tenant}/service-accounts/${account.clientId}/enable`;
  expect((await p.internal('POST', enable, { actor: 'e2e' })).status).toBe(200);
  await p.resetSecret(tenant, account.clientId);
}

const EXPECTED_ORDER = [
  CREDENTIAL_CHANGE, // reset
  DISABLED,
  SESSION_REVOKED,
  ENABLED,
  CREDENTIAL_CHANGE, // reset
];

describe('Shared Signals across processes', () => {
  let receiver: SignalReceiver;
  beforeAll(async () => {
    receiver = await startSignalReceiver(expectation);
  });
  afterAll(() => receiver?.close());

  test('When the token service is killed (SIGKILL) while committed events wait for a receiver that is down, then after the restart every event arrives, in order, each once', async () => {
    await createStream({ method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url });
    const account = await p.createServiceAccount(tenant);
    await receiver.waitFor(1);
    await receiver.down();
    await changeAccount(account);
    // Every change above was answered, so committed; none could be delivered.
    expect(receiver.received).toHaveLength(1);
    await p.restart(p.tokenService, 'SIGKILL');
    await receiver.up();
    const sets = (await receiver.waitFor(1 + EXPECTED_ORDER.length)).slice(1);
    expect(sets.map((s) => s.type)).toEqual(EXPECTED_ORDER);
    for (const set of sets)
      expect(set.sub_id).toEqual({
        format: 'iss_sub',
        iss: expectation.issuer,
        sub: account.clientId,
      });
  }, 180_000);

  test('When two token service replicas run, then each SET is pushed once and in order', async () => {
    const replica = await p.startTokenServiceReplica();
    try {
      const before = receiver.received.length;
      const deliveriesBefore = receiver.deliveries;
      const account = await p.createServiceAccount(tenant);
      await changeAccount(account);
      const sets = (await receiver.waitFor(before + 1 + EXPECTED_ORDER.length)).slice(before);
      expect(sets.map((s) => s.type)).toEqual([CREDENTIAL_CHANGE, ...EXPECTED_ORDER]);
      // Nothing pushed twice by the two replicas.
      expect(receiver.deliveries - deliveriesBefore).toBe(sets.length);
    } finally {
      await replica.stop('SIGKILL');
    }
  }, 180_000);

  test('When a poll stream’s events are committed and the token service is killed before the receiver polls, then the poll after the restart gets every one, in order', async () => {
    const stream = await createStream({ method: 'urn:ietf:rfc:8936' });
    const account = await p.createServiceAccount(tenant);
    await changeAccount(account);
    await p.restart(p.tokenService, 'SIGKILL');
    // The restarted service listens on the same public port: the stream's poll URL is unchanged.
    const { sets } = await pollSignals(
      stream.delivery.endpoint_url,
      await receiverToken(),
      expectation,
      {
        maxEvents: 100,
        returnImmediately: true,
      },
    );
    expect(sets.map((s) => s.type)).toEqual([CREDENTIAL_CHANGE, ...EXPECTED_ORDER]);
  }, 180_000);
});
