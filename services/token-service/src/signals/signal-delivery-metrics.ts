import { Counter, Gauge, type Registry } from 'prom-client';
import type { SignalStreamRepository } from './signal-stream-repository.js';

/** Pushes by outcome, and the queued and dropped events of every replica's streams. */
export function deliveryMetrics(
  streams: SignalStreamRepository,
  registry: Registry,
): Counter<'outcome'> {
  const pushed = new Counter({
    name: 'ssf_push_attempts_total',
    help: 'Shared Signals SETs pushed to receivers, by outcome (delivered, rejected by the receiver, failed and kept for a retry)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  let totals: Promise<{ queued: number; dropped: number }> | undefined;
  // One query per scrape for both gauges, over every replica's streams.
  const read = () => {
    totals ??= streams.totals().finally(() => {
      totals = undefined;
    });
    return totals;
  };
  new Gauge({
    name: 'ssf_stream_events_queued',
    help: 'Shared Signals events waiting in streams (undelivered or unacknowledged), all streams',
    registers: [registry],
    async collect() {
      this.set((await read()).queued);
    },
  });
  new Gauge({
    name: 'ssf_stream_events_dropped',
    help: "Shared Signals events dropped because a stream's backlog was full, all streams (grows: alert on increase)",
    registers: [registry],
    async collect() {
      this.set((await read()).dropped);
    },
  });
  return pushed;
}
