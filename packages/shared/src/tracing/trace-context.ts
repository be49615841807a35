/**
 * What the rest of the code asks of the current trace: the ids for log lines, and W3C trace
 * context carried in a message (the revocation channel), in and out. Only `@opentelemetry/api`
 * is loaded here (no SDK): every call is a constant-time no-op until `startTracing` has run.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  type AttributeValue,
  context,
  type Context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

let started = false;
/** Ours, once the SDK's provider is registered (a lookup per span otherwise). */
let tracer: Tracer = trace.getTracer('@plant/shared');
/** The request headers the configured propagators read (`OTEL_PROPAGATORS`): a request without any has no parent to extract. */
let propagationFields: readonly string[] = [];

/** Called once by `startTracing`: from now on spans exist and these functions do work. */
export function markTracingStarted(): void {
  started = true;
  tracer = trace.getTracer('@plant/shared');
  propagationFields = propagation.fields().map((field) => field.toLowerCase());
}

export function tracingStarted(): boolean {
  return started;
}

/** `{trace_id, span_id}` of the active span (or of `of`'s) for a log line, or undefined (no trace, or tracing off). */
export function traceLogFields(
  of: Context = context.active(),
): { trace_id: string; span_id: string } | undefined {
  if (!started) return undefined;
  const span = trace.getSpan(of);
  if (span === undefined) return undefined;
  const spanContext = span.spanContext();
  // An unsampled span's ids are still worth logging (they are the caller's trace); an invalid one's are not.
  if (!isSpanContextValid(spanContext)) return undefined;
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * Sets `attributes` on the active span: in a route, the request's SERVER span. For what a
 * request was about (principal ids, counts), never a token, secret or proof value. A no-op
 * with tracing off or in a request the sampler left out (it has no span).
 */
export function annotateActiveSpan(attributes: Record<string, AttributeValue>): void {
  if (!started) return;
  trace.getSpan(context.active())?.setAttributes(attributes);
}

/** W3C trace context as a message carries it: the two headers' values, as fields. */
export interface MessageTraceContext {
  traceparent?: string;
  tracestate?: string;
}

/** Messages carry W3C trace context whatever `OTEL_PROPAGATORS` says for HTTP: one format on the channel. */
const w3c = new W3CTraceContextPropagator();
const setter: TextMapSetter<MessageTraceContext> = {
  set(carrier, key, value) {
    if (key === 'traceparent' || key === 'tracestate') carrier[key] = value;
  },
};
const getter: TextMapGetter<MessageTraceContext> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier, key) => (key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined),
};

function ended<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? 'Error' });
      span.end();
      throw err;
    },
  );
}

/**
 * Runs `send` inside a PRODUCER span `name` (a child of the current span) and hands it the
 * trace context to put in the message; with tracing off, `send({})` and nothing else.
 */
export function inProducerSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  send: (carried: MessageTraceContext) => Promise<T>,
): Promise<T> {
  if (!started) return send({});
  const span = tracer.startSpan(name, { kind: SpanKind.PRODUCER, attributes });
  const spanContext = trace.setSpan(context.active(), span);
  const carried: MessageTraceContext = {};
  w3c.inject(spanContext, carried, setter);
  return ended(
    span,
    context.with(spanContext, () => send(carried)),
  );
}

/**
 * Runs `apply` inside a CONSUMER span `name` whose parent is the trace context a message
 * carried (its producer in another process), so the producer's trace shows the arrival here.
 * With tracing off, or a message without context, `apply()` and nothing else.
 */
export function inConsumerSpan<T>(
  name: string,
  carried: MessageTraceContext,
  attributes: Record<string, string | number | boolean>,
  apply: (span: Span | undefined) => T,
): T {
  if (!started || carried.traceparent === undefined) return apply(undefined);
  const parent: Context = w3c.extract(ROOT_CONTEXT, carried, getter);
  if (trace.getSpanContext(parent) === undefined) return apply(undefined);
  const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent);
  try {
    return context.with(trace.setSpan(parent, span), () => apply(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? 'Error' });
    throw err;
  } finally {
    span.end();
  }
}

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/** A request's SERVER span, once `startServerSpan` has begun it. */
export interface ServerSpan {
  span: Span;
  context: Context;
  method: string;
}

/**
 * The SERVER span of a request our request observer serves, as a child of the caller's trace
 * context (`traceparent`, through the propagators `OTEL_PROPAGATORS` names); undefined with
 * tracing off. Why not the http instrumentation's: its server side cost about 150 µs of CPU per
 * request even when the request was not sampled (docs/performance.md, "Tracing"); this one does
 * nothing more than the sampler asks for. It records the method, the route template (never the
 * raw path or query: they can carry identifiers) and the status.
 *
 * A request the sampler leaves out gets no span in its context at all (undefined here): the pg
 * and ioredis instrumentations then make no span for its queries (`requireParentSpan`), and its
 * calls to other services carry no `traceparent`, so they sample on their own. That is what
 * keeps tracing at 10 % within its cost (docs/performance.md, "Tracing").
 */
export function startServerSpan(
  method: string,
  headers: IncomingHttpHeaders,
): ServerSpan | undefined {
  if (!started) return undefined;
  const parent = propagationFields.some((field) => headers[field] !== undefined)
    ? propagation.extract(ROOT_CONTEXT, headers, headerGetter)
    : ROOT_CONTEXT;
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    parent,
  );
  if (!span.isRecording()) return undefined;
  return { span, context: trace.setSpan(parent, span), method };
}

/** Ends the span when the response has closed: its route template, its status. */
export function endServerSpan(server: ServerSpan, route: string, status: number): void {
  const { span, method } = server;
  if (route !== 'unmatched') {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
