// `zonekeeper audit` as a user runs it: the compiled CLI on `kubectl get -o yaml` and `-o json` files. Its
// run against a real API server is in test/e2e/health.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { deployment, nodes, rsPod, statefulSet, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';

const cli = new URL('../../dist/cli.js', import.meta.url).pathname;
const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** A `kubectl get -A -o yaml` List of the objects, in a file. */
function snapshotFile(objects: Raw[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'zk-audit-')), 'cluster.yaml');
  writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return file;
}

const audit = (...args: string[]) => spawnSync(process.execPath, [cli, 'audit', ...args], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '', HOME: tmpdir() } });

const cluster = [
  ...nodes(ZONES, 1),
  statefulSet('spread', 3, { namespace: 'shop' }), ...[0, 1, 2].map((i) => stsPod('spread', i, { namespace: 'shop', nodeName: `node-${'abc'[i]}-1` })),
  statefulSet('piled', 3, { namespace: 'shop' }), ...[0, 1, 2].map((i) => stsPod('piled', i, { namespace: 'shop', nodeName: 'node-a-1' })),
  statefulSet('other', 2, { namespace: 'team' }), ...[0, 1].map((i) => stsPod('other', i, { namespace: 'team', nodeName: `node-${'ab'[i]}-1` })),
];

describe('zonekeeper audit on a kubectl get -o yaml or -o json file', () => {
  it('names the StatefulSet placed in one zone, first, and exits 1', () => {
    const out = audit('--snapshot', snapshotFile(cluster));
    assert.equal(out.status, 1, out.stderr);
    const lines = out.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+KIND\s+REPLICAS\s+ZONES\s+WANTED\s+OFF-PIN\s+AT-RISK\s+REASON$/);
    assert.match(lines[1]!, /^shop\s+piled\s+StatefulSet\s+3\s+1\s+3\s+2\s+yes\s+1 of 3 zones hold pods/);
    assert.equal(lines.indexOf(''), 4, 'every StatefulSet, at risk first');
    assert.ok(lines.slice(2, 4).every((l) => /\sno\s/.test(l)));
  });

  it('under the table, points at risk rows to /debug/explain of a read-only serve, pod by pod, run as the audit was, on a port of its own; nothing when none is at risk', () => {
    const file = snapshotFile(cluster);
    const out = audit('--snapshot', file);
    // `node dist/cli.js` where the README builds it (no zonekeeper on the PATH); not 9090, which the demo may hold.
    assert.deepEqual(out.stdout.trim().split('\n').slice(5), [
      'Why, pod by pod, and the command that fixes it (read-only: nothing is written):',
      `  node ${relative(process.cwd(), cli)} serve --snapshot ${file} --admin-listen 127.0.0.1:19091`,
      "  curl -s 'localhost:19091/debug/explain?pod=shop/piled-1' | jq -r '.explanation[]'",
      "  curl -s 'localhost:19091/debug/explain?pod=shop/piled-2' | jq -r '.explanation[]'",
      '  or open http://localhost:19091/ui',
    ]);
    assert.doesNotMatch(audit('--snapshot', file, '-n', 'team').stdout, /explain/);
  });

  it('--help says each exit status whole, none cut across lines', () => {
    const help = audit('--help').stdout;
    assert.match(help, /^Exit status: 0 none at risk, 1 some at risk, 2 error/m);
    assert.match(help, /\/debug\/explain/);
  });

  it('-n keeps one namespace (exit 0: nothing there is at risk), -o json gives the same records', () => {
    const file = snapshotFile(cluster);
    const team = audit('--snapshot', file, '-n', 'team');
    assert.equal(team.status, 0, team.stderr);
    assert.match(team.stdout, /^NAMESPACE/);
    assert.doesNotMatch(team.stdout, /shop/);
    const json = audit('--snapshot', file, '-o', 'json');
    assert.equal(json.status, 1);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout)), ['source', 'atRisk', 'workloads'], "/debug/health's shape (it adds kept and more)");
    const body = JSON.parse(json.stdout) as { atRisk: number; workloads: { key: string; atRisk: boolean; causes: Record<string, number> }[] };
    assert.equal(body.atRisk, 1);
    assert.deepEqual(body.workloads[0]!.key, 'shop/StatefulSet/piled');
    assert.equal(body.workloads[0]!.causes['placed-before'], 2);
  });

  it('reads kubectl get -o json output the same, at any size: a file of several slices, cut short, exits 2', () => {
    // 6,000 more pods in a namespace of their own, owned by nothing, 400 before each object of
    // the cluster: the file spans several slices, each holding some of the cluster.
    const filler = Array.from({ length: 6000 }, (_, i) => ({ ...stsPod('filler', i, { namespace: 'filler', nodeName: 'node-a-1' }), metadata: { name: `filler-${i}`, namespace: 'filler', uid: `f-${i}`, labels: { note: '},{"apiVersion":"v1"' } } }));
    const dir = mkdtempSync(join(tmpdir(), 'zk-audit-'));
    const text = JSON.stringify({ apiVersion: 'v1', items: cluster.flatMap((o, i) => [...filler.slice(i * 400, i * 400 + 400), o]), kind: 'List', metadata: { resourceVersion: '' } }, null, 4);
    assert.ok(text.length > 2 * 2 ** 20, `${text.length} bytes`);
    writeFileSync(join(dir, 'cluster.json'), text);
    const json = audit('--snapshot', join(dir, 'cluster.json'), '-o', 'json');
    assert.equal(json.status, 1, json.stderr);
    const fromYaml = JSON.parse(audit('--snapshot', snapshotFile(cluster), '-o', 'json').stdout) as { workloads: unknown[] };
    assert.deepEqual(JSON.parse(json.stdout).workloads, fromYaml.workloads);
    writeFileSync(join(dir, 'short.json'), text.slice(0, text.length - 200));
    const short = audit('--snapshot', join(dir, 'short.json'));
    assert.equal(short.status, 2, short.stdout);
    assert.match(short.stderr, /short\.json: not valid JSON/);
  });

  it("lists pods the zone gate decided without part of their subset's patch, by WorkloadSpread and subset; -o json gives them too", () => {
    const matched = (suffix: string, fields?: string) => rsPod('web', suffix, { namespace: 'shop', nodeName: 'node-a-1', annotations: {
      'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'arch', subset: 'x86' }), ...(fields ? { 'zonekeeper.io/subset-patch-not-applied': fields } : {}) } });
    const objects = [...cluster, ...deployment('web', 3).map((o) => ({ ...o, metadata: { ...o.metadata, namespace: 'shop' } })),
      { ...workloadSpread('arch', { kind: 'Deployment', name: 'web' }, [zoneSubset('x86', 'zone-a')]), metadata: { name: 'arch', namespace: 'shop', uid: 'ws-arch' } },
      matched('b', 'spec.containers[c].resources'), matched('a', 'spec.containers[c].resources'), matched('c')];
    const out = audit('--snapshot', snapshotFile(objects));
    assert.equal(out.status, 1, out.stderr);
    // The settings under which admission would have applied the patch whole are named (under the default it applies none).
    assert.match(out.stdout, /\n\nSubset patches not applied in full \(pods the zone gate decided after their creation; annotation zonekeeper\.io\/subset-patch-not-applied; admission applies a patch whole only where it knows its caller is kube-apiserver, under the default nowhere: set admission\.tls\.clientCAFile \(with admission\.tls\.clientCommonNames\) or admission\.trustNetwork \(with its NetworkPolicy\)\):\n {2}shop\/arch subset x86: 2 pods \(web-rs-a, …\) without spec\.containers\[c\]\.resources\n?$/);
    const json = JSON.parse(audit('--snapshot', snapshotFile(objects), '-o', 'json').stdout);
    assert.deepEqual(json.subsetPatchesNotApplied, [{
      namespace: 'shop', workloadSpread: 'arch', subset: 'x86', notApplied: 'spec.containers[c].resources', pods: 2, example: 'web-rs-a',
      appliedWholeWith: 'admission.tls.clientCAFile (with admission.tls.clientCommonNames) or admission.trustNetwork (with its NetworkPolicy)',
    }]);
    assert.equal(JSON.parse(audit('--snapshot', snapshotFile(cluster), '-o', 'json').stdout).subsetPatchesNotApplied, undefined, 'none: the key is left out');
  });

  it('a file that is not what it claims is an error, never "nothing at risk": empty, not a List, what a failed kubectl left, a directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-audit-'));
    const files: Record<string, string> = {
      'empty.json': '',
      'foo.json': '{"foo":1}',
      'unauthorized.json': 'error: You must be logged in to the server (Unauthorized)\n',
      'services.json': JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }] }),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    for (const [file, message] of [
      ['empty.json', /empty\.json: no Kubernetes objects; expected a List of Kubernetes objects/],
      ['foo.json', /foo\.json: no Kubernetes objects/],
      ['unauthorized.json', /unauthorized\.json: no Kubernetes objects/],
      ['services.json', /services\.json: only kinds zonekeeper does not read \(Service\)/],
      ['.', /: is a directory/],
    ] as const) {
      const path = join(dir, file);
      const out = audit('--snapshot', path);
      assert.equal(out.status, 2, `${file}: ${out.stdout}`);
      assert.match(out.stderr, message);
      assert.ok(out.stderr.includes(path.replace(/\/\.$/, '')), `${file}: the path is named`);
      // serve refuses the same file, rather than serving an empty cluster.
      const served = spawnSync(process.execPath, [cli, 'serve', '--snapshot', path, '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(served.status, 2, `serve ${file}: ${served.stdout}`);
      assert.match(served.stderr, message);
    }
  });

  it('exits 2 with a clear message on a file that is not there, bad YAML, a bad flag, or no cluster at all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-audit-'));
    writeFileSync(join(dir, 'bad.yaml'), 'items: [unclosed');
    writeFileSync(join(dir, 'refusing'), 'apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n');
    for (const [args, message] of [
      [['--kubeconfig', join(dir, 'refusing')], /^zonekeeper: audit: cannot reach the API server https:\/\/127\.0\.0\.1:1: ECONNREFUSED\n$/],
      [['--kubeconfig', join(dir, 'bad.yaml')], /kubeconfig .*bad\.yaml: not valid YAML/],
      [['--snapshot', join(dir, 'missing.yaml')], /missing\.yaml: no such file/],
      [['--snapshot', join(dir, 'bad.yaml')], /bad\.yaml: not valid YAML/],
      [['--output', 'wide', '--snapshot', join(dir, 'bad.yaml')], /^zonekeeper: audit: --output: expected table or json, not wide \(see 'zonekeeper audit --help'\)\n$/],
      [['-n', 'Not_A_Namespace'], /not a namespace name/],
      [[], /no cluster: pass --kubeconfig or --snapshot/],
    ] as const) {
      const out = audit(...args);
      assert.equal(out.status, 2, `${args.join(' ')}: ${out.stdout}`);
      assert.match(out.stderr, message);
    }
  });

  it('exits 2 and says why when the file holds items that are no Kubernetes objects, or no workload to judge; no YAML warning leaks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-audit-'));
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const templated = write('templated.yaml', `${stringify({ apiVersion: 'v1', kind: 'List', items: cluster })}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n---\n{{ .Values.x }}: 1\n`);
    const noMetadata = write('no-metadata.yaml', stringify({ apiVersion: 'v1', kind: 'List', items: [...cluster, { apiVersion: 'v1', kind: 'Pod', spec: {} }] }));
    for (const [file, items] of [[templated, 2], [noMetadata, 1]] as const) {
      const out = audit('--snapshot', file);
      assert.equal(out.status, 2, out.stdout);
      assert.equal(out.stdout, '');
      assert.equal(out.stderr, `zonekeeper: audit: --snapshot ${file}: ${items} of its items are not Kubernetes objects (no kind or no metadata.name); `
      + "audit reads what 'kubectl get -o yaml' or '-o json' prints\n");
    }
    const nodesOnly = write('nodes.yaml', stringify({ apiVersion: 'v1', kind: 'List', items: nodes(ZONES, 1) }));
    const none = audit('--snapshot', nodesOnly);
    assert.equal(none.status, 2, none.stdout);
    assert.match(none.stderr, /^zonekeeper: audit: no workloads to judge in .*nodes\.yaml: no StatefulSet, and no workload with zonekeeper's annotations or a WorkloadSpread\n$/);
    const empty = audit('--snapshot', snapshotFile(cluster), '-n', 'nowhere');
    assert.equal(empty.status, 2, empty.stdout);
    assert.match(empty.stderr, /no workloads to judge in namespace nowhere of /);
  });

  it('one message for a file that is not there, whichever path flag names it (audit and serve)', () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'zk-audit-')), 'missing.yaml');
    const file = snapshotFile(cluster);
    for (const [command, args, flag] of [
      ['audit', ['--config', missing, '--snapshot', file], '--config'], ['audit', ['--snapshot', missing], '--snapshot'], ['audit', ['--kubeconfig', missing], '--kubeconfig'],
      ['serve', ['--config', missing], '--config'], ['serve', ['--snapshot', missing], '--snapshot'], ['serve', ['--kubeconfig', missing], '--kubeconfig'],
    ] as const) {
      const out = spawnSync(process.execPath, [cli, command, ...args, ...(command === 'serve' ? ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'] : [])],
        { encoding: 'utf8', timeout: 20_000, env: { ...process.env, KUBECONFIG: '', HOME: tmpdir() } });
      assert.equal(out.status, 2, `${command} ${flag}: ${out.stdout}`);
      assert.equal(out.stderr, `zonekeeper: ${command === 'audit' ? 'audit: ' : ''}${flag} ${missing}: no such file\n`, `${command} ${flag}`);
    }
  });
});
