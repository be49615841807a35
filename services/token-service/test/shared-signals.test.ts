/**
 * Each realm as a Shared Signals transmitter (SSF 1.0, CAEP, RISC): discovery, receivers (service
 * accounts with `receive_signals`) and their scopes, streams, every event type through push
 * (a receiver of the test kit that verifies each SET against the realm's JWKS) and poll, order
 * across a receiver's outage, subjects, status, and the attacker's side: other tenants, hostile
 * stream configurations, forged acknowledgements, bursts, a full backlog.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import {
  eventually,
  pollSignals,
  type SetExpectations,
  type SignalReceiver,
  startSignalReceiver,
  type VerifiedSet,
} from '@plant/test-kit';
import { recordCredentialCompromise } from '../src/signal-outbox/signal-outbox.js';
import { SecurityEventTokenSigner } from '../src/signals/security-event-tokens.js';
import { basic, type Harness, startHarness } from './helpers/harness.js';
import { type CreatedAccount, internal } from './helpers/internal-client.js';
import { tokenRequest } from './helpers/token-client.js';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const T = {
  credentialChange: `${CAEP}/credential-change`,
  sessionRevoked: `${CAEP}/session-revoked`,
  disabled: `${RISC}/account-disabled`,
  enabled: `${RISC}/account-enabled`,
  purged: `${RISC}/account-purged`,
  compromise: `${RISC}/credential-compromise`,
  verification: 'https://schemas.openid.net/secevent/ssf/event-type/verification',
};
const ALL_EVENTS = Object.values(T);
const PUSH = 'urn:ietf:rfc:8935';
const POLL = 'urn:ietf:rfc:8936';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

beforeAll(async () => {
  // Loopback receivers: the documented development switches for private and http: targets.
  h = await startHarness({
    FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
    FEDERATION_ALLOW_HTTP_ISSUERS: 'true',
    SSF_MIN_VERIFICATION_INTERVAL_SECONDS: '0',
    SSF_POLL_WAIT_SECONDS: '30',
  });
  ({ tenant } = await h.createTenant());
  api = internal(h);
});
afterAll(async () => {
  await h?.close();
});

interface Receiver {
  tenant: string;
  account: CreatedAccount;
  token: string;
  expect: SetExpectations;
}

async function tokenOf(
  realm: string,
  account: CreatedAccount,
  scope?: string,
): Promise<request.Response> {
  return tokenRequest(h, realm)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form')
    .send({ grant_type: 'client_credentials', ...(scope !== undefined && { scope }) });
}

async function newReceiver(realm = tenant, scope = 'ssf.manage ssf.read'): Promise<Receiver> {
  const account = await api.createServiceAccount(realm);
  expect((await api.patch(realm, account.client_id, { receive_signals: true })).status).toBe(200);
  const res = await tokenOf(realm, account, scope);
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

const ssf = (r: Pick<Receiver, 'tenant'>) => `/realms/${r.tenant}/ssf/streams`;

function call(
  r: Pick<Receiver, 'tenant' | 'token'>,
  method: 'get' | 'post' | 'patch' | 'put' | 'delete',
  path: string,
) {
  return request(h.publicUrl)
    [method](`${ssf(r)}${path}`)
    .set('authorization', `Bearer ${r.token}`);
}

async function createStream(r: Receiver, body: Record<string, unknown>) {
  const res = await call(r, 'post', '').send(body);
  expect(res.status).toBe(201);
  return res.body as { stream_id: string; delivery: { endpoint_url: string } } & Record<
    string,
    unknown
  >;
}

async function pushStream(r: Receiver, events = ALL_EVENTS) {
  const receiver = await startSignalReceiver(r.expect);
  const stream = await createStream(r, {
    delivery: { method: PUSH, endpoint_url: receiver.url },
    events_requested: events,
  });
  return { receiver, stream };
}

const types = (sets: VerifiedSet[]) => sets.map((s) => s.type);

async function pollStream(r: Receiver) {
  const stream = await createStream(r, {
    delivery: { method: POLL },
    events_requested: ALL_EVENTS,
  });
  return { id: stream.stream_id, url: stream.delivery.endpoint_url };
}

describe('Shared Signals: discovery', () => {
  test('When a receiver reads the configuration at both well-known paths, then the same SSF 1.0 metadata, the interoperability profile members included', async () => {
    const issuer = h.issuer(tenant);
    const [ssfPath, keycloakPath] = await Promise.all([
      request(h.publicUrl).get(`/.well-known/ssf-configuration/realms/${tenant}`),
      request(h.publicUrl).get(`/realms/${tenant}/.well-known/ssf-configuration`),
    ]);
    expect(ssfPath.status).toBe(200);
    expect(keycloakPath.body).toEqual(ssfPath.body);
    expect(ssfPath.body).toEqual({
      spec_version: '1_0',
      issuer,
      jwks_uri: `${issuer}/protocol/openid-connect/certs`,
      delivery_methods_supported: [PUSH, POLL],
      configuration_endpoint: `${issuer}/ssf/streams`,
      status_endpoint: `${issuer}/ssf/streams/status`,
      add_subject_endpoint: `${issuer}/ssf/streams/subjects/add`,
      remove_subject_endpoint: `${issuer}/ssf/streams/subjects/remove`,
      verification_endpoint: `${issuer}/ssf/streams/verify`,
      critical_subject_members: ['iss', 'sub'],
      authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
      default_subjects: 'ALL',
    });
  });

  test('When the realm does not exist, then 404 in the Error shape at both paths', async () => {
    for (const path of [
      '/.well-known/ssf-configuration/realms/no-such-realm',
      '/realms/no-such-realm/.well-known/ssf-configuration',
    ]) {
      const res = await request(h.publicUrl).get(path);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 404,
        body: { error: 404, message: 'Realm not found' },
      });
    }
  });
});

describe('Shared Signals: receivers and scopes', () => {
  test('When an account not allowed to receive signals asks for ssf.manage, then invalid_scope; once allowed, its token carries exactly what it asked', async () => {
    const account = await api.createServiceAccount(tenant);
    const refused = await tokenOf(tenant, account, 'ssf.manage');
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 400,
      error: 'invalid_scope',
    });
    await api.patch(tenant, account.client_id, { receive_signals: true }).expect(200);
    const granted = await tokenOf(tenant, account, 'ssf.manage ssf.read');
    expect({ status: granted.status, scope: granted.body.scope }).toEqual({
      status: 200,
      scope: 'ssf.manage ssf.read',
    });
    // Unasked, the account's role scope only: signals are never in a default token.
    const plain = await tokenOf(tenant, account);
    expect(plain.body.scope).toBe('plants:read');
  });

  test('When the endpoints are called without a token, with a plants token, or with only ssf.read for a change, then 401 and 403 with RFC 6750 challenges', async () => {
    const reader = await newReceiver(tenant, 'ssf.read');
    const noToken = await request(h.publicUrl).get(ssf(reader));
    expect(noToken.status).toBe(401);
    expect(noToken.headers['www-authenticate']).toBe('Bearer realm="ssf"');
    const plants = await tokenOf(tenant, reader.account);
    const wrongScope = await call({ tenant, token: plants.body.access_token }, 'get', '');
    expect(wrongScope.status).toBe(403);
    expect(wrongScope.headers['www-authenticate']).toContain('error="insufficient_scope"');
    const readOnly = await call(reader, 'post', '').send({ delivery: { method: POLL } });
    expect({ status: readOnly.status, body: readOnly.body }).toEqual({
      status: 403,
      body: { error: 403, message: 'This needs scope ssf.manage' },
    });
    expect((await call(reader, 'get', '')).status).toBe(200);
  });

  test('When every body endpoint gets malformed JSON, NUL or a wrong shape without a valid token, then 401 before the body is read, and with one each is 400 in the Error shape', async () => {
    // A tenant of its own: the file's shared one is near its 25 accounts.
    const { tenant: own } = await h.createTenant();
    const r = await newReceiver(own);
    const endpoints = [
      ['post', ''],
      ['patch', ''],
      ['put', ''],
      ['post', '/status'],
      ['post', '/subjects/add'],
      ['post', '/subjects/remove'],
      ['post', '/verify'],
      ['post', '/poll/no-such-stream'],
    ] as const;
    const bodies = ['{"delivery":', '{"description":"a\\u0000b"}', '[1,2,3]'];
    const forged = { tenant: r.tenant, token: 'forged.token.value' };
    const unauthenticated = await Promise.all(
      endpoints.flatMap(([method, path]) =>
        bodies.map((body) => call(forged, method, path).type('json').send(body)),
      ),
    );
    expect(unauthenticated.map((res) => res.status)).toEqual(unauthenticated.map(() => 401));
    const authenticated = await Promise.all(
      endpoints.flatMap(([method, path]) =>
        bodies.map((body) => call(r, method, path).type('json').send(body)),
      ),
    );
    expect(authenticated.map((res) => [res.status, res.body.error])).toEqual(
      authenticated.map(() => [400, 400]),
    );
  });

  test('When an Account Admin turns receive_signals off, then the receiver’s tokens stop working at once', async () => {
    const r = await newReceiver();
    expect((await call(r, 'get', '')).status).toBe(200);
    await api.patch(tenant, r.account.client_id, { receive_signals: false }).expect(200);
    let last: request.Response | undefined;
    await eventually(async () => {
      last = await call(r, 'get', '');
      return last.status === 401;
    }, 'the revoked receiver token is refused');
    expect(last!.headers['www-authenticate']).toContain('error="invalid_token"');
    // And a new token cannot ask for the scopes any more.
    expect((await tokenOf(tenant, r.account, 'ssf.read')).body.error).toBe('invalid_scope');
  });
});

describe('Shared Signals: push, every event type', () => {
  let r: Receiver;
  let receiver: SignalReceiver;
  let streamId: string;
  beforeAll(async () => {
    r = await newReceiver();
    ({
      receiver,
      stream: { stream_id: streamId },
    } = await pushStream(r));
  });
  afterAll(async () => {
    await receiver.close();
  });

  test('When a receiver asks for verification, then a verification SET arrives with the state, the stream as opaque subject, signed by the realm key', async () => {
    await call(r, 'post', '/verify').send({ stream_id: streamId, state: 'hello-1' }).expect(204);
    const [set] = await receiver.waitFor(1);
    expect(set).toMatchObject({
      type: T.verification,
      event: { state: 'hello-1' },
      sub_id: { format: 'opaque', id: streamId },
      iss: h.issuer(tenant),
      aud: r.account.client_id,
      header: { typ: 'secevent+jwt', alg: 'RS256' },
    });
  });

  test('When every change a service account can undergo happens, then each CAEP and RISC event arrives in order, about that account as iss_sub', async () => {
    const before = receiver.received.length;
    const target = await api.createServiceAccount(tenant);
    const sub = target.client_id;
    await api.reset(tenant, sub).expect(200);
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
      format: 'jwk',
    });
    const added = await api.addKey(tenant, sub, { jwk: { ...key, alg: 'ES256' } });
    expect(added.status).toBe(201);
    await api.removeKey(tenant, sub, added.body.id).expect(204);
    const trust = await api.addTrust(tenant, sub, {
      issuer: 'https://issuer.example.com',
      subject: 'system:serviceaccount:ci:deployer',
      audience: h.issuer(tenant),
    });
    expect(trust.status).toBe(201);
    const key2 = await api.addKey(tenant, sub, {
      jwk: {
        ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
        alg: 'ES256',
      },
    });
    expect(key2.status).toBe(201);
    await api.removeTrust(tenant, sub, trust.body.id).expect(204);
    await api.removeSecret(tenant, sub).expect(204);
    await api.patch(tenant, sub, { role: 'Edit' }).expect(200);
    await api.setDisabled(tenant, sub, true).expect(200);
    await api.setDisabled(tenant, sub, false).expect(200);
    await h.service.db.transaction((trx) => recordCredentialCompromise(trx, tenant, sub));
    await api.remove(tenant, sub).expect(204);

    const sets = (await receiver.waitFor(before + 15)).slice(before);
    const issuer = h.issuer(tenant);
    expect(sets.map((s) => [s.type, s.event.credential_type, s.event.change_type])).toEqual([
      [T.credentialChange, 'password', 'create'],
      [T.credentialChange, 'password', 'update'],
      [T.credentialChange, 'client-public-key', 'create'],
      [T.credentialChange, 'client-public-key', 'delete'],
      [T.credentialChange, 'trusted-workload', 'create'],
      [T.credentialChange, 'client-public-key', 'create'],
      [T.credentialChange, 'trusted-workload', 'delete'],
      [T.credentialChange, 'password', 'delete'],
      [T.sessionRevoked, undefined, undefined],
      [T.disabled, undefined, undefined],
      [T.sessionRevoked, undefined, undefined],
      [T.enabled, undefined, undefined],
      [T.compromise, 'password', undefined],
      [T.sessionRevoked, undefined, undefined],
      [T.purged, undefined, undefined],
    ]);
    for (const set of sets) expect(set.sub_id).toEqual({ format: 'iss_sub', iss: issuer, sub });
    // Every event with a reason says it in reason_admin (CAEP 1.0 §2), a credential change too.
    expect(sets.map((s) => s.event.reason_admin)).toEqual([
      { en: "The service account's client secret was created" },
      { en: "The service account's client secret was reset" },
      { en: 'A key of the service account was added' },
      { en: 'A key of the service account was removed' },
      { en: 'A trusted workload of the service account was added' },
      { en: 'A key of the service account was added' },
      { en: 'A trusted workload of the service account was removed' },
      { en: "The service account's client secret was removed" },
      { en: "The service account's role changed; its older tokens are revoked" },
      undefined,
      { en: 'The service account was disabled' },
      undefined,
      { en: 'The credential was reported leaked and has been revoked' },
      { en: 'The service account was deleted' },
      undefined,
    ]);
    expect(sets[0]!.event).toMatchObject({ initiating_entity: 'admin' });
    expect(sets[12]!.event).toMatchObject({ initiating_entity: 'system' });
    expect(new Set(sets.map((s) => s.jti)).size).toBe(sets.length);
  });
});

describe('Shared Signals: poll', () => {
  test('When a receiver polls, then the SETs come oldest first, maxEvents at a time with moreAvailable, and stay until acknowledged', async () => {
    const r = await newReceiver();
    const { id, url } = await pollStream(r);
    expect(url).toBe(`${h.issuer(tenant)}/ssf/streams/poll/${id}`);
    const target = await api.createServiceAccount(tenant);
    await api.reset(tenant, target.client_id).expect(200);
    await api.setDisabled(tenant, target.client_id, true).expect(200);
    const first = await pollSignals(url, r.token, r.expect, {
      maxEvents: 2,
      returnImmediately: true,
    });
    expect({ types: types(first.sets), more: first.moreAvailable }).toEqual({
      types: [T.credentialChange, T.credentialChange],
      more: true,
    });
    // Not acknowledged: the same two again.
    const again = await pollSignals(url, r.token, r.expect, {
      maxEvents: 2,
      returnImmediately: true,
    });
    expect(again.sets.map((s) => s.jti)).toEqual(first.sets.map((s) => s.jti));
    const rest = await pollSignals(url, r.token, r.expect, {
      ack: first.sets.map((s) => s.jti),
      maxEvents: 10,
      returnImmediately: true,
    });
    expect({ types: types(rest.sets), more: rest.moreAvailable }).toEqual({
      types: [T.disabled, T.sessionRevoked],
      more: false,
    });
    const drained = await pollSignals(url, r.token, r.expect, {
      ack: rest.sets.map((s) => s.jti),
      returnImmediately: true,
    });
    expect(drained.sets).toEqual([]);
  });

  test('When a long poll waits and a change commits, then the poll answers with its SET', async () => {
    const r = await newReceiver();
    const { url } = await pollStream(r);
    const target = await api.createServiceAccount(tenant);
    const first = await pollSignals(url, r.token, r.expect, { returnImmediately: true });
    const waiting = pollSignals(url, r.token, r.expect, { ack: first.sets.map((s) => s.jti) });
    await eventually(() => h.service.signals.delivery.waiting > 0, 'the long poll waits');
    await api.reset(tenant, target.client_id).expect(200);
    const answer = await waiting;
    expect(answer.sets.map((s) => [s.type, s.sub_id.sub])).toEqual([
      [T.credentialChange, target.client_id],
    ]);
  });

  test('When a poll acknowledges jtis of another stream or made up, then nothing of that stream or this one goes', async () => {
    const a = await newReceiver();
    const b = await newReceiver();
    const streamA = await pollStream(a);
    const streamB = await pollStream(b);
    await api.createServiceAccount(tenant);
    const ofA = await pollSignals(streamA.url, a.token, a.expect, { returnImmediately: true });
    const ofB = await pollSignals(streamB.url, b.token, b.expect, { returnImmediately: true });
    expect(ofA.sets).toHaveLength(1);
    await pollSignals(streamB.url, b.token, b.expect, {
      ack: [...ofA.sets.map((s) => s.jti), 'forged-jti', '00000000-0000-0000-0000-000000000000'],
      returnImmediately: true,
    });
    const stillA = await pollSignals(streamA.url, a.token, a.expect, { returnImmediately: true });
    const stillB = await pollSignals(streamB.url, b.token, b.expect, { returnImmediately: true });
    expect(stillA.sets.map((s) => s.jti)).toEqual(ofA.sets.map((s) => s.jti));
    expect(stillB.sets.map((s) => s.jti)).toEqual(ofB.sets.map((s) => s.jti));
  });

  test('When maxEvents is huge, negative or not a number, then at most 100 SETs, or 400', async () => {
    const r = await newReceiver();
    const { url } = await pollStream(r);
    const path = new URL(url).pathname;
    const huge = await request(h.publicUrl)
      .post(path)
      .set('authorization', `Bearer ${r.token}`)
      .send({ maxEvents: 1e12, returnImmediately: true });
    expect(huge.status).toBe(200);
    expect(Object.keys(huge.body.sets).length).toBeLessThanOrEqual(100);
    for (const maxEvents of [-1, 1.5, '10', null]) {
      const res = await request(h.publicUrl)
        .post(path)
        .set('authorization', `Bearer ${r.token}`)
        .send({ maxEvents, returnImmediately: true });
      expect({ maxEvents, status: res.status, error: res.body.error }).toEqual({
        maxEvents,
        status: 400,
        error: 400,
      });
    }
  });
});

describe('Shared Signals: order across a receiver outage, status and subjects', () => {
  test('When the push receiver is down for a while and comes back, then every event arrives, in order, each once', async () => {
    const r = await newReceiver();
    const { receiver, stream } = await pushStream(r);
    try {
      const target = await api.createServiceAccount(tenant);
      await receiver.waitFor(1);
      await receiver.down();
      const sub = target.client_id;
      await api.reset(tenant, sub).expect(200);
      await api.setDisabled(tenant, sub, true).expect(200);
      await api.setDisabled(tenant, sub, false).expect(200);
      await api.patch(tenant, sub, { role: 'Edit' }).expect(200);
      await api.reset(tenant, sub).expect(200);
      await eventually(async () => {
        const status = await call(r, 'get', `/status?stream_id=${stream.stream_id}`);
        return status.body.last_delivery_error !== undefined && status.body.queued_events === 6;
      }, 'the stream records the failed push and holds the events');
      await receiver.up();
      const sets = await receiver.waitFor(7);
      expect(types(sets)).toEqual([
        T.credentialChange,
        T.credentialChange,
        T.disabled,
        T.sessionRevoked,
        T.enabled,
        T.sessionRevoked,
        T.credentialChange,
      ]);
      await eventually(async () => {
        const status = await call(r, 'get', `/status?stream_id=${stream.stream_id}`);
        return status.body.queued_events === 0;
      }, 'the queue drains');
    } finally {
      await receiver.close();
    }
  });

  test('When a stream is paused, then events are held; enabled again, then they arrive; disabled, then nothing is held', async () => {
    const r = await newReceiver();
    const { receiver, stream } = await pushStream(r);
    try {
      const id = stream.stream_id;
      const paused = await call(r, 'post', '/status').send({
        stream_id: id,
        status: 'paused',
        reason: 'maintenance',
      });
      expect(paused.body).toMatchObject({ stream_id: id, status: 'paused', reason: 'maintenance' });
      const target = await api.createServiceAccount(tenant);
      await eventually(
        async () => (await call(r, 'get', `/status?stream_id=${id}`)).body.queued_events === 1,
        'held',
      );
      expect(receiver.deliveries).toBe(0);
      await call(r, 'post', '/status').send({ stream_id: id, status: 'enabled' }).expect(200);
      const [set] = await receiver.waitFor(1);
      expect(set!.sub_id.sub).toBe(target.client_id);
      await call(r, 'post', '/status').send({ stream_id: id, status: 'disabled' }).expect(200);
      await api.reset(tenant, target.client_id).expect(200);
      expect((await call(r, 'get', `/status?stream_id=${id}`)).body).toMatchObject({
        status: 'disabled',
        queued_events: 0,
      });
    } finally {
      await receiver.close();
    }
  });

  test('When subjects are added, then the stream carries only them; a removed subject is left out; another issuer or format is refused', async () => {
    const r = await newReceiver();
    const { url, id } = await pollStream(r);
    const chosen = await api.createServiceAccount(tenant);
    const other = await api.createServiceAccount(tenant);
    const issuer = h.issuer(tenant);
    const subject = (sub: string) => ({ format: 'iss_sub', iss: issuer, sub });
    await pollSignals(url, r.token, r.expect, {
      ack: (await pollSignals(url, r.token, r.expect, { returnImmediately: true })).sets.map(
        (s) => s.jti,
      ),
      returnImmediately: true,
    });
    await call(r, 'post', '/subjects/add')
      .send({ stream_id: id, subject: subject(chosen.client_id) })
      .expect(200);
    await api.reset(tenant, other.client_id).expect(200);
    await api.reset(tenant, chosen.client_id).expect(200);
    const only = await pollSignals(url, r.token, r.expect, { returnImmediately: true });
    expect(only.sets.map((s) => s.sub_id.sub)).toEqual([chosen.client_id]);
    await call(r, 'post', '/subjects/remove')
      .send({ stream_id: id, subject: subject(chosen.client_id) })
      .expect(204);
    await api.reset(tenant, chosen.client_id).expect(200);
    const none = await pollSignals(url, r.token, r.expect, {
      ack: only.sets.map((s) => s.jti),
      returnImmediately: true,
    });
    expect(none.sets).toEqual([]);
    for (const bad of [
      { format: 'iss_sub', iss: h.issuer('another-realm'), sub: chosen.client_id },
      { format: 'email', email: 'a@example.com' },
      { format: 'opaque', id: chosen.client_id },
    ]) {
      const res = await call(r, 'post', '/subjects/add').send({ stream_id: id, subject: bad });
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
    }
  });
});

describe('Shared Signals: the signer’s keys', () => {
  test('When SETs are signed for more realms than the signer holds keys of, then it holds at most its bound and every SET verifies with its realm’s published key', async () => {
    const signer = new SecurityEventTokenSigner(h.service.identity, h.config.AUTH_URL, 2);
    const event = {
      seq: '1',
      jti: 'jti-1',
      event_type: T.verification,
      sub: null,
      event: {},
      created_at: new Date(),
    };
    for (let i = 0; i < 3; i += 1) {
      const { tenant: realm } = await h.createTenant();
      const set = await signer.sign(realm, 'ssf-x', 'aud-x', event);
      expect(signer.size).toBeLessThanOrEqual(2);
      const { kid } = JSON.parse(Buffer.from(set.split('.')[0]!, 'base64url').toString());
      const jwks = await request(h.publicUrl).get(`/realms/${realm}/protocol/openid-connect/certs`);
      expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
    }
    expect(signer.size).toBe(2);
  });
});

describe('Shared Signals: an owner no longer allowed', () => {
  test('When an Account Admin turns receive_signals off, then the account’s push stream gets nothing of that time; turned on again, it carries what happens next', async () => {
    const r = await newReceiver();
    const { receiver } = await pushStream(r, [T.credentialChange]);
    try {
      const target = await api.createServiceAccount(tenant);
      await receiver.waitFor(1);
      await api.patch(tenant, r.account.client_id, { receive_signals: false }).expect(200);
      await api.reset(tenant, target.client_id).expect(200);
      await api.patch(tenant, r.account.client_id, { receive_signals: true }).expect(200);
      await api.setDisabled(tenant, target.client_id, true).expect(200);
      await api.removeSecret(tenant, target.client_id).expect(409);
      await api.reset(tenant, target.client_id).expect(200);
      const sets = await receiver.waitFor(2);
      expect(sets.map((s) => [s.type, s.event.change_type])).toEqual([
        [T.credentialChange, 'create'],
        [T.credentialChange, 'update'],
      ]);
      // The reset while it was off never queued: once these two are removed, nothing is left.
      const held = () =>
        h.service
          .db('ssf_stream_events')
          .whereIn(
            'stream_id',
            h.service.db('ssf_streams').where({ owner_sub: r.account.client_id }).select('id'),
          );
      await eventually(async () => (await held()).length === 0, 'the queue is empty');
      expect(receiver.received).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });
});

describe('Shared Signals: streams are their owner’s', () => {
  test('When another receiver of the realm or of another tenant names a stream, then 404 everywhere, and the stream is unchanged', async () => {
    const owner = await newReceiver();
    const { id, url } = await pollStream(owner);
    const neighbour = await newReceiver();
    const { tenant: otherTenant } = await h.createTenant();
    const stranger = await newReceiver(otherTenant);
    for (const intruder of [neighbour, { ...stranger, tenant }]) {
      const attempts = [
        call(intruder, 'get', `?stream_id=${id}`),
        call(intruder, 'patch', '').send({ stream_id: id, description: 'mine now' }),
        call(intruder, 'put', '').send({ stream_id: id, delivery: { method: POLL } }),
        call(intruder, 'delete', `?stream_id=${id}`),
        call(intruder, 'get', `/status?stream_id=${id}`),
        call(intruder, 'post', '/status').send({ stream_id: id, status: 'disabled' }),
        call(intruder, 'post', '/verify').send({ stream_id: id }),
        call(intruder, 'post', '/subjects/add').send({
          stream_id: id,
          subject: { format: 'iss_sub', iss: h.issuer(tenant), sub: intruder.account.client_id },
        }),
        request(h.publicUrl)
          .post(new URL(url).pathname)
          .set('authorization', `Bearer ${intruder.token}`)
          .send({ returnImmediately: true }),
      ];
      const statuses = (await Promise.all(attempts)).map((res) => res.status);
      // The neighbour: no such stream (404). The stranger's token on this realm: not of this realm (401).
      expect(new Set(statuses)).toEqual(new Set([intruder === neighbour ? 404 : 401]));
    }
    const own = await call(owner, 'get', `?stream_id=${id}`);
    expect(own.status).toBe(200);
    expect(own.body.description).toBeUndefined();
    expect((await call(owner, 'get', `/status?stream_id=${id}`)).body.status).toBe('enabled');
    // And the list shows each receiver its own streams only.
    expect((await call(neighbour, 'get', '')).body).toEqual([]);
  });

  test('When another tenant’s account changes, then no event of it reaches this tenant’s stream', async () => {
    const r = await newReceiver();
    const { url } = await pollStream(r);
    const { tenant: otherTenant } = await h.createTenant();
    const foreign = await api.createServiceAccount(otherTenant);
    await api.reset(otherTenant, foreign.client_id).expect(200);
    const mine = await api.createServiceAccount(tenant);
    const sets = await pollSignals(url, r.token, r.expect, { returnImmediately: true });
    expect(sets.sets.map((s) => s.sub_id.sub)).toEqual([mine.client_id]);
  });
});

describe('Shared Signals: text Postgres cannot store', () => {
  test('When a receiver sends NUL in a stream id, a subject, a state or a description, in a body, a query or the poll path, then 400 or 404 in the Error shape, never a 500, and the stream is unchanged', async () => {
    // A tenant of its own: the file's shared one is near its 25 accounts.
    const { tenant: own } = await h.createTenant();
    const r = await newReceiver(own);
    const { id, url } = await pollStream(r);
    const nul = 'a\u0000b';
    const attempts = [
      call(r, 'get', `?stream_id=${encodeURIComponent(nul)}`),
      call(r, 'get', `/status?stream_id=${encodeURIComponent(nul)}`),
      call(r, 'delete', `?stream_id=${encodeURIComponent(nul)}`),
      call(r, 'post', '/verify').send({ stream_id: nul }),
      call(r, 'post', '/verify').send({ stream_id: id, state: nul }),
      call(r, 'patch', '').send({ stream_id: id, description: nul }),
      call(r, 'post', '/status').send({ stream_id: nul, status: 'paused' }),
      call(r, 'post', '/status').send({ stream_id: id, status: 'paused', reason: nul }),
      call(r, 'post', '/subjects/add').send({
        stream_id: id,
        subject: { format: 'iss_sub', iss: h.issuer(own), sub: nul },
      }),
      call(r, 'post', '').send({ delivery: { method: POLL }, description: nul }),
      call(r, 'post', '').send({ delivery: { method: POLL }, [nul]: true }),
      request(h.publicUrl)
        .post(`${new URL(url).pathname.replace(id, encodeURIComponent(nul))}`)
        .set('authorization', `Bearer ${r.token}`)
        .send({ returnImmediately: true }),
      request(h.publicUrl)
        .post(new URL(url).pathname)
        .set('authorization', `Bearer ${r.token}`)
        .send({ returnImmediately: true, ack: [nul] }),
    ];
    // Each answer by its place in `attempts`, so a failure names the attempt.
    const answers = (await Promise.all(attempts)).map((res, attempt) => ({
      attempt,
      refused: res.status === 400 || res.status === 404,
      body: res.body,
    }));
    expect(answers).toEqual(
      answers.map(({ attempt }) => ({
        attempt,
        refused: true,
        body: { error: expect.any(Number), message: expect.any(String) },
      })),
    );
    const stream = await call(r, 'get', `?stream_id=${id}`);
    expect(stream.status).toBe(200);
    expect(stream.body.description).toBeUndefined();
    expect((await call(r, 'get', `/status?stream_id=${id}`)).body.status).toBe('enabled');
  });
});

describe('Shared Signals: stream configuration', () => {
  test('When a stream is created, read, patched, replaced and deleted, then each answer is the SSF configuration; the push Authorization header is never shown and is sealed at rest', async () => {
    // A tenant of its own: the file's first tenant is near its 25 accounts.
    const { tenant: own } = await h.createTenant();
    const r = await newReceiver(own);
    const tenant = own;
    const authorization = `Bearer receiver-secret-${Math.random().toString(36).slice(2)}`;
    const receiver = await startSignalReceiver(r.expect, { authorization });
    try {
      const created = await createStream(r, {
        delivery: { method: PUSH, endpoint_url: receiver.url, authorization_header: authorization },
        events_requested: [T.credentialChange, 'https://example.com/unknown-event'],
        description: 'SIEM',
      });
      expect(created).toEqual({
        stream_id: expect.stringMatching(/^ssf-[0-9a-f]{32}$/),
        iss: h.issuer(tenant),
        aud: r.account.client_id,
        events_supported: ALL_EVENTS,
        events_requested: [T.credentialChange, 'https://example.com/unknown-event'],
        events_delivered: [T.credentialChange],
        delivery: { method: PUSH, endpoint_url: receiver.url },
        min_verification_interval: 0,
        description: 'SIEM',
      });
      const id = created.stream_id;
      const stored = await h.service.db('ssf_streams').where({ id }).first();
      expect(JSON.stringify(stored)).not.toContain(authorization.slice(7));
      expect(h.logs.join('\n')).not.toContain(authorization.slice(7));
      await call(r, 'post', '/verify').send({ stream_id: id }).expect(204);
      await api.createServiceAccount(tenant);
      // The receiver demands the header, so these arrived with it; verification is always delivered.
      expect(types(await receiver.waitFor(2))).toEqual([T.verification, T.credentialChange]);
      const patched = await call(r, 'patch', '').send({ stream_id: id, description: 'SIEM 2' });
      expect(patched.body).toMatchObject({
        description: 'SIEM 2',
        events_delivered: [T.credentialChange],
      });
      const replaced = await call(r, 'put', '').send({ stream_id: id, delivery: { method: POLL } });
      expect(replaced.body).toMatchObject({
        delivery: { method: POLL, endpoint_url: `${h.issuer(tenant)}/ssf/streams/poll/${id}` },
        events_requested: [],
        events_delivered: [],
      });
      expect(replaced.body.description).toBeUndefined();
      await call(r, 'delete', `?stream_id=${id}`).expect(204);
      expect((await call(r, 'get', `?stream_id=${id}`)).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });
});

describe('Shared Signals: hostile configurations and bursts', () => {
  let strict: Harness;
  let saved: Harness;
  beforeAll(async () => {
    // Production's address rules; a small backlog and the verification interval on.
    strict = await startHarness({
      SSF_STREAM_BACKLOG: '10',
      SSF_STREAMS_PER_TENANT: '3',
      SSF_MIN_VERIFICATION_INTERVAL_SECONDS: '60',
      SSF_POLL_MAX_WAITERS: '2',
    });
    saved = h;
    h = strict;
    api = internal(h);
    ({ tenant } = await h.createTenant());
  });
  afterAll(async () => {
    h = saved;
    api = internal(h);
    await strict?.close();
  });

  test('When a push URL is private, loopback, link-local, http:, carries credentials or is not a URL, then 400 and no stream', async () => {
    const r = await newReceiver();
    for (const endpoint_url of [
      'https://127.0.0.1/events',
      'https://10.1.2.3/events',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/events',
      'https://[::ffff:192.168.0.1]/events',
      'http://203.0.113.10/events',
      'https://user:pw@receiver.example.com/events',
      'ftp://receiver.example.com/',
      'not a url',
    ]) {
      const res = await call(r, 'post', '').send({ delivery: { method: PUSH, endpoint_url } });
      expect({ endpoint_url, status: res.status, error: res.body.error }).toEqual({
        endpoint_url,
        status: 400,
        error: 400,
      });
    }
    expect((await call(r, 'get', '')).body).toEqual([]);
  });

  test('When a configuration is oversized, malformed or smuggles a header, then 400 and nothing stored', async () => {
    const r = await newReceiver();
    for (const body of [
      {
        delivery: { method: POLL },
        events_requested: Array.from({ length: 33 }, (_, i) => `urn:x:${i}`),
      },
      { delivery: { method: POLL }, events_requested: ['x'.repeat(257)] },
      { delivery: { method: POLL }, description: 'd'.repeat(256) },
      { delivery: { method: 'urn:example:carrier-pigeon' } },
      { delivery: { method: PUSH } },
      {
        delivery: {
          method: PUSH,
          endpoint_url: 'https://receiver.example.com/',
          authorization_header: 'Bearer x\r\nX-Evil: 1',
        },
      },
      { events_requested: [T.credentialChange] },
      [],
    ]) {
      const res = await call(r, 'post', '').send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect((await call(r, 'get', '')).body).toEqual([]);
  });

  test('When a tenant has its stream limit, then the next stream is 409', async () => {
    const r = await newReceiver();
    for (let i = 0; i < 3; i += 1) await createStream(r, { delivery: { method: POLL } });
    const res = await call(r, 'post', '').send({ delivery: { method: POLL } });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 409,
      body: { error: 409, message: "The tenant's stream limit is reached" },
    });
    for (const stream of (await call(r, 'get', '')).body as { stream_id: string }[])
      await call(r, 'delete', `?stream_id=${stream.stream_id}`).expect(204);
  });

  test('When verification is requested in a burst, then one is queued and the rest are 429 with Retry-After', async () => {
    const r = await newReceiver();
    const { id } = await pollStream(r);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call(r, 'post', '/verify').send({ stream_id: id })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([204, ...Array(9).fill(429)]);
    expect(answers.find((a) => a.status === 429)!.headers['retry-after']).toBe('60');
    await call(r, 'delete', `?stream_id=${id}`).expect(204);
  });

  test('When more long polls come than a replica holds, then the extra one answers at once with nothing, and the waiting ones get the next event', async () => {
    const r = await newReceiver();
    const { id, url } = await pollStream(r);
    const waiting = [pollSignals(url, r.token, r.expect), pollSignals(url, r.token, r.expect)];
    await eventually(() => h.service.signals.delivery.waiting === 2, 'two polls wait');
    const extra = await pollSignals(url, r.token, r.expect);
    expect({ sets: extra.sets, waiting: h.service.signals.delivery.waiting }).toEqual({
      sets: [],
      waiting: 2,
    });
    const created = await api.createServiceAccount(tenant);
    for (const answer of await Promise.all(waiting))
      expect(answer.sets.map((set) => set.sub_id.sub)).toEqual([created.client_id]);
    expect(h.service.signals.delivery.waiting).toBe(0);
    await call(r, 'delete', `?stream_id=${id}`).expect(204);
  });

  test('When a receiver adds more subjects than a stream holds, then the one past 100 is 409 and changing a known one still works', async () => {
    const r = await newReceiver();
    const { id } = await pollStream(r);
    const subject = (i: number) => ({ format: 'iss_sub', iss: h.issuer(tenant), sub: `sa-${i}` });
    for (let i = 0; i < 100; i += 1)
      await call(r, 'post', '/subjects/add')
        .send({ stream_id: id, subject: subject(i) })
        .expect(200);
    const over = await call(r, 'post', '/subjects/add').send({
      stream_id: id,
      subject: subject(100),
    });
    expect({ status: over.status, body: over.body }).toEqual({
      status: 409,
      body: { error: 409, message: 'The stream holds the most subjects it may' },
    });
    await call(r, 'post', '/subjects/remove')
      .send({ stream_id: id, subject: subject(7) })
      .expect(204);
    await call(r, 'delete', `?stream_id=${id}`).expect(204);
  });

  test('When a stream’s backlog is full, then further events are dropped and counted in its status and the metric, and the changes themselves succeed', async () => {
    const r = await newReceiver();
    const { id, url } = await pollStream(r);
    const target = await api.createServiceAccount(tenant);
    for (let i = 0; i < 11; i += 1) await api.reset(tenant, target.client_id).expect(200);
    const status = await call(r, 'get', `/status?stream_id=${id}`);
    expect(status.body).toEqual({
      stream_id: id,
      status: 'enabled',
      reason: "2 events were dropped: the stream's backlog of 10 was full",
      queued_events: 10,
      backlog_limit: 10,
      dropped_events: 2,
    });
    const metrics = await request(h.managementUrl).get('/metrics');
    const dropped = /^ssf_stream_events_dropped\{[^}]*\} (\d+)$/m.exec(metrics.text);
    expect(Number(dropped?.[1])).toBeGreaterThanOrEqual(2);
    // The ten kept are the oldest: the account's creation first.
    const sets = await pollSignals(url, r.token, r.expect, {
      maxEvents: 100,
      returnImmediately: true,
    });
    expect(sets.sets).toHaveLength(10);
    expect(sets.sets[0]!.event.change_type).toBe('create');
    await call(r, 'delete', `?stream_id=${id}`).expect(204);
  });
});
