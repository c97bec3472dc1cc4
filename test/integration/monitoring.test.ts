// The monitoring component (manifests/components/monitoring/) checked with Debian's promtool:
// the PrometheusRule's rules pass `promtool check rules`, and `promtool test rules` fires and
// clears every alert from synthetic series (test/monitoring/rules.test.yaml). The dashboard's
// queries parse as PromQL, and every series the rules and the dashboard read is one zonekeeper
// exports. Without promtool the promtool parts are skipped, unless ZK_REQUIRE_PROMTOOL=1 (CI).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { memorySource } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { createMetrics, registerHealthGauges, registerStateGauges } from '../../src/metrics/metrics.js';

const component = new URL('../../manifests/components/monitoring/', import.meta.url).pathname;
const tests = new URL('../monitoring/rules.test.yaml', import.meta.url).pathname;
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
if (!promtool && process.env.ZK_REQUIRE_PROMTOOL === '1') throw new Error('ZK_REQUIRE_PROMTOOL=1 but there is no promtool (apt-get install prometheus)');
const skip = promtool ? false : 'no promtool: apt-get install prometheus';

const rule = parse(readFileSync(join(component, 'prometheusrule.yaml'), 'utf8'));
const dashboard = JSON.parse(readFileSync(join(component, 'zonekeeper-dashboard.json'), 'utf8'));
const alerts: { alert: string; expr: string }[] = rule.spec.groups.flatMap((g: { rules: { alert: string; expr: string }[] }) => g.rules);
const dashboardExprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));

function run(args: string[], cwd: string): string {
  const out = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  assert.equal(out.status, 0, `promtool ${args.join(' ')}:\n${out.stdout}${out.stderr}`);
  return out.stdout;
}

describe('the monitoring component', () => {
  it('promtool check rules and promtool test rules: every alert fires and clears', { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-rules-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify(rule.spec));
    copyFileSync(tests, join(dir, 'rules.test.yaml'));
    assert.match(run(['check', 'rules', 'rules.yaml'], dir), new RegExp(`SUCCESS: ${alerts.length} rules found`));
    assert.match(run(['test', 'rules', 'rules.test.yaml'], dir), /SUCCESS/);
  });

  it('each alert has a promtool test that expects it firing', () => {
    const tested = parse(readFileSync(tests, 'utf8')).tests.flatMap((t: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }) =>
      t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname));
    assert.deepEqual([...new Set(tested)].sort(), alerts.map((a) => a.alert).sort());
  });

  it('the dashboard\'s queries parse as PromQL (promtool, as recording rules)', { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-dashboard-'));
    writeFileSync(join(dir, 'dashboard.yaml'), stringify({ groups: [{ name: 'dashboard', rules: dashboardExprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] }));
    assert.match(run(['check', 'rules', 'dashboard.yaml'], dir), new RegExp(`SUCCESS: ${dashboardExprs.length} rules found`));
  });

  it('every series the rules and the dashboard read is one zonekeeper exports', async () => {
    const metrics = createMetrics({ defaults: false });
    const store = new ClusterStore();
    registerStateGauges(metrics, memorySource(store, 'test'), () => 0);
    registerHealthGauges(metrics, () => [], 1000);
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).flatMap((m) => (String(m.type) === 'histogram' ? [`${m.name}_bucket`, `${m.name}_count`, `${m.name}_sum`] : [m.name])));
    exported.add('up');
    const read = new Set([...alerts.map((a) => a.expr), ...dashboardExprs].flatMap((e) => e.match(/\b(?:zonekeeper_[a-z_]+|up)\b(?=\s*[{[)]|\s*$|\s*[=<>!])/g) ?? []));
    assert.ok(read.size >= 12, `found ${[...read].join(', ')}`);
    for (const name of read) assert.ok(exported.has(name), `${name} is not exported`);
  });

  it('the kustomize component names its resources, and the dashboard ConfigMap is labelled for Grafana\'s sidecar', () => {
    const k = parse(readFileSync(join(component, 'kustomization.yaml'), 'utf8'));
    assert.equal(k.kind, 'Component');
    for (const f of k.resources) assert.ok(parseAllDocuments(readFileSync(join(component, f), 'utf8')).length > 0, f);
    assert.deepEqual(k.configMapGenerator[0].options.labels, { grafana_dashboard: '1' });
    assert.equal(dashboard.uid, 'zonekeeper');
  });
});
