import { describe, expect, test } from '@jest/globals';
import { traceLogFields, tracingStarted, tracingWanted } from '../src/tracing/index.js';
import { otlpProtocolProblem, redactedQuery, redactedUrl } from '../src/tracing/tracing-sdk.js';

describe('Whether tracing is on', () => {
  test.each([
    ['no OTEL_* variable', {}, false],
    ['an OTLP endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    ['a traces endpoint', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, true],
    ['an exporter named', { OTEL_TRACES_EXPORTER: 'console' }, true],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    [
      'an endpoint and OTEL_SDK_DISABLED=true',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' },
      false,
    ],
    [
      'an endpoint and OTEL_TRACES_EXPORTER=none',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' },
      false,
    ],
    [
      'an endpoint and OTEL_SDK_DISABLED=false',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' },
      true,
    ],
  ])('When the environment has %s, then tracing on is %s', (_what, env, on) => {
    expect(tracingWanted(env)).toBe(on);
  });

  test('When tracing was never started, then log lines get no trace fields', () => {
    expect(tracingStarted()).toBe(false);
    expect(traceLogFields()).toBeUndefined();
  });
});

describe('Query strings on spans', () => {
  test('When a URL has a query, then its parameter names stay and every value is redacted', () => {
    expect(redactedUrl('http://portal/callback?code=s3cr3t&state=abc&flag')).toBe(
      'http://portal/callback?code=REDACTED&state=REDACTED&flag=REDACTED',
    );
    expect(redactedQuery('?after=12&&limit=5')).toBe('after=REDACTED&limit=REDACTED');
  });

  test('When a URL has no query, then it is kept as it is', () => {
    expect(redactedUrl('http://ts:9082/internal/v1/realms')).toBe(
      'http://ts:9082/internal/v1/realms',
    );
  });
});

describe('The OTLP protocol', () => {
  test.each([
    ['no protocol named', {}],
    ['http/json', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }],
    ['http/json for traces', { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ' http/json ' }],
  ])('When the environment names %s, then traces go over OTLP/HTTP with JSON', (_what, env) => {
    expect(otlpProtocolProblem(env)).toBeUndefined();
  });

  // Only the OTLP/HTTP (JSON) exporter is installed: another protocol stops the start, loudly,
  // rather than exporting nowhere or in a format the collector's port does not speak.
  test.each([
    ['grpc', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    ['http/protobuf', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }],
    [
      'grpc for traces over http/json for the rest',
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
    ],
  ])(
    'When the environment names %s, then the start is refused and says what works',
    (_what, env) => {
      expect(otlpProtocolProblem(env)).toMatch(/is not available: .*OTLP\/HTTP with JSON only/);
    },
  );
});
