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
import { recordCredentialCompromise } from '../src/data-access/signal-outbox.js';
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
    expect(sets[0]!.event).toMatchObject({ initiating_entity: 'admin' });
    expect(sets[12]!.event).toMatchObject({ initiating_entity: 'system' });
    expect(new Set(sets.map((s) => s.jti)).size).toBe(sets.length);
  });
});
