import type { Registry } from 'prom-client';

/** Latency buckets (seconds) of `http_request_duration_seconds`. */
export const HTTP_DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
] as const;

interface RequestLabels {
  method: string;
  route: string;
  status: string;
}

/** One (method, route, status) series: request count, latency sum and per-bucket (not cumulative) counts. */
interface Series {
  labels: RequestLabels;
  count: number;
  sum: number;
  buckets: number[];
}

/** A value as prom-client's registry formats it (the shape its own Counter and Histogram hand over). */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: RequestLabels;
  metricName?: string;
  /** prom-client's buckets carry one (null: none); kept so the JSON is the same too. */
  exemplar?: null;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

/** What prom-client's Registry reads from a registered metric. */
interface CollectedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<MetricData>;
  getForPromString?(): Promise<MetricData>;
  reset(): void;
}

/**
 * `http_requests_total` and `http_request_duration_seconds` by method, route template and
 * status, aggregated here on the request path (a Map lookup and a few additions) and handed
 * to prom-client's registry when it collects. prom-client's own Counter and Histogram
 * re-validate and re-hash the label set on every observation, even through a cached labelled
 * child, which showed in every request's profile (docs/performance.md). The registry still
 * does the exposition, default labels included, and the
 * text is the same as prom-client's metrics would write (tested against them).
 *
 * The series are bounded: routes are templates, statuses and methods bounded sets.
 */
export class HttpRequestMetrics {
  readonly #series = new Map<string, Series>();

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(HTTP_DURATION_BUCKETS.length).fill(0),
      };
      this.#series.set(key, series);
    }
    series.count += 1;
    series.sum += seconds;
    for (let i = 0; i < HTTP_DURATION_BUCKETS.length; i += 1) {
      if (seconds <= HTTP_DURATION_BUCKETS[i]!) {
        series.buckets[i]! += 1;
        break;
      }
    }
  }

  /** Registers both metrics with the registry (its default labels apply as to any other metric). */
  register(registry: Registry): void {
    const add = (metric: CollectedMetric) =>
      registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
    add(this.#counter());
    add(this.#histogram());
  }

  #counter(): CollectedMetric {
    const series = this.#series;
    const data = (): MetricData => ({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route and status',
      type: 'counter',
      values: [...series.values()].map((s) => ({ value: s.count, labels: { ...s.labels } })),
      aggregator: 'sum',
    });
    return {
      name: 'http_requests_total',
      help: 'HTTP requests by method, route and status',
      type: 'counter',
      aggregator: 'sum',
      get: async () => data(),
      reset: () => series.clear(),
    };
  }

  #histogram(): CollectedMetric {
    const series = this.#series;
    const name = 'http_request_duration_seconds';
    // The same values, in the same order, as prom-client's Histogram: cumulative buckets, +Inf, _sum, _count.
    const forPromString = (): MetricData => {
      const values: MetricValue[] = [];
      for (const s of series.values()) {
        let cumulative = 0;
        HTTP_DURATION_BUCKETS.forEach((le, i) => {
          cumulative += s.buckets[i]!;
          values.push({
            labels: { le },
            sharedLabels: s.labels,
            value: cumulative,
            metricName: `${name}_bucket`,
            exemplar: null,
          });
        });
        values.push(
          {
            labels: { le: '+Inf' },
            sharedLabels: s.labels,
            value: s.count,
            metricName: `${name}_bucket`,
            exemplar: null,
          },
          { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` },
          { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` },
        );
      }
      return {
        name,
        help: 'HTTP request latency by method, route and status',
        type: 'histogram',
        values,
        aggregator: 'sum',
      };
    };
    return {
      name,
      help: 'HTTP request latency by method, route and status',
      type: 'histogram',
      aggregator: 'sum',
      getForPromString: async () => forPromString(),
      // JSON (getMetricsAsJSON): labels and shared labels in one object, as prom-client's Histogram gives them.
      get: async () => {
        const data = forPromString();
        return {
          ...data,
          values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
            ...rest,
            labels: { ...labels, ...sharedLabels },
          })),
        };
      },
      reset: () => series.clear(),
    };
  }
}
