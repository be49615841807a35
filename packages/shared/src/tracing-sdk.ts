/**
 * The OpenTelemetry Node SDK as our services run it, loaded only when tracing is on
 * (`startTracing`). Everything an operator may tune is the SDK's own `OTEL_*` variables
 * (sampler, endpoint, headers, batch sizes, resource attributes); what is fixed here is what
 * keeps secrets out of spans and what keeps the cost down:
 *
 * - http: client spans only (the calls between our services): no header is recorded (the SDK's
 *   default; never widened here) and query values are replaced by `REDACTED` in `url.full`. The
 *   SERVER span of each request is our request observer's (`startServerSpan`): the
 *   instrumentation's cost about 150 µs of CPU per request even unsampled (docs/performance.md,
 *   "Tracing"); ours records the route template, never the raw path or query, and none for
 *   probes and scrapes.
 * - express: route handlers only, not every middleware layer (a span per layer per request).
 * - pg: the SQL text only (parameterised by knex; values are never recorded), no span outside a trace.
 * - ioredis: the command name only, never its arguments (keys, `AUTH`'s password, messages).
 * - context: kept in the request context's store (`RequestContextManager`), not a storage of its own.
 * - traces only: the services' metrics are Prometheus' (`/metrics`), logs are stdout.
 */
import type { Attributes } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { RequestOptions } from 'node:http';
import { RequestContextManager } from './request-context-manager.js';

/** `a=REDACTED&b=REDACTED`: which parameters came, never their values. */
export function redactedQuery(search: string): string {
  const names: string[] = [];
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const name = part.split('=', 1)[0]!;
    names.push(`${name}=REDACTED`);
  }
  return names.join('&');
}

/** The URL with every query value redacted (and no user info). */
export function redactedUrl(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : `${url.slice(0, query)}?${redactedQuery(url.slice(query + 1))}`;
}

function outgoingAttributes(request: RequestOptions): Attributes {
  const protocol = request.protocol ?? 'http:';
  const host = request.hostname ?? request.host ?? 'localhost';
  const port = request.port === undefined || request.port === null ? '' : `:${request.port}`;
  return { 'url.full': redactedUrl(`${protocol}//${host}${port}${request.path ?? '/'}`) };
}

export function startTracingSdk(serviceName: string): { shutdown(): Promise<void> } {
  // OTLP/HTTP with JSON bodies unless the operator names a protocol (the SDK's default is protobuf).
  if (
    process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL === undefined &&
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL === undefined
  )
    process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL = 'http/json';
  const sdk = new NodeSDK({
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName }),
    // The active context lives in the request context's store: one AsyncLocalStorage, not two.
    contextManager: new RequestContextManager(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: true,
        // A call made outside a sampled request (a resync, a key fetch) makes no span of its own.
        requireParentforOutgoingSpans: true,
        startOutgoingSpanHook: outgoingAttributes,
        redactedQueryParams: [],
      }),
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
      }),
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      new IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (command) => command,
      }),
    ],
  });
  sdk.start();
  return sdk;
}
