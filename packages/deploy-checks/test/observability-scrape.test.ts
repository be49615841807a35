/**
 * The dashboard and the alert rules (deploy/observability) against what the services really
 * export: the three services run as processes, a service account's life goes through them (so
 * the request, grant, grant-error and revocation series exist), then each management port is scraped and
 * every metric a dashboard query or a rule reads must be among the samples scraped (or be
 * recorded by a rule, or be Prometheus's own `up`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  metricNamesOf,
  REPO_ROOT,
  sampleNamesOf,
  startPlatform,
  type Platform,
} from '@plant/test-kit';
import { parse } from 'yaml';

let p: Platform;
let scraped: Set<string>;

const rules = parse(
  readFileSync(join(REPO_ROOT, 'deploy/observability/prometheus/rules.yml'), 'utf8'),
) as { groups: Array<{ rules: Array<{ record?: string; alert?: string; expr: string }> }> };
const allRules = rules.groups.flatMap((g) => g.rules);
const recorded = new Set(allRules.flatMap((r) => (r.record === undefined ? [] : [r.record])));
const dashboard = JSON.parse(
  readFileSync(join(REPO_ROOT, 'deploy/observability/grafana/plant-store-dashboard.json'), 'utf8'),
) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };

beforeAll(async () => {
  p = await startPlatform({ plantStores: 1, accountAdmin: true });
  const tenant = await p.createTenant('obs');
  const account = await p.createServiceAccount(tenant, { role: 'Edit' });
  const token = await p.grantToken(tenant, account);
  const listed = await fetch(`${p.plantStores[0]!.url}/plants`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(listed.status).toBe(200);
  await p.resetSecret(tenant, account.clientId);
  // The old secret, refused: the grant-error series exist only once an error has been counted.
  const refused = await fetch(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: account.secret,
    }).toString(),
  });
  expect(refused.status).toBe(401);
  scraped = new Set<string>();
  for (const svc of [p.tokenService, p.plantStores[0]!, p.accountAdmin!]) {
    const res = await fetch(`${svc.managementUrl}/metrics`);
    for (const name of sampleNamesOf(await res.text())) scraped.add(name);
  }
}, 120_000);

afterAll(() => p?.close());

/** Names an expression reads that neither a service exports nor a rule records. */
const unknownIn = (expr: string) =>
  metricNamesOf(expr).filter((n) => !scraped.has(n) && !recorded.has(n) && n !== 'up');

describe('Dashboard and rules against a scrape of the running services', () => {
  test('When the services are scraped, then the series the objectives are written against are there', () => {
    expect([...scraped]).toEqual(
      expect.arrayContaining([
        'http_requests_total',
        'http_request_duration_seconds_bucket',
        'revocation_event_delay_seconds_bucket',
        'readiness_check_up',
        'signing_key_oldest_age_seconds',
        'revocation_publish_pending',
      ]),
    );
  });

  test('When every dashboard query is read, then it names only metrics the services export or the rules record', () => {
    const queries = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((t) => ({ panel: panel.title, unknown: unknownIn(t.expr) })),
    );
    expect(queries.length).toBeGreaterThan(10);
    expect(queries.filter((q) => q.unknown.length > 0)).toEqual([]);
  });

  test('When every rule is read, then it names only metrics the services export, other rules record, or up', () => {
    expect(
      allRules
        .map((r) => ({ rule: r.record ?? r.alert, unknown: unknownIn(r.expr) }))
        .filter((r) => r.unknown.length > 0),
    ).toEqual([]);
  });
});
