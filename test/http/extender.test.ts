import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimPod } from '../../src/cluster/convert.js';
import { NOT_SYNCED } from '../../src/decision/recording.js';
import {
  deployment, nodes, pv, pvc, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw,
} from '../support/builders.js';
import { fixture, testApp } from '../support/app.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
/** The cluster the fixtures were captured on: 3 zones × 2 nodes, db-0's volume in zone-c. */
const capturedCluster = (): Raw[] => [
  ...nodes(ZONES, 2), statefulSet('db', 3), pvc('data-db-0', { volumeName: 'pv-db-0' }), pv('pv-db-0', 'zone-c', { claim: 'data-db-0' }),
];
const webRS = (): Raw[] => {
  const [deploy, rs] = deployment('web', 5);
  rs!.metadata.name = 'web-6c7d8bd9bc';
  return [deploy!, rs!];
};

describe('POST /filter with the captured kube-scheduler v1.20 requests', () => {
  it('NodeNames mode: db-0 pinned to zone-a, but its volume in zone-c wins', async () => {
    const app = testApp(storeOf(capturedCluster()));
    const res = await app.post('/filter', fixture('filter-nodenames-statefulset-pod.json').body);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body.NodeNames, ['node-c-1', 'node-c-2']);
    assert.equal(body.Nodes, null);
    assert.deepEqual(body.FailedNodes, {});
    assert.equal(body.Error, '');
    assert.equal(app.service.views.workloadLayout('StatefulSet', 'default', 'db')!.conflicts.length, 1);
    assert.equal(app.service.views.workloadLayout('StatefulSet', 'default', 'db')!.conflicts[0]!.pinnedZone, 'zone-a');
    const metrics = await app.metrics.registry.metrics();
    assert.match(metrics, /zonekeeper_pin_volume_conflicts_total\{namespace="default",workload="StatefulSet\/db"\} 1/);
  });

  it('NodeNames mode: when the volume agrees with the pin, other zones fail as unresolvable with a reason', async () => {
    const objects = capturedCluster().filter((o) => o.kind !== 'PersistentVolume');
    objects.push(pv('pv-db-0', 'zone-a', { claim: 'data-db-0' }));
    const app = testApp(storeOf(objects), { config: { extender: { reportRejectedWhenPlaced: true } } });
    const req = fixture('filter-nodenames-statefulset-pod.json').body;
    req.NodeNames = ['node-a-1', 'node-b-1', 'node-c-1'];
    const body = await (await app.post('/filter', req)).json();
    assert.deepEqual(body.NodeNames, ['node-a-1']);
    // Filed under the pin, which decided: the volume only agrees with it.
    assert.equal(body.FailedAndUnresolvableNodes['node-b-1'], 'pinned to zone-a');
    assert.equal(body.FailedNodes['node-b-1'], undefined, 'hard rejections are unresolvable only, by default');
  });

  it('rejected nodes are listed with their reasons when no node passes; when one does, only the decision log keeps them', async () => {
    const objects = capturedCluster().filter((o) => o.kind !== 'PersistentVolume');
    objects.push(pv('pv-db-0', 'zone-a', { claim: 'data-db-0' }));
    const app = testApp(storeOf(objects));
    const req = fixture('filter-nodenames-statefulset-pod.json').body;
    req.NodeNames = ['node-a-1', 'node-b-1', 'node-c-1'];
    const placed = await (await app.post('/filter', req)).json();
    assert.deepEqual(placed.NodeNames, ['node-a-1']);
    assert.deepEqual([placed.FailedNodes, placed.FailedAndUnresolvableNodes], [{}, {}]);
    const [logged] = app.service.views.decisionsFor('default/db-0').slice(-1);
    assert.deepEqual(logged!.rejected.map((r) => [r.count, r.sample]), [[2, ['node-b-1', 'node-c-1']]]);
    assert.equal(logged!.rejected[0]!.reason, 'pinned to zone-a');
    // Nothing passes: every node with its reason, for kube-scheduler's "0/N nodes are available".
    req.NodeNames = ['node-b-1', 'node-c-1'];
    const none = await (await app.post('/filter', req)).json();
    assert.deepEqual(none.NodeNames, []);
    assert.deepEqual(Object.keys(none.FailedAndUnresolvableNodes), ['node-b-1', 'node-c-1']);
    assert.equal(none.FailedAndUnresolvableNodes['node-c-1'], 'pinned to zone-a');
  });

  it('legacyFailedNodes also lists hard rejections in FailedNodes, which is all kube-scheduler < 1.21 reads', async () => {
    const objects = capturedCluster().filter((o) => o.kind !== 'PersistentVolume');
    objects.push(pv('pv-db-0', 'zone-a', { claim: 'data-db-0' }));
    const app = testApp(storeOf(objects), { config: { extender: { legacyFailedNodes: true } } });
    const req = fixture('filter-nodenames-statefulset-pod.json').body;
    req.NodeNames = ['node-b-1'];
    const body = await (await app.post('/filter', req)).json();
    assert.equal(body.FailedNodes['node-b-1'], 'pinned to zone-a');
    assert.equal(body.FailedNodes['node-b-1'], body.FailedAndUnresolvableNodes['node-b-1']);
  });

  it('full-Nodes mode: an unmanaged Deployment pod gets every Node object back unchanged', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 2), ...webRS()]));
    const req = fixture('filter-fullnodes-deployment-pod.json').body;
    const body = await (await app.post('/filter', req)).json();
    assert.equal(body.NodeNames, null);
    assert.deepEqual(body.Nodes.items, req.Nodes.items);
    assert.deepEqual(body.FailedNodes, {});
  });

  it('full-Nodes mode: a WorkloadSpread keeps the pod to subset zone-a, using the labels sent in the request', async () => {
    // The cache has no nodes at all: full-Nodes mode needs none.
    const app = testApp(storeOf([...webRS(), workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]), { config: { extender: { reportRejectedWhenPlaced: true } } });
    const req = fixture('filter-fullnodes-deployment-pod.json').body;
    const body = await (await app.post('/filter', req)).json();
    assert.deepEqual(body.Nodes.items.map((n: Raw) => n.metadata.name).sort(), ['node-a-1', 'node-a-2']);
    assert.deepEqual(body.Nodes.items[0], req.Nodes.items.find((n: Raw) => n.metadata.name === body.Nodes.items[0].metadata.name));
    assert.equal(body.FailedNodes['node-b-1'], 'not in subset a of WorkloadSpread web-ws');
    assert.deepEqual(body.FailedAndUnresolvableNodes, {});
  });

  it('returns only names that were sent', async () => {
    const app = testApp(storeOf(capturedCluster()));
    const req = fixture('filter-nodenames-statefulset-pod.json').body;
    const body = await (await app.post('/filter', req)).json();
    for (const n of body.NodeNames) assert.ok(req.NodeNames.includes(n));
  });
});

describe('POST /prioritize with the captured requests', () => {
  it('NodeNames mode: scores 0..10 for every node sent; one score for all of them is sent as none', async () => {
    const app = testApp(storeOf(capturedCluster()));
    const req = fixture('prioritize-nodenames-statefulset-pod.json').body;
    const res = await app.post('/prioritize', req);
    assert.equal(res.status, 200);
    // kube-scheduler sent the two nodes its filter left, neither holding a pod of the
    // workload: both score 10, which ranks them as no score does.
    assert.deepEqual(await res.json(), []);
    const pod = `${req.Pod.metadata.namespace}/${req.Pod.metadata.name}`;
    assert.deepEqual(app.service.views.decisionsFor(pod).at(-1)!.scores, [{ node: 'node-c-1', score: 10 }, { node: 'node-c-2', score: 10 }]);
    // One of them holding a pod of the workload: the other is preferred, and listed.
    const busy = testApp(storeOf([...capturedCluster(), stsPod('db', 1, { nodeName: 'node-c-1' })]));
    assert.deepEqual(await (await busy.post('/prioritize', req)).json(), [{ Host: 'node-c-2', Score: 10 }]);
  });

  it('full-Nodes mode: nothing for an unmanaged pod (0 everywhere), preferred subset nodes for a WorkloadSpread pod', async () => {
    const req = fixture('prioritize-fullnodes-deployment-pod.json').body;
    // kube-scheduler adds an extender's score to the hosts listed only: [] is 0 on all 6.
    const unmanaged = await (await testApp(storeOf([...nodes(ZONES, 2), ...webRS()])).post('/prioritize', req)).json();
    assert.deepEqual(unmanaged, []);
    const pref = { preferredNodeSelectorTerms: [{ weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a-2'] }] } }] };
    const app = testApp(storeOf([...webRS(), workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2, pref)])]));
    const scores = Object.fromEntries((await (await app.post('/prioritize', req)).json()).map((s: { Host: string; Score: number }) => [s.Host, s.Score]));
    assert.equal(scores['node-a-2'], 10);
    assert.equal(scores['node-a-1'], 5);
    assert.equal(scores['node-b-1'], undefined, 'a 0 is not sent');
    assert.equal(Object.keys(scores).length, 2);
  });
});

describe('prioritize after its filter', () => {
  /** db-3 is pinned to zone-a, where db-0 already runs on node-a-1: the other zone-a nodes score higher. */
  const pinnedCluster = (): Raw[] => [...nodes(ZONES, 3), statefulSet('db', 6), stsPod('db', 0, { nodeName: 'node-a-1' })];
  const ALL = nodes(ZONES, 3).map((n) => n.metadata.name as string);
  const args = (raw: Raw, names: string[]) => ({ Pod: raw, Nodes: null, NodeNames: names });
  /** Counts the names looked up in the cache from here on, one by one or a request's at once. */
  const countLookups = (app: ReturnType<typeof testApp>) => {
    const store = app.source.snapshot as { node(name: string): unknown; resolveNodes(names: readonly string[]): Int32Array };
    const node = store.node.bind(store);
    const resolve = store.resolveNodes.bind(store);
    const seen = { n: 0 };
    store.node = (name: string) => (seen.n++, node(name));
    store.resolveNodes = (names: readonly string[]) => ((seen.n += names.length), resolve(names));
    return seen;
  };
  const byHost = (list: { Host: string; Score: number }[]) => Object.fromEntries(list.map((p) => [p.Host, p.Score]));

  // With placement.spreadNodes (the default) the filter passes only the emptiest nodes and every
  // score is equal; these read prioritize's own ranking, as a configuration without it gets.
  const scoring = { config: { placement: { spreadNodes: false } } };

  it('with spreadNodes, the filter passes the zone\'s nodes holding fewest pods of the workload, and prioritize then adds nothing', async () => {
    const app = testApp(storeOf(pinnedCluster()));
    const db3 = stsPod('db', 3);
    const filtered = await (await app.post('/filter', args(db3, ALL))).json();
    assert.deepEqual(filtered.NodeNames, ['node-a-2', 'node-a-3']);
    assert.deepEqual(await (await app.post('/prioritize', args(db3, filtered.NodeNames))).json(), []);
    // No node of the zone passes kube-scheduler's own filters but node-a-1: it is the one.
    assert.deepEqual((await (await app.post('/filter', args(db3, ['node-a-1', 'node-b-1']))).json()).NodeNames, ['node-a-1']);
    // A pod no policy covers is not spread: every node passes.
    const loose = { ...db3, metadata: { ...db3.metadata, name: 'loose', uid: 'loose', ownerReferences: [] } };
    assert.deepEqual((await (await app.post('/filter', args(loose, ALL))).json()).NodeNames, ALL);
  });

  it('scores the nodes its filter passed as a prioritize alone would, without a lookup per name', async () => {
    const alone = testApp(storeOf(pinnedCluster()), scoring);
    const app = testApp(storeOf(pinnedCluster()), scoring);
    const db3 = stsPod('db', 3);
    const filtered = await (await app.post('/filter', args(db3, ALL))).json();
    assert.deepEqual(filtered.NodeNames, ['node-a-1', 'node-a-2', 'node-a-3']);
    const lookups = countLookups(app);
    const after = byHost(await (await app.post('/prioritize', args(db3, filtered.NodeNames))).json());
    assert.equal(lookups.n, 0);
    assert.deepEqual(after, { 'node-a-2': 10, 'node-a-3': 10 });
    assert.deepEqual(after, byHost(await (await alone.post('/prioritize', args(db3, filtered.NodeNames))).json()));
    const last = app.service.views.decisionsFor('default/db-3').at(-1)!;
    assert.equal(last.passed.count, 3);
    assert.deepEqual(last.scores, [{ node: 'node-a-1', score: 0 }, { node: 'node-a-2', score: 10 }, { node: 'node-a-3', score: 10 }], '/debug/decisions shows the first scores in the order sent');
  });

  it('takes fewer nodes (a later extender rejected some) the same way; anything else is scored afresh', async () => {
    const app = testApp(storeOf(pinnedCluster()), scoring);
    const db3 = stsPod('db', 3);
    await app.post('/filter', args(db3, ALL));
    const lookups = countLookups(app);
    assert.deepEqual(await (await app.post('/prioritize', args(db3, ['node-a-1', 'node-a-3']))).json(), [{ Host: 'node-a-3', Score: 10 }]);
    assert.equal(lookups.n, 0);
    // Not what its filter passed (a node of another zone, out of order): the cache decides, per name.
    await app.post('/filter', args(db3, ALL));
    const before = lookups.n;
    const mixed = ['node-a-3', 'node-b-1', 'node-a-2', 'node-a-1'];
    assert.deepEqual(byHost(await (await app.post('/prioritize', args(db3, mixed))).json()), { 'node-a-3': 10, 'node-a-2': 10 });
    assert.equal(lookups.n - before, mixed.length);
    // A verdict serves one prioritize: a second one is scored afresh too.
    assert.deepEqual(byHost(await (await app.post('/prioritize', args(db3, ['node-a-1', 'node-a-3']))).json()), { 'node-a-3': 10 });
    assert.equal(lookups.n - before, mixed.length + 2);
  });

  it('a WorkloadSpread subset\'s preferred terms still weigh in: in the filter with spreadNodes, else in prioritize', async () => {
    const pref = { preferredNodeSelectorTerms: [{ weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a-2'] }] } }] };
    const objects = () => [...nodes(ZONES, 2), ...webRS(), workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2, pref)])];
    const raw = fixture('filter-fullnodes-deployment-pod.json').body.Pod;
    const names = nodes(ZONES, 2).map((n) => n.metadata.name as string);
    // Both zone-a nodes hold no pod of the workload: the preferred one is passed alone.
    const spreading = testApp(storeOf(objects()));
    assert.deepEqual((await (await spreading.post('/filter', args(raw, names))).json()).NodeNames, ['node-a-2']);
    assert.equal(spreading.service.views.decisionsFor(`default/${raw.metadata.name}`).at(-1)?.rejected.some((r) => /preferred terms/.test(r.reason)), true);
    const app = testApp(storeOf(objects()), scoring);
    const filtered = await (await app.post('/filter', args(raw, names))).json();
    assert.deepEqual(filtered.NodeNames, ['node-a-1', 'node-a-2']);
    const after = byHost(await (await app.post('/prioritize', args(raw, filtered.NodeNames))).json());
    assert.deepEqual(after, { 'node-a-1': 5, 'node-a-2': 10 });
    assert.deepEqual(after, byHost(await (await testApp(storeOf(objects()), scoring).post('/prioritize', args(raw, filtered.NodeNames))).json()));
  });

  it('an unmanaged pod needs no lookup at all: every name passes, nothing is scored', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 2), ...webRS()]));
    const lookups = countLookups(app);
    const lone = { ...stsPod('lone', 0), metadata: { name: 'lone', namespace: 'default', uid: 'pod-lone' } };
    const names = ['node-a-1', 'node-x-9', 'node-b-2'];
    assert.deepEqual((await (await app.post('/filter', args(lone, names))).json()).NodeNames, names);
    assert.deepEqual(await (await app.post('/prioritize', args(lone, names))).json(), []);
    assert.equal(lookups.n, 0);
  });
});

describe('bad input', () => {
  const app = testApp(storeOf(capturedCluster()));
  const valid = () => fixture('filter-nodenames-statefulset-pod.json').body;

  it('malformed JSON is a 400 with a JSON error', async () => {
    const res = await app.post('/filter', '{"Pod": {');
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.field, '(body)');
    assert.match(body.message, /malformed JSON/);
  });

  it('an empty body is a 400', async () => {
    const res = await app.post('/prioritize', '');
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /empty body/);
  });

  for (const [what, mutate, field] of [
    ['no Pod', (b: Raw) => { delete b.Pod; }, 'Pod'],
    ['Pod without uid', (b: Raw) => { delete b.Pod.metadata.uid; }, 'Pod.metadata.uid'],
    ['NodeNames not strings', (b: Raw) => { b.NodeNames = ['ok', 7]; }, 'NodeNames.1'],
    ['neither Nodes nor NodeNames', (b: Raw) => { b.NodeNames = null; }, 'NodeNames'],
    ['a Node without a name', (b: Raw) => { b.NodeNames = null; b.Nodes = { items: [{ metadata: {} }] }; }, 'Nodes.items.0.metadata.name'],
    ['a body that is an array', (b: Raw) => { for (const k of Object.keys(b)) delete b[k]; }, 'Pod'],
  ] as const) {
    it(`${what}: 400 naming ${field}`, async () => {
      const b = valid();
      mutate(b);
      const res = await app.post('/filter', b);
      assert.equal(res.status, 400);
      const body = await res.json();
      assert.equal(body.error, 'bad request');
      assert.equal(body.field, field);
    });
  }

  it('a body over the limit is a 413, and the process keeps serving', async () => {
    const small = testApp(storeOf(capturedCluster()), { config: { extender: { bodyLimitBytes: 8192 } } });
    const b = valid();
    b.NodeNames = Array.from({ length: 2000 }, (_, i) => `node-${i}`);
    const res = await small.post('/filter', b);
    assert.equal(res.status, 413);
    assert.equal((await res.json()).error, 'payload too large');
    const ok = await small.post('/filter', { Pod: valid().Pod, NodeNames: ['node-c-1'] });
    assert.equal(ok.status, 200);
    assert.match(await small.metrics.registry.metrics(), /zonekeeper_bad_requests_total\{verb="filter",status="413"\} 1/);
  });

  it('a failure zonekeeper did not expect is a 500, logged and counted by route; the process keeps serving', async () => {
    const t = testApp(storeOf(capturedCluster()));
    const filter = t.extender.filter;
    t.extender.filter = () => { throw new Error('a bug: internal state 0xdeadbeef'); };
    const res = await t.post('/filter', valid());
    assert.equal(res.status, 500);
    const body = await res.json();
    assert.equal(body.error, 'internal error');
    assert.doesNotMatch(JSON.stringify(body), /a bug|0xdeadbeef/, 'the error text stays in the log, not in the answer');
    assert.match(await t.metrics.registry.metrics(), /zonekeeper_internal_errors_total\{path="\/filter"\} 1/);
    t.extender.filter = filter;
    assert.equal((await t.post('/filter', { Pod: valid().Pod, NodeNames: ['node-c-1'] })).status, 200);
  });

  it('the default limit takes a full Node list of 5,000 nodes', async () => {
    const big = testApp(storeOf([...nodes(ZONES, 1), ...webRS()]));
    const template = fixture('filter-fullnodes-deployment-pod.json').body;
    const images = Array.from({ length: 40 }, (_, i) => ({ names: [`registry.example.com/team/image-${i}@sha256:${'a'.repeat(64)}`, `registry.example.com/team/image-${i}:v1.2.${i}`], sizeBytes: 123456789 }));
    const items = Array.from({ length: 5000 }, (_, i) => {
      const n = structuredClone(template.Nodes.items[i % 6]);
      n.metadata.name = `node-${i}`;
      n.status.images = images;
      return n;
    });
    const text = JSON.stringify({ Pod: template.Pod, Nodes: { items }, NodeNames: null });
    assert.ok(text.length > 40 * 1024 * 1024, `a realistic list is large (${text.length} bytes)`);
    const res = await big.post('/filter', text);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).Nodes.items.length, 5000);
  });

  it('unknown routes are a JSON 404', async () => {
    const res = await app.extenderApp.request('/bind', { method: 'POST', body: '{}' });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as any).message, /POST \/filter/);
  });

  it('an unknown owner, PVC, PV or node gets a decision with a reason', async () => {
    const b = valid();
    b.Pod.metadata.ownerReferences[0].name = 'nobody';
    b.Pod.spec.volumes[0].persistentVolumeClaim.claimName = 'ghost';
    b.NodeNames = ['node-c-1', 'ghost-node'];
    const body = await (await app.post('/filter', b)).json();
    assert.deepEqual(body.NodeNames, []);
    assert.match(body.FailedNodes['ghost-node'], /StatefulSet default\/nobody is not in the cache/);
    assert.equal(body.Error, '');
  });
});

describe('cache not synced', () => {
  it('filter sets Error so that the pod is retried, prioritize adds nothing', async () => {
    const app = testApp(storeOf(capturedCluster()), { synced: () => false });
    const body = await (await app.post('/filter', fixture('filter-nodenames-statefulset-pod.json').body)).json();
    assert.equal(body.Error, NOT_SYNCED);
    assert.equal(body.NodeNames, null);
    const scores = await (await app.post('/prioritize', fixture('prioritize-nodenames-statefulset-pod.json').body)).json();
    assert.deepEqual(scores, []);
    assert.match(await app.metrics.registry.metrics(), /zonekeeper_decisions_total\{verb="filter",outcome="not_ready"\} 1/);
  });
});

describe('waits that end with time', () => {
  it('Adaptive inside rescheduleCriticalSeconds answers Error, so kube-scheduler retries with backoff instead of parking the pod', async () => {
    const subsets = [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')];
    const ws = workloadSpread('ws', { kind: 'Deployment', name: 'web' }, subsets);
    ws.spec.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 5, disableSimulationSchedule: true } };
    const app = testApp(storeOf([...nodes(ZONES, 1), ...webRS(), ws]));
    const req = fixture('filter-fullnodes-deployment-pod.json').body;
    req.Nodes = null;
    req.NodeNames = ['node-b-1', 'node-c-1'];
    const body = await (await app.post('/filter', req)).json();
    assert.match(body.Error, /Adaptive waits 5s before the next subset.*retry in 5s/);
    assert.match(await app.metrics.registry.metrics(), /zonekeeper_decisions_total\{verb="filter",outcome="waiting"\} 1/);
    app.clock.advance(5_000);
    const later = await (await app.post('/filter', req)).json();
    assert.equal(later.Error, '');
    assert.deepEqual(later.NodeNames, ['node-b-1'], 'fell through to subset b');
  });
});

describe('reservations through the protocol', () => {
  it('a released reservation no longer counts once the watch shows the pod bound', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...webRS(), workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b')])]);
    const app = testApp(store);
    const req = fixture('filter-fullnodes-deployment-pod.json').body;
    req.NodeNames = ['node-a-1', 'node-b-1'];
    req.Nodes = null;
    await app.post('/filter', req);
    assert.equal(app.service.views.reservationCount(), 1);
    store.upsert('pods', slimPod({ ...req.Pod, spec: { ...req.Pod.spec, nodeName: 'node-a-1' } }));
    assert.equal(app.service.views.reservationCount(), 0);
  });
});
