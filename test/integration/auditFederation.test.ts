// `zonekeeper audit --karmada --snapshot` as a user runs it: the compiled CLI on the bundled example
// (config/demo-federation.yaml) and on files cut from it; the same objects served by a Karmada control
// plane and its members (list/watch servers on 127.0.0.1) give the live `audit --karmada` the same table.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { FakeApiServer } from '../support/fakeApiServer.js';

type Raw = Record<string, any>;
const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = join(ROOT, 'dist/cli.js');
const EXAMPLE = 'config/demo-federation.yaml';
const env = { ...process.env, KUBECONFIG: '', HOME: tmpdir() };
const audit = (...args: string[]) => spawnSync(process.execPath, [CLI, 'audit', '--karmada', ...args], { encoding: 'utf8', cwd: ROOT, env });

/** The example's documents: Karmada's List, then one List per member. */
const documents = () => parseAllDocuments(readFileSync(join(ROOT, EXAMPLE), 'utf8')).map((d) => d.toJS() as Raw) as [Raw, ...Raw[]];
const memberOf = (list: Raw): string => list.metadata.annotations['zonekeeper.io/member'];

/** A multi-document YAML file of `docs` (a string: as it is). */
function file(docs: unknown[], name = 'federation.yaml'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'zk-audit-karmada-')), name);
  writeFileSync(path, docs.map((d) => (typeof d === 'string' ? d : stringify(d))).join('---\n'));
  return path;
}

/** The table's rows by binding: its plan, and what is unplaced. */
function plans(stdout: string): Record<string, string> {
  const [head, ...rows] = stdout.trim().split('\n');
  assert.match(head!, /^NAMESPACE\s+BINDING\s+REPLICAS\s+PLAN\s+UNPLACED\s+MEMBERS$/);
  return Object.fromEntries(rows.filter((r) => /^\S+\s+\S+-(deployment|statefulset)\s/.test(r)).map((r) => {
    const [ns, binding, replicas, ...rest] = r.split(/\s{3,}/);
    return [`${ns}/${binding}`, `${replicas}: ${rest[0]} (unplaced ${rest[1]})`];
  }));
}

describe('zonekeeper audit --karmada --snapshot', () => {
  it('plans each binding of the example that names zonekeeper: Duplicated, static weights 1:2:3, a StatefulSet by its preferences; exit 0', () => {
    const out = audit('--snapshot', EXAMPLE);
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(plans(out.stdout), {
      'db/cockroach-statefulset': '5: member1=3 member2=1 member3=1 (unplaced 0)',
      'shop/api-deployment': '6: member1=1 member2=2 member3=3 (unplaced 0)',
      'shop/web-deployment': '2: member1=2 member2=2 member3=2 (unplaced 0)',
    }, 'shop/cache-deployment is karmada-scheduler\'s: not planned');
    assert.match(out.stdout, /member1: ready; weight 1, min 2, room for 12; member2: ready; weight 1, room for 8; member3: ready; weight 1, max 1, room for 4$/m);

    const json = JSON.parse(audit('--snapshot', EXAMPLE, '-o', 'json').stdout);
    assert.equal(json.source, EXAMPLE);
    assert.deepEqual(json.members.map((m: Raw) => [m.name, m.healthy, m.zones.join(' ')]),
      [['member1', true, 'eu-west-1a eu-west-1b eu-west-1c'], ['member2', true, 'eu-central-1a eu-central-1b'], ['member3', true, 'us-east-1a us-east-1b']]);
    const db = json.workloads.find((w: Raw) => w.binding === 'db/cockroach-statefulset');
    assert.deepEqual(db.ordinals, { member1: 0, member2: 1000, member3: 2000 }, 'one StatefulSet\'s ordinals across members, a range each');
    assert.deepEqual(db.members.map((m: Raw) => [m.cluster, m.bound]), [['member1', 2], ['member2', 0], ['member3', 0]], 'the pods each member runs');
  });

  it('reads members as `kubectl annotate --local -o yaml` prints them (each object annotated, a document each), and -n keeps one namespace', () => {
    const [karmada, ...lists] = documents();
    const annotated = lists.flatMap((l) => l.items.map((o: Raw) => ({ ...o, metadata: { ...o.metadata, annotations: { 'zonekeeper.io/member': memberOf(l) } } })));
    const out = audit('--snapshot', file([karmada, ...annotated]));
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout, audit('--snapshot', EXAMPLE).stdout);
    assert.deepEqual(Object.keys(plans(audit('--snapshot', EXAMPLE, '-n', 'db').stdout)), ['db/cockroach-statefulset']);
  });

  it('a member whose nodes the file lacks is named, its capacity unknown: exit 1', () => {
    const out = audit('--snapshot', file(documents().filter((d) => d.metadata.annotations?.['zonekeeper.io/member'] !== 'member3')));
    assert.equal(out.status, 1, out.stderr);
    assert.match(out.stdout.trimEnd(), /\n\nmember member3 cannot be read: the file holds none of its nodes \(annotation zonekeeper\.io\/member: member3\); its capacity is unknown$/);
  });

  it('a file that is not what it claims, or holds no binding naming zonekeeper, is an error (exit 2), said on stderr', () => {
    const [karmada, ...lists] = documents();
    const unnamed = lists.map((l) => ({ ...l, metadata: { resourceVersion: '' } }));
    const elsewhere = { ...lists[0], metadata: { annotations: { 'zonekeeper.io/member': 'member9' } } };
    const othersOnly = { ...karmada, items: karmada.items.filter((o: Raw) => o.kind !== 'ResourceBinding' || o.spec.schedulerName !== 'zonekeeper') };
    const cases: [string, RegExp][] = [
      [file(['kind: List\nitems: ['], 'broken.yaml'), /broken\.yaml: not valid YAML/],
      [file([{ apiVersion: 'v1', kind: 'List', items: lists.flatMap((l) => l.items) }], 'one-cluster.yaml'), /one-cluster\.yaml: no Karmada Cluster \(cluster\.karmada\.io\) in it; \S+ says how to write one/],
      [file([karmada, ...unnamed]), /: 10 nodes, pods and workloads name no member \(annotation zonekeeper\.io\/member, on each or on their List\)/],
      [file([karmada, elsewhere]), /: nodes and pods of member9, which no Cluster in it names \(member1, member2, member3\)/],
      [file([karmada, { metadata: { name: 'x' } }]), /: 1 of its items are not Kubernetes objects \(no kind or no metadata\.name\)/],
      [file([othersOnly, ...lists]), /no binding names zonekeeper \(schedulerName zonekeeper\) in \S+ \(bindings naming another scheduler: 1\)$/m],
      [join(tmpdir(), 'no-such-federation.yaml'), /--snapshot \S+no-such-federation\.yaml: /],
    ];
    for (const [path, message] of cases) {
      const out = audit('--snapshot', path);
      assert.equal(out.status, 2, `${path}: ${out.stdout}`);
      assert.match(out.stderr, message);
      if (/says how/.test(out.stderr)) assert.ok(out.stderr.includes(' docs/user-guide.md#zonekeeper-audit-across-clusters says how'), out.stderr);
      assert.equal(out.stdout, '');
    }
    const ns = audit('--snapshot', EXAMPLE, '-n', 'nowhere');
    assert.equal(ns.status, 2);
    assert.match(ns.stderr, /no binding names zonekeeper \(schedulerName zonekeeper\) in config\/demo-federation\.yaml in namespace nowhere$/m);
  });

  it('the same objects on a Karmada control plane, its members read through its cluster proxy: the live audit prints the same', async () => {
    const [karmada, ...lists] = documents();
    const server = await new FakeApiServer().start();
    const members = await Promise.all(lists.map(() => new FakeApiServer().start()));
    try {
      for (const o of karmada.items) server.put(o);
      lists.forEach((l, i) => {
        server.proxies.set(memberOf(l), members[i]!);
        for (const o of l.items) members[i]!.put(o);
      });
      // Async: the servers answer from this process.
      const live: { stdout: string; stderr: string; code?: number } = await promisify(execFile)(
        process.execPath, [CLI, 'audit', '--karmada', '--kubeconfig', server.kubeconfig()], { cwd: ROOT, env }).catch((e: Raw) => e as never);
      assert.equal(live.code ?? 0, 0, live.stderr);
      assert.equal(live.stdout, audit('--snapshot', EXAMPLE).stdout);
    } finally {
      await Promise.all([server, ...members].map((s) => s.stop()));
    }
  });
});
