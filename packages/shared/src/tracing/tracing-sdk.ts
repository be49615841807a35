/**
 * The OpenTelemetry trace SDK as our services run it, loaded only when tracing is on
 * (`startTracing`). Assembled from its pieces (a tracer provider, the OTLP/HTTP exporter, the
 * resource detectors, the instrumentations) rather than `@opentelemetry/sdk-node`, which also
 * brings the gRPC and protobuf exporters, metrics and logs exporters, Zipkin and B3 (about 8 MB
 * in each image) for nothing we use. Everything an operator may tune is the specification's own
 * `OTEL_*` variables as the Node SDK reads them (sampler, endpoint, headers, batch sizes, span
 * limits, resource attributes, propagators `tracecontext`/`baggage`); what is fixed here is what
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
 * - OTLP over HTTP with JSON bodies (`http/json`) only: any other OTEL_EXPORTER_OTLP_PROTOCOL
 *   (`grpc`, `http/protobuf`) stops the start with an error rather than exporting nowhere.
 */
import {
  type Attributes,
  context,
  DiagConsoleLogger,
  diag,
  propagation,
  trace,
} from '@opentelemetry/api';
import {
  CompositePropagator,
  diagLogLevelFromString,
  getNumberFromEnv,
  getStringFromEnv,
  getStringListFromEnv,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanLimits,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
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

/** The one OTLP encoding this build carries: JSON over HTTP (the OTLP/HTTP exporter). */
const OTLP_PROTOCOL = 'http/json';

/** Refuses an OTLP protocol other than `http/json` (the gRPC and protobuf exporters are not installed). */
export function otlpProtocolProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL
  )?.trim();
  if (protocol === undefined || protocol === '' || protocol === OTLP_PROTOCOL) return undefined;
  return `OTLP protocol "${protocol}" is not available: traces are exported over OTLP/HTTP with JSON only (unset OTEL_EXPORTER_OTLP_PROTOCOL or set it to ${OTLP_PROTOCOL})`;
}

/** OTEL_TRACES_SAMPLER and its argument, as the specification names them; unset: the provider's default (parentbased_always_on). */
function samplerFromEnv(): Sampler | undefined {
  const ratio = () => {
    const arg = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG');
    return arg === undefined || arg < 0 || arg > 1 ? 1 : arg;
  };
  switch (getStringFromEnv('OTEL_TRACES_SAMPLER')) {
    case undefined:
      return undefined;
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      diag.error(
        `unknown OTEL_TRACES_SAMPLER value "${getStringFromEnv('OTEL_TRACES_SAMPLER')}", using the default`,
      );
      return undefined;
  }
}

function spanLimitsFromEnv(): SpanLimits {
  return {
    attributeCountLimit:
      getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ??
      getNumberFromEnv('OTEL_ATTRIBUTE_COUNT_LIMIT'),
    attributeValueLengthLimit:
      getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ??
      getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
    eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT'),
    linkCountLimit: getNumberFromEnv('OTEL_SPAN_LINK_COUNT_LIMIT'),
  };
}

/** A positive OTEL_BSP_* number, or the processor's default. */
const positive = (name: string) => {
  const value = getNumberFromEnv(name);
  return value !== undefined && value > 0 ? value : undefined;
};

/** OTEL_TRACES_EXPORTER (`otlp`, the default, and `console`): a batch processor per OTLP exporter, a simple one for the console. */
function spanProcessorsFromEnv(): SpanProcessor[] {
  const names = [...new Set(getStringListFromEnv('OTEL_TRACES_EXPORTER') ?? [])];
  const processors: SpanProcessor[] = [];
  for (const name of names.length === 0 ? ['otlp'] : names) {
    if (name === 'otlp')
      processors.push(
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter(),
          maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE'),
          scheduledDelayMillis: positive('OTEL_BSP_SCHEDULE_DELAY'),
          exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT'),
          maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
        }),
      );
    else if (name === 'console')
      processors.push(new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() }));
    else diag.warn(`unsupported OTEL_TRACES_EXPORTER "${name}" (otlp, console, none)`);
  }
  return processors;
}

/** OTEL_PROPAGATORS (`tracecontext`, `baggage`, `none`); unset: both W3C propagators, as the Node SDK's default. */
function setPropagatorFromEnv(): void {
  const names = getStringListFromEnv('OTEL_PROPAGATORS') ?? ['tracecontext', 'baggage'];
  if (names.includes('none')) return;
  const propagators = [...new Set(names)].flatMap((name) => {
    if (name === 'tracecontext') return [new W3CTraceContextPropagator()];
    if (name === 'baggage') return [new W3CBaggagePropagator()];
    diag.warn(`unsupported OTEL_PROPAGATORS entry "${name}" (tracecontext, baggage, none)`);
    return [];
  });
  if (propagators.length > 0)
    propagation.setGlobalPropagator(new CompositePropagator({ propagators }));
}

export function startTracingSdk(serviceName: string): { shutdown(): Promise<void> } {
  const problem = otlpProtocolProblem();
  if (problem !== undefined) throw new Error(problem);
  const logLevel = getStringFromEnv('OTEL_LOG_LEVEL');
  if (logLevel !== undefined)
    diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) });
  // The Node SDK's resource: its defaults, the detectors it runs (OTEL_RESOURCE_ATTRIBUTES and
  // OTEL_SERVICE_NAME through envDetector), and the service's own name unless the operator named one.
  let resource = defaultResource().merge(
    detectResources({
      detectors: [
        serviceInstanceIdDetector,
        processDetector,
        hostDetector,
        osDetector,
        envDetector,
      ],
    }),
  );
  if (!process.env.OTEL_SERVICE_NAME)
    resource = resource.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }));
  const instrumentations = [
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
  ];
  registerInstrumentations({ instrumentations });
  // The active context lives in the request context's store: one AsyncLocalStorage, not two.
  const contextManager = new RequestContextManager();
  contextManager.enable();
  context.setGlobalContextManager(contextManager);
  setPropagatorFromEnv();
  const spanProcessors = spanProcessorsFromEnv();
  if (spanProcessors.length === 0) return { shutdown: async () => {} };
  const sampler = samplerFromEnv();
  const provider = new TracerProvider({
    resource,
    spanProcessors,
    spanLimits: spanLimitsFromEnv(),
    ...(sampler === undefined ? {} : { sampler }),
  });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}
