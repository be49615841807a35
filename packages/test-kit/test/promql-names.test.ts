import { describe, expect, test } from '@jest/globals';
import { metricNamesOf, sampleNamesOf } from '../src/promql-names.js';

describe('metricNamesOf', () => {
  test('When an expression aggregates, divides and filters, then only its metric names come out', () => {
    expect(
      metricNamesOf(
        'sum by (service, route) (rate(http_requests_total{status=~"5..",route="/a:b"}[5m])) / on (service) group_left sum(rate(http_request_duration_seconds_count[1h])) > 0.1 and up == 0',
      ),
    ).toEqual(['http_request_duration_seconds_count', 'http_requests_total', 'up']);
  });

  test('When an expression reads recording rules and histograms, then the recorded names count as names', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.99, sum by (le) (rate(revocation_event_delay_seconds_bucket[5m]))) or slo:sli_error:ratio_rate5m{slo="grant"} > (14.4 * 0.001)',
      ),
    ).toEqual(['revocation_event_delay_seconds_bucket', 'slo:sli_error:ratio_rate5m']);
  });
});

describe('sampleNamesOf', () => {
  test('When an exposition is read, then each sample name counts once, comments aside', () => {
    expect([
      ...sampleNamesOf(
        '# HELP a_total x\n# TYPE a_total counter\na_total{x="1"} 3\na_total 4\nh_bucket{le="+Inf"} 1\nh_sum 0.2\n',
      ),
    ]).toEqual(['a_total', 'h_bucket', 'h_sum']);
  });
});
