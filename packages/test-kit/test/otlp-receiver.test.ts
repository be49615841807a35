import { afterEach, describe, expect, test } from '@jest/globals';
import { startOtlpReceiver, type OtlpReceiver } from '../src/otlp-receiver.js';

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** One span of `service`, as an OTLP/HTTP JSON exporter writes it. */
const exported = (service: string) => ({
  resourceSpans: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: service } },
          { key: 'service.instance.id', value: { stringValue: 'i-1' } },
        ],
      },
      scopeSpans: [
        {
          spans: [
            {
              traceId: 'a'.repeat(32),
              spanId: 'b'.repeat(16),
              parentSpanId: 'c'.repeat(16),
              name: 'GET /plants',
              kind: 2,
              startTimeUnixNano: '1',
              attributes: [
                { key: 'http.response.status_code', value: { intValue: '200' } },
                { key: 'url.path', value: { stringValue: '/plants' } },
              ],
              status: {},
            },
          ],
        },
      ],
    },
  ],
});

const post = (r: OtlpReceiver, body: string, type = 'application/json', path = '/v1/traces') =>
  fetch(`${r.endpoint}${path}`, { method: 'POST', headers: { 'content-type': type }, body });

describe('OTLP/HTTP receiver', () => {
  test('When an exporter posts JSON spans, then they are kept flattened with their service and instance, and the body as sent', async () => {
    const r = await startOtlpReceiver();
    receivers.push(r);
    const body = JSON.stringify(exported('plant-store'));

    const res = await post(r, body);

    expect(res.status).toBe(200);
    expect(r.spans()).toEqual([
      {
        service: 'plant-store',
        instance: 'i-1',
        traceId: 'a'.repeat(32),
        spanId: 'b'.repeat(16),
        parentSpanId: 'c'.repeat(16),
        name: 'GET /plants',
        kind: 2,
        attributes: { 'http.response.status_code': 200, 'url.path': '/plants' },
        statusCode: 0,
        startTimeUnixNano: '1',
      },
    ]);
    expect(r.bodies()).toEqual([body]);
  });

  test('When protobuf, malformed JSON or another path arrives, then it is refused and counted, nothing kept', async () => {
    const r = await startOtlpReceiver();
    receivers.push(r);

    const statuses = [
      (await post(r, 'x', 'application/x-protobuf')).status,
      (await post(r, '{not json')).status,
      (await post(r, '{}', 'application/json', '/v1/metrics')).status,
    ];

    expect(statuses).toEqual([415, 400, 404]);
    expect(r.refused()).toBe(3);
    expect(r.spans()).toEqual([]);
  });

  test('When it is a sink (keep: false), then exports are answered and counted and nothing is kept', async () => {
    const r = await startOtlpReceiver({ keep: false });
    receivers.push(r);

    await post(r, JSON.stringify(exported('token-service')));

    expect({ exports: r.exports(), spans: r.spans(), bodies: r.bodies() }).toEqual({
      exports: 1,
      spans: [],
      bodies: [],
    });
  });
});
