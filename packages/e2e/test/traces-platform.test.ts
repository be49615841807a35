/**
 * Traces across processes: account-admin, the token service and two Plant Stores run with
 * tracing on (OTLP/HTTP to a receiver of the test kit), and a service account's life — create,
 * token, list, reset, refused — is driven as a client would. Each request carries a traceparent
 * the test chose, so its trace is known: the spans must form one tree under the test's span,
 * crossing processes with the right parents, and the reset's trace must reach each Plant Store
 * through the revocation message. Every exported byte is scanned for the secrets of the flow.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  dpopKey,
  eventually,
  PLANT_STORE_AUDIENCE,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
  type ServiceProcess,
} from '@plant/test-kit';
import { startPlatform, TEST_SECRETS, USER_PASSWORD, type Platform } from '../src/index.js';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

let receiver: OtlpReceiver;
let p: Platform;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  p = await startPlatform({
    plantStores: 2,
    accountAdmin: true,
    // Spans out every 100 ms rather than the SDK's 5 s: the test waits on them.
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await receiver?.close();
});

/** A trace the test starts: its id, and the traceparent of the test's own (client) span. */
function newTrace(): { traceId: string; parentId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

interface Sent {
  status: number;
  body: unknown;
  traceId: string;
  parentId: string;
}

async function send(url: string, init: RequestInit & { headers: Record<string, string> }) {
  const trace = newTrace();
  const res = await fetch(url, {
    ...init,
    headers: { ...init.headers, traceparent: trace.traceparent },
  });
  const text = await res.text();
  const sent: Sent = {
    status: res.status,
    body: text === '' ? undefined : JSON.parse(text),
    ...trace,
  };
  return sent;
}

const spansOf = (traceId: string) => receiver.spans().filter((s) => s.traceId === traceId);

/** The trace is one tree: one span under the test's, every other under a span of the same trace. */
function assertOneTree(sent: Sent): ReceivedSpan[] {
  const spans = spansOf(sent.traceId);
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => s.parentSpanId === sent.parentId);
  expect(roots).toEqual([expect.objectContaining({ kind: SERVER })]);
  for (const span of spans)
    if (span !== roots[0])
      expect({ span: span.name, parentKnown: ids.has(span.parentSpanId!) }).toEqual({
        span: span.name,
        parentKnown: true,
      });
  return spans;
}

/** The span of `service` of `kind` whose parent is a span of `parentService` (a hop between processes). */
function hop(spans: ReceivedSpan[], parentService: string, service: string): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return spans.filter(
    (s) =>
      s.service === service &&
      s.kind === SERVER &&
      byId.get(s.parentSpanId ?? '')?.service === parentService &&
      byId.get(s.parentSpanId ?? '')?.kind === CLIENT,
  );
}

describe("Traces of a service account's life across the processes", () => {
  let tenant: string;
  let adminToken: string;
  const flow: Record<string, Sent> = {};
  const secrets: string[] = [USER_PASSWORD, ...Object.values(TEST_SECRETS)];

  beforeAll(async () => {
    tenant = await p.createTenant('trc');
    adminToken = await p.userToken(tenant, `admin@${tenant}.test`);
    secrets.push(adminToken);
    const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    flow.create = await send(`${p.portalUrl}/api/v1/service-accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'traced' }),
    });
    const { client_id: clientId, secret } = flow.create.body as {
      client_id: string;
      secret: string;
    };
    secrets.push(secret);
    flow.token = await send(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      }).toString(),
    });
    const accessToken = (flow.token.body as { access_token: string }).access_token;
    secrets.push(accessToken);
    const bearer = { authorization: `Bearer ${accessToken}` };
    flow.list = await send(`${p.plantStores[0]!.url}/plants`, { headers: bearer });
    flow.reset = await send(`${p.portalUrl}/api/v1/service-accounts/${clientId}/reset-secret`, {
      method: 'POST',
      headers: admin,
      body: '{}',
    });
    secrets.push((flow.reset.body as { secret: string }).secret);
    // The event reaches both stores asynchronously: ask until each refuses (each ask its own trace).
    for (const [i, store] of p.plantStores.entries())
      await eventually(async () => {
        flow[`refused${i}`] = await send(`${store.url}/plants`, { headers: bearer });
        return flow[`refused${i}`]!.status === 401;
      }, `Plant Store ${i} refuses the reset account's token`);
    // A DPoP-bound token and its proofs go through the same processes: they must not be exported either.
    const key = dpopKey();
    const bound = await p.createServiceAccount(tenant, { role: 'View' });
    await p.updateServiceAccount(tenant, bound.clientId, { dpop_bound_access_tokens: true });
    const dpopToken = await p.grantToken(tenant, bound, {}, { dpop: key });
    const proof = key.proof({
      htm: 'GET',
      htu: `${PLANT_STORE_AUDIENCE}/plants`,
      token: dpopToken,
    });
    flow.dpop = await send(`${p.plantStores[1]!.url}/plants`, {
      headers: { authorization: `DPoP ${dpopToken}`, dpop: proof },
    });
    secrets.push(bound.secret, dpopToken, proof);
    await eventually(
      () =>
        Object.values(flow).every((sent) =>
          spansOf(sent.traceId).some((s) => s.parentSpanId === sent.parentId),
        ) &&
        spansOf(flow.reset!.traceId).filter(
          (s) => s.kind === CONSUMER && s.service === 'plant-store',
        ).length === 2,
      'the spans of every request and of both revocation arrivals were exported',
    );
  }, 120_000);

  test('When the flow ran, then each request answered as it should', () => {
    expect(Object.fromEntries(Object.entries(flow).map(([k, v]) => [k, v.status]))).toEqual({
      create: 201,
      token: 200,
      list: 200,
      reset: 200,
      refused0: 401,
      refused1: 401,
      dpop: 200,
    });
  });

  test("When an account is created in the portal, then one trace holds account-admin and the token service's internal API under the caller's span", () => {
    const spans = assertOneTree(flow.create!);
    expect(spans.find((s) => s.parentSpanId === flow.create!.parentId)?.service).toBe(
      'account-admin',
    );
    expect(hop(spans, 'account-admin', 'token-service').map((s) => s.name)).toContain(
      'POST /internal/v1/realms/:tenant/service-accounts',
    );
    expect(spans.some((s) => s.service === 'token-service' && s.name.startsWith('pg.query'))).toBe(
      true,
    );
  });

  test("When a token is granted and used, then the grant is one trace in the token service, and the list one trace from the Plant Store to the token service's key endpoint", () => {
    const grant = assertOneTree(flow.token!);
    expect(new Set(grant.map((s) => s.service))).toEqual(new Set(['token-service']));
    const list = assertOneTree(flow.list!);
    expect(list.find((s) => s.parentSpanId === flow.list!.parentId)?.service).toBe('plant-store');
    // A token the account obtained itself: nothing of a call on behalf of another on its span.
    expect(
      list.find((s) => s.parentSpanId === flow.list!.parentId)?.attributes['plantstore.actors'],
    ).toBeUndefined();
    // The store meets the tenant's key for the first time here: its fetch is in the same trace.
    expect(hop(list, 'plant-store', 'token-service').map((s) => s.name)).toContain(
      'GET /internal/v1/realms/:tenant/jwks',
    );
    expect(
      list.some(
        (s) =>
          s.name === 'pg.query:plants-list-first plantstore_traces' ||
          s.name.startsWith('pg.query'),
      ),
    ).toBe(true);
  });

  test('When a secret is reset, then its trace reaches each Plant Store replica through the revocation message', () => {
    const spans = assertOneTree(flow.reset!);
    expect(hop(spans, 'account-admin', 'token-service').map((s) => s.name)).toContain(
      'POST /internal/v1/realms/:tenant/service-accounts/:client_id/reset-secret',
    );
    const publish = spans.filter((s) => s.kind === PRODUCER);
    expect(publish).toEqual([
      expect.objectContaining({ service: 'token-service', name: 'revocation publish' }),
    ]);
    // Every resource server applies it: account-admin and the token service's introspection too.
    expect(new Set(spans.filter((s) => s.kind === CONSUMER).map((s) => s.service))).toEqual(
      new Set(['plant-store', 'account-admin', 'token-service']),
    );
    const arrivals = spans.filter((s) => s.kind === CONSUMER && s.service === 'plant-store');
    expect(arrivals).toEqual([
      expect.objectContaining({
        service: 'plant-store',
        name: 'revocation apply',
        parentSpanId: publish[0]!.spanId,
      }),
      expect.objectContaining({
        service: 'plant-store',
        name: 'revocation apply',
        parentSpanId: publish[0]!.spanId,
      }),
    ]);
    // Each replica's process, as its refusal's spans name it.
    const storeInstances = new Set(
      ['refused0', 'refused1'].map(
        (key) =>
          spansOf(flow[key]!.traceId).find((s) => s.parentSpanId === flow[key]!.parentId)!.instance,
      ),
    );
    expect(storeInstances.size).toBe(2);
    expect(new Set(arrivals.map((s) => s.instance))).toEqual(storeInstances);
    expect(arrivals.map((s) => s.attributes['plantstore.revocation.changed'])).toEqual([
      true,
      true,
    ]);
  });

  test('When a revoked token is refused, then the refusal is one trace at that replica', () => {
    for (const key of ['refused0', 'refused1']) {
      const spans = assertOneTree(flow[key]!);
      expect(spans.find((s) => s.parentSpanId === flow[key]!.parentId)).toMatchObject({
        service: 'plant-store',
        attributes: expect.objectContaining({ 'http.response.status_code': 401 }),
      });
    }
  });

  test('When a request is traced, then its log lines carry its trace_id and span_id', async () => {
    const logs = await p.plantStores[0]!.flushedLogs();
    const root = spansOf(flow.list!.traceId).find((s) => s.parentSpanId === flow.list!.parentId)!;
    const lines = logs
      .filter((line) => line.includes(flow.list!.traceId))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ trace_id: flow.list!.traceId, span_id: root.spanId }),
    );
  });

  test('When every exported span of the flow is read, then no secret, password, bearer value, proof or query value is in it', () => {
    const exported = receiver.bodies().join('\n');
    expect(exported.length).toBeGreaterThan(0);
    for (const secret of secrets)
      expect({ found: exported.includes(secret), length: secret.length }).toEqual({
        found: false,
        length: secret.length,
      });
    expect(exported).not.toMatch(/\b(Bearer|DPoP|Basic) [A-Za-z0-9._~+/-]{8,}/);
    expect(exported).not.toMatch(/[?&][A-Za-z_]+=(?!REDACTED)[^&"\s]/);
    expect(exported).not.toMatch(/"(http\.request\.header|http\.response\.header)\./);
    expect(receiver.refused()).toBe(0);
  });

  test('When the management port is scraped and probed, then no trace is made of it', async () => {
    const store = p.plantStores[0]!;
    for (const path of ['/metrics', '/readyz', '/healthz'])
      await fetch(`${store.managementUrl}${path}`);
    // Exported after the scrape: once its spans are in, a scrape's span would be too.
    const after = await send(`${store.url}/plants`, { headers: {} });
    await eventually(() => spansOf(after.traceId).length > 0, 'the later request was exported');
    const management = /\/(metrics|readyz|healthz)$/;
    expect(
      receiver
        .spans()
        .filter(
          (s) => management.test(s.name) || management.test(String(s.attributes['http.route'])),
        ),
    ).toEqual([]);
  });
});

describe('Traces of a call on behalf of another (token exchange)', () => {
  let tenant: string;
  let caller: { clientId: string; secret: string };
  let actor: { clientId: string; secret: string };
  const flow: Record<string, Sent> = {};
  const values: string[] = [];

  beforeAll(async () => {
    tenant = await p.createTenant('trx');
    caller = await p.createServiceAccount(tenant, { role: 'Edit' });
    actor = await p.createServiceAccount(tenant, { name: 'inventory-api' });
    const allowed = await fetch(
      `${p.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${actor.clientId}/delegations`,
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${TEST_SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          delegations: [{ audience: PLANT_STORE_AUDIENCE, scope: 'plants:read plants:write' }],
          actor: 'admin@test',
        }),
      },
    );
    expect(allowed.status).toBe(200);
    const subjectToken = await p.grantToken(tenant, caller);
    values.push(caller.secret, actor.secret, subjectToken);
    flow.exchange = await send(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: actor.clientId,
        client_secret: actor.secret,
        subject_token: subjectToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: PLANT_STORE_AUDIENCE,
      }).toString(),
    });
    const exchanged = (flow.exchange.body as { access_token: string }).access_token;
    values.push(exchanged);
    flow.list = await send(`${p.plantStores[0]!.url}/plants`, {
      headers: { authorization: `Bearer ${exchanged}` },
    });
    await eventually(
      () =>
        Object.values(flow).every((sent) =>
          spansOf(sent.traceId).some((s) => s.parentSpanId === sent.parentId),
        ),
      'the spans of the exchange and of the call with its token were exported',
    );
  }, 120_000);

  const rootOf = (sent: Sent) =>
    spansOf(sent.traceId).find((s) => s.parentSpanId === sent.parentId);

  test("When a service exchanges a caller's token, then the grant's span names the subject, the actor chain and its depth", () => {
    expect(flow.exchange!.status).toBe(200);
    expect(rootOf(flow.exchange!)).toMatchObject({
      service: 'token-service',
      attributes: expect.objectContaining({
        'http.response.status_code': 200,
        'plantstore.tenant': tenant,
        'plantstore.subject': caller.clientId,
        'plantstore.actors': [actor.clientId],
        'plantstore.chain_depth': 1,
        'plantstore.exchange.subject_token_type': 'access_token',
      }),
    });
  });

  test('When the exchanged token is used at the Plant Store, then its request span names both', () => {
    expect(flow.list!.status).toBe(200);
    expect(rootOf(flow.list!)).toMatchObject({
      service: 'plant-store',
      attributes: expect.objectContaining({
        'plantstore.tenant': tenant,
        'plantstore.subject': caller.clientId,
        'plantstore.actors': [actor.clientId],
        'plantstore.chain_depth': 1,
      }),
    });
  });

  test('When the spans of the exchange are read, then no secret or token value is in them', () => {
    const exported = receiver.bodies().join('\n');
    for (const value of values)
      expect({ found: exported.includes(value), length: value.length }).toEqual({
        found: false,
        length: value.length,
      });
  });
});

describe('Sampling', () => {
  test('When a caller says its trace is not sampled, then nothing of that request is exported', async () => {
    const traceId = randomBytes(16).toString('hex');
    const unsampled = await fetch(`${p.plantStores[0]!.url}/plants`, {
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` },
    });
    await unsampled.text();
    // A sampled request after it, through the same process: once its spans are in, the other's would be.
    const sampled = await send(`${p.plantStores[0]!.url}/plants`, { headers: {} });
    await eventually(() => spansOf(sampled.traceId).length > 0, 'the sampled request was exported');
    expect(spansOf(traceId)).toEqual([]);
  });
});

describe('Tracing off', () => {
  test('When a Plant Store runs with OTEL_SDK_DISABLED=true, then it exports nothing and its lines carry no trace ids', async () => {
    const off: ServiceProcess = await p.startPlantStore({ OTEL_SDK_DISABLED: 'true' });
    const silent = await send(`${off.url}/plants`, { headers: {} });
    // A traced request through a store that exports, after the silent one: once its spans are in, the silent one's would be too.
    const traced = await send(`${p.plantStores[0]!.url}/plants`, { headers: {} });
    await eventually(() => spansOf(traced.traceId).length > 0, 'the traced request was exported');
    expect(spansOf(silent.traceId)).toEqual([]);
    const logs = await off.flushedLogs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.filter((line) => line.includes('trace_id'))).toEqual([]);
  }, 60_000);
});
