/**
 * What ships for operators (docs/deploy.md, "Operating it"): the Prometheus rules, checked and
 * unit-tested with promtool (Debian's `prometheus` package); the same rules as the prod
 * overlay's PrometheusRule; the Grafana dashboard; the compose profile that runs the collector,
 * Prometheus and Grafana. Whether the dashboard and the rules name metrics the services really
 * export is checked against a scrape of the running services (observability-scrape.test.ts).
 */
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metricNamesOf } from '@plant/test-kit';
import { parse } from 'yaml';
import { environmentOf, loadCompose } from '../src/compose-checks.js';
import { find } from '../src/k8s-objects.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { OVERLAYS } from './helpers/rendered.js';
import { requirementsOf } from './helpers/service-configs.js';

const PROMETHEUS_DIR = join(repoRoot, 'deploy/observability/prometheus');
const RULES_FILE = join(PROMETHEUS_DIR, 'rules.yml');

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: Rule[];
}

const rules = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: RuleGroup[] };
const allRules = rules.groups.flatMap((g) => g.rules);
const alerts = allRules.filter((r) => r.alert !== undefined);
const recorded = new Set(allRules.flatMap((r) => (r.record === undefined ? [] : [r.record])));

/** `${name}` as Grafana and compose write their variables (built, so it reads as no JS template). */
const placeholder = (name: string) => ['$', '{', name, '}'].join('');

function promtool(args: string[], cwd = PROMETHEUS_DIR) {
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('Prometheus rules (deploy/observability/prometheus)', () => {
  test('When promtool checks the rules file, then it is valid', () => {
    const { status, output } = promtool(['check', 'rules', 'rules.yml']);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  test('When promtool runs the rules unit tests, then every one passes', () => {
    const { status, output } = promtool(['test', 'rules', 'rules.test.yml']);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  test('When the unit tests are read, then every alert is tested firing at least once', () => {
    const tests = parse(readFileSync(join(PROMETHEUS_DIR, 'rules.test.yml'), 'utf8')) as {
      tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
    };
    const fired = new Set(
      tests.tests.flatMap((t) =>
        (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
      ),
    );
    const untested = alerts
      .map((a) => a.alert!)
      .filter((name) => !fired.has(name) && !/BudgetBurnSlow$/.test(name));
    // A slow burn is the fast one's expression over longer windows: one of them is tested (GrantAvailability).
    expect(untested).toEqual([]);
    expect(fired.has('GrantAvailabilityBudgetBurnSlow')).toBe(true);
  });

  test('When an alert fires, then it has a severity, a summary and a runbook section that exists in docs/deploy.md', () => {
    const deployDoc = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const anchors = new Set(
      [...deployDoc.matchAll(/^#{2,6} (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const alert of alerts) {
      const runbook = alert.annotations?.runbook ?? '';
      expect({
        alert: alert.alert,
        severity: ['page', 'ticket'].includes(alert.labels?.severity ?? ''),
        summary: (alert.annotations?.summary ?? '').length > 0,
        runbook: runbook.startsWith('docs/deploy.md#') && anchors.has(runbook.split('#')[1]!),
      }).toEqual({ alert: alert.alert, severity: true, summary: true, runbook: true });
    }
  });
});

describe('PrometheusRule of the prod overlay', () => {
  const rendered = find(OVERLAYS.prod, 'PrometheusRule', 'plant-store') as
    | { spec: { groups: RuleGroup[] }; metadata: { labels?: Record<string, string> } }
    | undefined;

  test('When the prod overlay is rendered, then its PrometheusRule holds exactly the groups promtool tested', () => {
    expect(rendered?.spec.groups).toEqual(rules.groups);
    expect(rendered?.metadata.labels).toMatchObject({ role: 'alert-rules' });
  });

  test('When its groups are written out as a rules file, then promtool finds them valid', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prometheus-rule-'));
    try {
      writeFileSync(join(dir, 'rules.yml'), JSON.stringify({ groups: rendered!.spec.groups }));
      expect(promtool(['check', 'rules', 'rules.yml'], dir).status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('When the dev overlay is rendered, then it has no PrometheusRule (no operator assumed there)', () => {
    expect(OVERLAYS.dev.filter((o) => o.kind === 'PrometheusRule')).toEqual([]);
  });
});

describe('Grafana dashboard (deploy/observability/grafana)', () => {
  const dashboard = JSON.parse(
    readFileSync(join(repoRoot, 'deploy/observability/grafana/plant-store-dashboard.json'), 'utf8'),
  ) as {
    uid: string;
    panels: Array<{
      type: string;
      title: string;
      datasource?: { uid: string };
      targets?: Array<{ expr: string }>;
    }>;
  };
  const queried = dashboard.panels.filter((p) => p.type !== 'row');

  test('When the dashboard is read, then every panel queries the Prometheus data source variable', () => {
    expect(queried.length).toBeGreaterThan(10);
    for (const panel of queried) {
      expect({
        panel: panel.title,
        uid: panel.datasource?.uid,
        targets: (panel.targets ?? []).length > 0,
      }).toEqual({
        panel: panel.title,
        uid: placeholder('DS_PROMETHEUS'),
        targets: true,
      });
    }
  });

  test('When its queries read recording rules, then rules.yml records each of them', () => {
    const names = queried.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNamesOf(t.expr)));
    expect(names.filter((n) => n.startsWith('slo:') && !recorded.has(n))).toEqual([]);
    expect(names.some((n) => n.startsWith('slo:'))).toBe(true);
  });
});

describe('docker compose --profile observability', () => {
  const compose = loadCompose(join(repoRoot, 'docker-compose.yml'));
  const profiled = Object.entries(compose.services)
    .filter(([, spec]) =>
      ((spec as { profiles?: string[] }).profiles ?? []).includes('observability'),
    )
    .map(([name]) => name)
    .sort();

  test('When the profile is read, then it adds exactly the collector, Prometheus and Grafana, from official images at fixed versions', () => {
    expect(profiled).toEqual(['grafana', 'otel-collector', 'prometheus']);
    const images = profiled.map((name) => compose.services[name]!.image as string);
    expect(images).toEqual([
      expect.stringMatching(/^grafana\/grafana:\d+\.\d+\.\d+$/),
      expect.stringMatching(/^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/),
      expect.stringMatching(/^prom\/prometheus:v\d+\.\d+\.\d+$/),
    ]);
  });

  test('When Prometheus is configured, then it scrapes each service at its management port by service name and loads the tested rules', () => {
    const config = parse(readFileSync(join(PROMETHEUS_DIR, 'prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
    };
    expect(config.rule_files).toEqual(['/etc/prometheus/rules.yml']);
    expect(compose.services.prometheus!.volumes).toContain(
      './deploy/observability/prometheus:/etc/prometheus:ro',
    );
    expect(
      Object.fromEntries(
        config.scrape_configs.map((s) => [s.job_name, s.static_configs[0]!.targets]),
      ),
    ).toEqual(
      Object.fromEntries(
        SERVICES.map((service) => [
          service,
          [`${service}:${requirementsOf(service).defaults.MANAGEMENT_PORT}`],
        ]),
      ),
    );
    for (const service of SERVICES)
      expect(environmentOf(compose.services[service]!).get('MANAGEMENT_HOST')).toBe('0.0.0.0');
    // promtool reads the config as Prometheus would, with the rules where the container mounts them.
    const dir = mkdtempSync(join(tmpdir(), 'prometheus-config-'));
    try {
      writeFileSync(join(dir, 'rules.yml'), readFileSync(RULES_FILE));
      writeFileSync(
        join(dir, 'prometheus.yml'),
        readFileSync(join(PROMETHEUS_DIR, 'prometheus.yml'), 'utf8').replace(
          '/etc/prometheus/rules.yml',
          'rules.yml',
        ),
      );
      expect(promtool(['check', 'config', 'prometheus.yml'], dir)).toMatchObject({ status: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('When Grafana and the collector start, then their provisioning and configuration files are the ones in deploy/observability', () => {
    const mounts = (name: string) =>
      (compose.services[name]!.volumes as string[]).map((v) => v.split(':')[0]!);
    for (const source of [...mounts('grafana'), ...mounts('otel-collector')])
      expect({ source, exists: existsSync(join(repoRoot, source)) }).toEqual({
        source,
        exists: true,
      });
    const collector = parse(
      readFileSync(join(repoRoot, 'deploy/observability/otel-collector.yaml'), 'utf8'),
    ) as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      service: { pipelines: { traces: { receivers: string[] } } };
    };
    expect(collector.receivers.otlp.protocols.http.endpoint).toBe('0.0.0.0:4318');
    expect(collector.service.pipelines.traces.receivers).toEqual(['otlp']);
  });

  test('When the services run under compose, then tracing is off unless the shell names an OTLP endpoint', () => {
    for (const service of SERVICES)
      expect(environmentOf(compose.services[service]!).get('OTEL_EXPORTER_OTLP_ENDPOINT')).toBe(
        placeholder('OTEL_EXPORTER_OTLP_ENDPOINT:-'),
      );
  });
});
