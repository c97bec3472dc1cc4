import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { deployment, node, nodes, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { fixture, testApp } from '../support/app.js';
import { LAYOUT_PODS_PER_ANSWER } from '../../src/placement/layout.js';
import { memorySource } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { probeRoutes } from '../../src/server/adminRoutes.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
// The user's own list: with a derived one, adoption would order it after the volume and pods.
const cluster = () => storeOf([
  ...nodes(ZONES, 2), statefulSet('db', 6, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }), pvc('data-db-0', { volumeName: 'pv-db-0' }), pv('pv-db-0', 'zone-c', { claim: 'data-db-0' }),
  stsPod('db', 1, { nodeName: 'node-b-1' }), stsPod('db', 2, { nodeName: 'node-a-1' }), stsPod('db', 3),
]);
const get = async (app: ReturnType<typeof testApp>, path: string): Promise<{ status: number; body: any }> => {
  const res = await app.adminApp.request(path);
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text() };
};

describe('admin listener', () => {
  it("a WorkloadSpread workload: its pending pods' subsets and each subset's zone, and no zone plan or targets (its subsets decide)", async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 3),
      workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b')]),
      rsPod('web', 'bound', { nodeName: 'node-a-1' }), rsPod('web', 'p1'), rsPod('web', 'p2')]));
    const { body } = await get(app, '/debug/workloads/default/deployment/web');
    assert.deepEqual(body.workloadSpread.pending, { 'web-rs-p1': 'b', 'web-rs-p2': 'b' });
    assert.deepEqual(body.workloadSpread.subsetZones, { a: 'zone-a', b: 'zone-b' });
    assert.deepEqual([body.federatedPlan, body.targets], [undefined, undefined]);
  });

  it('GET /debug lists every debug route the admin listener serves, once', async () => {
    const test = testApp(cluster());
    const app = test.adminApp;
    const { status, body } = await get(test, '/debug');
    assert.equal(status, 200);
    const listed = body.debug.map((v: { path: string }) => v.path.replace(/\[.*$|\?.*$/, '').replace(/\/[A-Z]+/g, '/:x'));
    const served = [...new Set(app.routes.filter((r) => r.method === 'GET' && /^\/debug\/./.test(r.path)).map((r) => r.path.replace(/\/:[a-z]+/g, '/:x')))];
    assert.deepEqual([...listed].sort(), served.filter((p) => p !== '/debug/').sort());
  });

  it('GET / leads to the layout page', async () => {
    const res = await testApp(cluster()).adminApp.request('/');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/ui');
  });

  it('a wrong method gets 405 with Allow, as on the extender listener; a path with no route 404; HEAD is GET without the body', async () => {
    const app = testApp(cluster()).adminApp;
    for (const [method, path] of [['POST', '/debug/health'], ['DELETE', '/debug/workloads/default/deployment/web'], ['PUT', '/ui'], ['POST', '/metrics'], ['PATCH', '/']] as const) {
      const res = await app.request(path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      assert.match(((await res.json()) as { message: string }).message, new RegExp(`^${method} ${path.replace(/\//g, '\\/')}: this path serves GET and HEAD$`));
    }
    for (const method of ['GET', 'POST']) {
      const res = await app.request('/debug/nothing', { method });
      assert.equal(res.status, 404, method);
      assert.equal(res.headers.get('allow'), null);
    }
    const head = await app.request('/healthz', { method: 'HEAD' });
    assert.equal(head.status, 200);
    const probes = probeRoutes({ source: memorySource(new ClusterStore(), 'test'), serving: () => true });
    assert.equal((await probes.request('/readyz', { method: 'POST' })).status, 405);
    assert.equal((await probes.request('/metrics', { method: 'POST' })).status, 404, 'the probe listener serves health only');
  });

  it('a /debug/explain dry run is not counted in zonekeeper_decisions_total, as docs/operations.md says', async () => {
    const app = testApp(cluster());
    assert.equal((await get(app, '/debug/explain?pod=default/db-3')).status, 200);
    const { body } = await get(app, '/metrics');
    assert.doesNotMatch(String(body), /zonekeeper_decisions_total\{[^}]*verb="explain"/);
    const row = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').split('\n').find((l) => l.startsWith('| `zonekeeper_decisions_total`'))!;
    assert.match(row, /a `\/debug\/explain` dry run is not counted/);
    assert.doesNotMatch(row.split('; a `/debug/explain`')[0]!, /explain/);
  });

  it('healthz is ok; readyz is 200 when synced and 503 when not', async () => {
    assert.equal((await get(testApp(cluster()), '/healthz')).body, 'ok');
    const ready = await get(testApp(cluster()), '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ready, true);
    const notReady = await get(testApp(cluster(), { synced: () => false }), '/readyz');
    assert.equal(notReady.status, 503);
  });

  it('readyz details say whether the API server serves MutatingAdmissionPolicies (the policy transport), a detail that never fails readiness', async () => {
    const source = memorySource(new ClusterStore(), 'test');
    for (const policy of [{ apiServed: false, seatTable: false }, { apiServed: true, seatTable: true }]) {
      const probes = probeRoutes({ source, serving: () => true, policy });
      const res = await probes.request('/readyz');
      assert.equal(res.status, 200);
      assert.deepEqual((await res.json() as { policy: unknown }).policy, policy);
    }
    const none = await probeRoutes({ source, serving: () => true }).request('/readyz');
    assert.equal('policy' in (await none.json() as object), false, 'no API server asked (a file source): nothing said');
  });

  it('/metrics exports every family the operations surface promises', async () => {
    const app = testApp(cluster());
    await app.post('/filter', fixture('filter-nodenames-statefulset-pod.json').body);
    const { body } = await get(app, '/metrics');
    for (const name of [
      'zonekeeper_request_duration_seconds_bucket{le="0.0001",verb="filter"}', 'zonekeeper_decisions_total{verb="filter",outcome="placed"} 1',
      'zonekeeper_cache_objects{kind="pods"} 3', 'zonekeeper_cache_synced{kind="nodes"} 1', 'zonekeeper_watch_restarts_total',
      'zonekeeper_pin_volume_conflicts_total{namespace="default",workload="StatefulSet/db"} 1', 'zonekeeper_reservations 1',
    ]) assert.ok(String(body).includes(name), `missing ${name}`);
  });

  it('workload health in /metrics: per workload up to metrics.maxWorkloadSeries (at risk first), every workload in the totals; /debug/health', async () => {
    const piled = (name: string, zones: string[]) => [statefulSet(name, 3, { namespace: 'h', annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }),
      ...zones.map((z, i) => stsPod(name, i, { namespace: 'h', nodeName: `node-${z.slice(5)}-1` }))];
    const store = storeOf([...nodes(ZONES, 1), ...piled('aaa', ZONES), ...piled('bbb', ZONES), ...piled('zzz', ['zone-a', 'zone-a', 'zone-a'])]);
    const app = testApp(store, { config: { metrics: { maxWorkloadSeries: 2 } } });
    const { body } = await get(app, '/metrics');
    const lines = String(body).split('\n');
    const series = (name: string) => lines.filter((l) => l.startsWith(`${name}{`));
    assert.deepEqual(series('zonekeeper_workload_at_risk'), [
      'zonekeeper_workload_at_risk{namespace="h",kind="StatefulSet",name="zzz"} 1', 'zonekeeper_workload_at_risk{namespace="h",kind="StatefulSet",name="aaa"} 0',
    ], 'two series: the one at risk first, then by name; bbb only in the totals');
    assert.ok(lines.includes('zonekeeper_workload_zones{namespace="h",kind="StatefulSet",name="zzz"} 1'));
    assert.ok(lines.includes('zonekeeper_workload_zones_wanted{namespace="h",kind="StatefulSet",name="zzz"} 3'));
    assert.ok(lines.includes('zonekeeper_workload_pods_off_pin{namespace="h",kind="StatefulSet",name="zzz"} 2'));
    assert.ok(lines.includes('zonekeeper_workloads_at_risk 1'));
    assert.ok(lines.includes('zonekeeper_workloads_managed 3'));
    assert.ok(lines.includes('zonekeeper_pods_off_pin{cause="unknown"} 2'), `a list frozen by hand, no freeze time, strict placement: ${series('zonekeeper_pods_off_pin').join()}`);
    const health = await get(app, '/debug/health?namespace=h');
    assert.equal(health.body.atRisk, 1);
    assert.deepEqual(health.body.workloads.map((w: { key: string }) => w.key), ['h/StatefulSet/zzz', 'h/StatefulSet/aaa', 'h/StatefulSet/bbb']);
    // The layout page's data carries each workload's health, at risk first.
    const layouts = await get(app, '/debug/layouts?namespace=h');
    assert.deepEqual(layouts.body.workloads.map((w: { workload: { name: string }; health: { atRisk: boolean } }) => [w.workload.name, w.health.atRisk]), [['zzz', true], ['aaa', false], ['bbb', false]]);
  });

  it('/debug/layouts takes a namespace name or nothing, and refuses anything else', async () => {
    const app = testApp(cluster());
    const all = await get(app, '/debug/layouts');
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.workloads.map((w: { workload: { name: string } }) => w.workload.name), ['db']);
    assert.deepEqual((await get(app, '/debug/layouts?namespace=other')).body.workloads, []);
    assert.equal((await get(app, `/debug/layouts?namespace=${'a'.repeat(63)}`)).status, 200);
    for (const bad of ['Default', 'a_b', '-a', `${'a'.repeat(64)}`, 'a.b']) {
      const res = await get(app, `/debug/layouts?namespace=${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.field, 'namespace');
    }
  });

  it('/debug/layouts lists at most LAYOUT_PODS_PER_ANSWER pods, shared between its workloads (the small ones whole), the first seats first, and counts the rest', async () => {
    // Three StatefulSets of 1,200 bound pods (sc misses ordinal 1100) and one of 5: 3,604 > the 2,000 an answer lists.
    const objects = [...nodes(ZONES, 2)];
    for (const [name, replicas] of [['sa', 1200], ['sb', 1200], ['sc', 1200], ['sd', 5]] as const) {
      objects.push(statefulSet(name, replicas));
      for (let i = 0; i < replicas; i++) if (!(name === 'sc' && i === 1100)) objects.push(stsPod(name, i, { nodeName: `node-${ZONES[i % 3]!.slice(5)}-1` }));
    }
    const app = testApp(storeOf(objects));
    const { status, body } = await get(app, '/debug/layouts');
    assert.equal(status, 200);
    const listed = body.workloads.map((w: { pods: unknown[] }) => w.pods.length);
    assert.equal(listed.reduce((a: number, b: number) => a + b, 0), LAYOUT_PODS_PER_ANSWER);
    assert.deepEqual(listed, [665, 665, 665, 5], 'the small workload whole, the others alike');
    assert.deepEqual(body.workloads.map((w: { podsOmitted: number }) => w.podsOmitted), [535, 535, 534, 0]);
    for (const w of body.workloads) {
      assert.deepEqual(w.pods.map((p: { index: number }) => p.index), Array.from({ length: w.pods.length }, (_, i) => i), `${w.workload.name}: the first seats, in order`);
      assert.equal(w.pods.at(-1).pinnedZone, ZONES[(w.pods.length - 1) % 3]);
      const bound = Object.values(w.countsPerZone as Record<string, { bound: number }>).reduce((n, c) => n + c.bound, 0);
      assert.equal(bound, w.pods.length + w.podsOmitted, `${w.workload.name}: counts include the pods not listed`);
      assert.equal(w.sequence.length, w.pods.length, `${w.workload.name}: the sequence as far as the pods listed`);
    }
    assert.deepEqual(body.workloads[2].ordinals.missing, [1100], 'missing ordinals come from every pod, listed or not');
    // One workload alone lists all of its 1,200.
    const one = await get(app, '/debug/workloads/default/statefulset/sc');
    assert.equal(one.body.pods.length, 1199);
    assert.equal(one.body.podsOmitted, 0);
    assert.equal(one.body.sequence.length, 1200);
  });

  it('/debug/workloads shows zone list, sequence, counts per zone, reservations and conflicts', async () => {
    const app = testApp(cluster());
    await app.post('/filter', fixture('filter-nodenames-statefulset-pod.json').body);
    const { status, body } = await get(app, '/debug/workloads/default/statefulset/db');
    assert.equal(status, 200);
    assert.deepEqual(body.zones, { list: ZONES, source: 'annotation', unusable: [], growing: [], excluded: [] }, 'frozen on first placement');
    assert.equal(body.workload.annotations['zonekeeper.io/zones'], ZONES.join(','));
    assert.deepEqual(body.sequence, ['zone-a', 'zone-b', 'zone-c', 'zone-a', 'zone-b', 'zone-c']);
    assert.deepEqual(body.targets, { 'zone-a': 2, 'zone-b': 2, 'zone-c': 2 }, 'the layout for its 6 replicas');
    assert.deepEqual(body.countsPerZone, { 'zone-a': { bound: 1, reserved: 0 }, 'zone-b': { bound: 1, reserved: 0 }, 'zone-c': { bound: 0, reserved: 1 } });
    const db2 = body.pods.find((p: { name: string }) => p.name === 'db-2');
    assert.equal(db2.inPinnedZone, false, 'db-2 sits in zone-a but belongs in zone-c');
    assert.equal(body.reservations.length, 1);
    assert.equal(body.conflicts.length, 1);
    assert.equal(body.conflicts[0].pinnedZone, 'zone-a');
    assert.equal((await get(app, '/debug/workloads/default/widget/db')).status, 400);
    assert.equal((await get(app, '/debug/workloads/default/sts/nope')).status, 404);
  });

  it('/debug/decisions keeps recent decisions with per-node reasons', async () => {
    const app = testApp(cluster());
    const req = fixture('filter-nodenames-statefulset-pod.json').body;
    req.NodeNames = ['node-a-1', 'node-c-1'];
    await app.post('/filter', req);
    const { body } = await get(app, '/debug/decisions?pod=default/db-0');
    assert.equal(body.decisions.length, 1);
    const d = body.decisions[0];
    assert.equal(d.outcome, 'placed');
    assert.deepEqual(d.passed.sample, ['node-c-1']);
    assert.equal(d.rejected[0].rule, 'volume');
    assert.deepEqual(d.rejected[0].sample, ['node-a-1']);
    assert.equal((await get(app, '/debug/decisions?pod=nonsense')).status, 400);
  });

  it("/debug/explain honours the cached pod's tolerations (a tainted WorkloadSpread subset)", async () => {
    const taint = [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }];
    const [deploy, rs] = deployment('web', 4);
    const objects = [
      node('node-a-1', 'zone-a', { taints: taint }), node('node-b-1', 'zone-b'), deploy!, rs!,
      workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')]),
    ];
    const tolerant = rsPod('web', 'tolerant', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }] });
    const plain = rsPod('web', 'plain');
    const app = testApp(storeOf([...objects, tolerant, plain]));
    const explain = async (pod: string) => (await get(app, `/debug/explain?pod=default/${pod}`)).body;
    assert.deepEqual((await explain('web-rs-tolerant')).passed.sample, ['node-a-1'], 'subset a, its taint tolerated');
    const without = await explain('web-rs-plain');
    assert.deepEqual(without.passed.sample, [], 'subset a, but the taint is not tolerated');
    // Filed under the rule that decides it: kube-scheduler's TaintToleration would refuse the node too.
    assert.equal(without.failed['node-a-1'], 'taint: node has a taint the pod does not tolerate');
  });

  it('/debug/explain dry-runs a cached pod against every cached node without reserving', async () => {
    const app = testApp(cluster());
    const { status, body } = await get(app, '/debug/explain?pod=default/db-3');
    assert.equal(status, 200);
    // db-2 runs on node-a-1: the pod is spread to the zone's other node.
    assert.deepEqual(body.passed.sample, ['node-a-2']);
    assert.equal(body.failed['node-a-1'], "node-spread: holds more of this workload's pods than other nodes the pod may use");
    assert.equal(body.failed['node-b-1'], 'zone-pin: pinned to zone-a');
    assert.match(body.summary, /^pinned: ordinal 3 → zone-a \(3 zones\)/);
    assert.equal(app.service.views.reservationCount(), 0);
    assert.equal((await get(app, '/debug/explain?pod=default/ghost')).status, 404);
    assert.equal((await get(app, '/debug/explain')).status, 400);
  });

  it('/debug/cache reports every kind with its count and sync state', async () => {
    const { body } = await get(testApp(cluster()), '/debug/cache');
    const pods = body.kinds.find((k: { kind: string }) => k.kind === 'pods');
    assert.equal(pods.objects, 3);
    assert.equal(pods.synced, true);
    assert.equal(body.kinds.length, 16, "9 core kinds (jobs too), 2 of autoscaler Events, Cluster Autoscaler's status ConfigMap, 3 of OpenKruise and Karpenter's NodePools");
    assert.equal(body.clusterAutoscaler, null, 'no Cluster Autoscaler in this cluster');
  });
});
