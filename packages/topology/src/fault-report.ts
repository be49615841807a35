/**
 * What a fault did to the load: every failed request with its cause (read from nginx's access
 * log: which replica it went to, and whether it was in flight when that replica was killed),
 * acknowledged plants missing from the database, revoked tokens accepted, and how soon each
 * restarted replica was ready and serving. Printed as a block the test output carries
 * (docs/hardening.md summarises a run).
 */
import { loadavg } from 'node:os';
import type { ServiceName } from '@plant/test-kit';
import type { AccessLine } from './ingress.js';
import type { LoadOp, LoadRequest, MixedLoad } from './mixed-load.js';

/** A replica stopped (and started again) during the load. */
export interface FaultEvent {
  service: ServiceName;
  replica: string;
  /** `127.0.0.1:<port>`, as nginx names it. */
  address: string;
  signal: NodeJS.Signals;
  /** When the signal was sent, and when the process was seen to exit (until then its sockets still take requests). */
  at: number;
  exitedAt: number;
  /** When the new process was spawned, ready (readiness probe 200) and first answered a request through the ingress. */
  spawnedAt?: number;
  readyMs?: number;
  servingMs?: number;
}

export interface Failure {
  request: LoadRequest;
  cause: string;
}

export interface FaultSummary {
  requests: number;
  byOp: Record<LoadOp, { sent: number; ok: number }>;
  failures: Failure[];
  /** Failures by cause. */
  causes: Record<string, number>;
  acknowledged: number;
  lost: string[];
  revokedTokens: number;
  probes: number;
  revokedAccepted: number;
  events: FaultEvent[];
  /** The machine's 1-minute load average when the summary was made: the restart figures mean little without it. */
  loadAverage: number;
}

/**
 * A failed request's cause: in flight on a replica when it was killed (sent before the process
 * was gone, answered after the signal), or unexplained.
 */
function causeOf(request: LoadRequest, line: AccessLine | undefined, events: FaultEvent[]): string {
  const inFlight = events.filter(
    (e) => e.signal === 'SIGKILL' && request.startedAt <= e.exitedAt && request.endedAt >= e.at,
  );
  const onVictim = inFlight.find((e) => line?.upstreams.includes(e.address));
  if (onVictim !== undefined) return `in flight on the killed ${onVictim.service}`;
  // account-admin's own call to the token service (a reset) was on the killed token service.
  const backChannel = inFlight.find((e) => e.service === 'token-service');
  if (backChannel !== undefined && line !== undefined)
    return 'its back-channel call in flight on the killed token-service';
  const nearest = [...events].sort(
    (x, y) => Math.abs(request.startedAt - x.at) - Math.abs(request.startedAt - y.at),
  )[0];
  const when =
    nearest === undefined
      ? ''
      : `, sent ${request.startedAt - nearest.at} ms after ${nearest.signal} ${nearest.replica}`;
  return `unexplained (${request.status === 0 ? request.error : `status ${request.status}`}${line ? ` via ${line.upstreams.join(', ')}` : ''}${when})`;
}

/** When the replica first answered a request through the ingress (ms after its spawn). */
export function servingMs(event: FaultEvent, log: AccessLine[]): number | undefined {
  const first = log.find(
    (line) =>
      line.at >= (event.spawnedAt ?? Infinity) &&
      line.upstreams.at(-1) === event.address &&
      Number(line.upstreamStatuses.at(-1)) < 500,
  );
  return first === undefined ? undefined : first.at - event.spawnedAt!;
}

export function summarise(
  load: MixedLoad,
  events: FaultEvent[],
  log: AccessLine[],
  storedIds: Set<string>,
): FaultSummary {
  const byId = new Map(log.map((line) => [line.requestId, line]));
  const failures = load.requests
    .filter((r) => !r.ok)
    .map((request) => ({ request, cause: causeOf(request, byId.get(request.requestId), events) }));
  const causes: Record<string, number> = {};
  for (const { cause } of failures) causes[cause] = (causes[cause] ?? 0) + 1;
  const byOp = {
    grant: { sent: 0, ok: 0 },
    list: { sent: 0, ok: 0 },
    create: { sent: 0, ok: 0 },
    reset: { sent: 0, ok: 0 },
  };
  for (const r of load.requests) {
    byOp[r.op].sent += 1;
    if (r.ok) byOp[r.op].ok += 1;
  }
  for (const event of events) {
    const ms = servingMs(event, log);
    if (ms !== undefined) event.servingMs = ms;
  }
  return {
    requests: load.requests.length,
    byOp,
    failures,
    causes,
    acknowledged: load.acknowledgedIds.length,
    lost: load.acknowledgedIds.filter((id) => !storedIds.has(id)),
    revokedTokens: load.revoked.length,
    probes: load.probes.sent,
    revokedAccepted: load.probes.accepted.length,
    events,
    loadAverage: loadavg()[0] ?? Number.NaN,
  };
}

/**
 * Per service, how soon its restarted replicas were ready and serving, in ms after the spawn:
 * ready at the first readiness probe answering 200, serving at the first request the ingress
 * routed to it and it answered; both (the requirement's "ready and serving") at the later of the two.
 */
export function restartLines(events: FaultEvent[]): string[] {
  const services = [
    ...new Set(events.filter((e) => e.readyMs !== undefined).map((e) => e.service)),
  ];
  return services.map((service) => {
    const mine = events.filter((e) => e.service === service && e.readyMs !== undefined);
    const both = mine.map((e) =>
      e.servingMs === undefined ? '?' : String(Math.max(e.readyMs!, e.servingMs)),
    );
    return `    ${service}: ready ${mine.map((e) => e.readyMs).join(', ')} ms; ready and serving ${both.join(', ')} ms`;
  });
}

/** The summary as the block a test prints. */
export function formatSummary(title: string, s: FaultSummary): string {
  const ops = Object.entries(s.byOp)
    .map(([op, { sent, ok }]) => `${op} ${ok}/${sent}`)
    .join(', ');
  const causes = Object.entries(s.causes).map(([cause, n]) => `    ${n} ${cause}`);
  const events = s.events.map(
    (e) =>
      `    ${e.signal} ${e.replica} (${e.address}): ready ${e.readyMs ?? '?'} ms after its start, first served through the ingress at ${e.servingMs ?? '?'} ms`,
  );
  return [
    `== ${title}`,
    `  requests ${s.requests} (ok/sent: ${ops})`,
    `  failed ${s.failures.length}${causes.length > 0 ? ':' : ''}`,
    ...causes,
    `  plants acknowledged ${s.acknowledged}, missing from the database ${s.lost.length}`,
    `  revoked tokens ${s.revokedTokens}, probes after the deadline ${s.probes}, revoked tokens accepted: ${s.revokedAccepted}`,
    ...(events.length > 0
      ? [
          '  replicas:',
          ...events,
          `  restart to ready and serving, by service (ms after the spawn; load average ${s.loadAverage.toFixed(2)}):`,
          ...restartLines(s.events),
        ]
      : []),
    '',
  ].join('\n');
}
