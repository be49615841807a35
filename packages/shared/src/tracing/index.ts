/** Tracing: OpenTelemetry off unless `OTEL_*` asks (`startTracing`), log fields and message trace context. */
export * from './trace-context.js';
export * from './tracing.js';
