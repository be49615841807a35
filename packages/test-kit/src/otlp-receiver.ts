/**
 * An OTLP/HTTP trace receiver on a loopback port, for tests that run the services with tracing
 * on: it takes what an OpenTelemetry exporter posts to `/v1/traces` (OTLP/HTTP with JSON
 * bodies, what `@opentelemetry/exporter-trace-otlp-http` sends), answers as a collector does,
 * and keeps every span, flattened, with the exported text itself (for secret scans). Protobuf
 * bodies are refused with 415, so a service that sent them would show up as missing spans.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver keeps it: OTLP's fields, attributes as plain values, the process's `service.name`. */
export interface ReceivedSpan {
  service: string;
  /** `service.instance.id`: which process of the service (the SDK makes one per process). */
  instance: string;
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startTimeUnixNano: string;
}

export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`). */
  endpoint: string;
  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[];
  /** Every request body received, as sent: what a secret scan reads. */
  bodies(): string[];
  /** Export requests refused (wrong path, media type, malformed or too large). */
  refused(): number;
  /** Export requests taken (kept or, with `keep: false`, only counted). */
  exports(): number;
  close(): Promise<void>;
}

/** One export body at most; the SDK's batches are far smaller. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** What a receiver keeps in all (a test's flow makes hundreds of spans); beyond it exports are refused with 507 and counted. */
const MAX_KEPT_BYTES = 256 * 1024 * 1024;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number };
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

function plain(value: OtlpValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

/** The spans of one export request, flattened. */
export function flattenOtlpExport(body: OtlpExport): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    const service = String(resource['service.name'] ?? '');
    const instance = String(resource['service.instance.id'] ?? '');
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? [])
        spans.push({
          service,
          instance,
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          startTimeUnixNano: String(span.startTimeUnixNano ?? '0'),
        });
  }
  return spans;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface OtlpReceiverOptions {
  /**
   * Keep what arrives (default true). A benchmark's sink passes false: each export is answered
   * and counted (`exports()`), nothing is parsed or kept, so a long run holds no memory.
   */
  keep?: boolean;
}

/** Starts the receiver on 127.0.0.1 and an ephemeral port. */
export async function startOtlpReceiver({
  keep = true,
}: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  let kept = 0;
  let refused = 0;
  let exports = 0;
  const answer = (res: ServerResponse, status: number, body: object) => {
    if (status !== 200) refused += 1;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces')
      return answer(res, 404, { code: 5, message: 'only POST /v1/traces' });
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      req.resume();
      return answer(res, 415, { code: 3, message: 'JSON only' });
    }
    readBody(req).then(
      (text) => {
        if (text === undefined) return answer(res, 413, { code: 8, message: 'too large' });
        exports += 1;
        if (!keep) return answer(res, 200, {});
        if (kept + text.length > MAX_KEPT_BYTES)
          return answer(res, 507, { code: 8, message: 'too much' });
        let parsed: OtlpExport;
        try {
          parsed = JSON.parse(text) as OtlpExport;
        } catch {
          return answer(res, 400, { code: 3, message: 'malformed JSON' });
        }
        kept += text.length;
        bodies.push(text);
        spans.push(...flattenOtlpExport(parsed));
        answer(res, 200, {});
      },
      () => answer(res, 400, { code: 3, message: 'unreadable body' }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    bodies: () => [...bodies],
    refused: () => refused,
    exports: () => exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
