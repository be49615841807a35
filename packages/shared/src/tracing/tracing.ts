/**
 * OpenTelemetry traces of a service process, off unless the standard `OTEL_*` variables ask for
 * them (docs/decisions/0018-opentelemetry-traces-off-by-default.md).
 *
 * Why a start function rather than `node --import`: `node dist/start.js` must stay the one way
 * to run a service (Dockerfiles, compose, Kubernetes, the test kit). The services are ESM, and
 * express, pg and ioredis are only patched when the module hook of
 * `@opentelemetry/instrumentation` is registered before they load, so each `start.ts` awaits
 * `startTracing` and only then imports the service (a dynamic import: static imports are all
 * loaded before any module body runs). When tracing is off nothing of the SDK is loaded, no hook
 * is registered and the request path is the same code as without this module.
 */
import { register } from 'node:module';
import { markTracingStarted } from './trace-context.js';

/** The environment keys that decide whether tracing is on (the rest is the SDK's to read). */
export interface TracingEnv {
  OTEL_SDK_DISABLED?: string | undefined;
  OTEL_TRACES_EXPORTER?: string | undefined;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
}

/**
 * On when an exporter is named: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER` (`otlp`, `console`); off when
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The specification's SDK is on by
 * default and sends to localhost:4318; ours is off until an operator says where spans go.
 */
export function tracingWanted(env: TracingEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (exporters.includes('none')) return false;
  return (
    exporters.length > 0 ||
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) ||
    Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
  );
}

/** The running SDK, or none. */
let running: { shutdown(): Promise<void> } | undefined;

/**
 * Starts tracing for `serviceName` (the resource's `service.name` unless `OTEL_SERVICE_NAME`
 * names it) when `tracingWanted`; resolves once the instrumentations are registered, so what the
 * caller imports next is instrumented. Returns whether tracing is on.
 */
export async function startTracing(serviceName: string): Promise<boolean> {
  if (running !== undefined || !tracingWanted()) return running !== undefined;
  // The ESM hook (import-in-the-middle) for what our ESM imports and an instrumentation patches:
  // express and ioredis only. pg is required by knex (CommonJS) and node:http by CommonJS
  // packages too: the SDK's require hook patches those, and letting the ESM hook wrap node:http
  // as well patched `http.request` twice (two client spans per call).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['express', 'ioredis'] },
  });
  const { startTracingSdk } = await import('./tracing-sdk.js');
  running = startTracingSdk(serviceName);
  markTracingStarted();
  return true;
}

/** Exports the spans still buffered and stops the SDK (the process is stopping); a no-op when off. */
export async function stopTracing(): Promise<void> {
  const sdk = running;
  running = undefined;
  await sdk?.shutdown();
}
