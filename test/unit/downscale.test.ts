import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deletionCosts } from '../../src/placement/downscale.js';
import { workloadSpreadCosts } from '../../src/placement/policies/workloadSpread/costs.js';
import { workloadModel } from '../../src/placement/model.js';
import { type SpreadModel } from '../../src/placement/policies/workloadSpread/subsets.js';
import { seededRandom } from '../support/random.js';
import { deployment, node, nodes, pod, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { defaultSettings, pickPods } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ready = (p: Raw, isReady = true, created = '2026-11-21T07:00:00Z') => {
  p.status.conditions = [{ type: 'Ready', status: isReady ? 'True' : 'False' }];
  p.metadata.creationTimestamp = created;
  return p;
};
const pick = (store: ReturnType<typeof storeOf>, n: number, candidates: string[]) => pickPods('default', n, candidates, store, defaultSettings());

describe('downscale pod picker', () => {
  it('6 pods a,a,b,b,c,c with instance IDs a:0,3 b:1,4 c:2,5: a request for 3 chooses IDs 5, 4 and 3', () => {
    const ids: [number, string][] = [[0, 'node-a-1'], [3, 'node-a-2'], [1, 'node-b-1'], [4, 'node-b-2'], [2, 'node-c-1'], [5, 'node-c-2']];
    const pods = ids.map(([id, n]) => ready(rsPod('web', `id${id}`, { nodeName: n, annotations: { 'zonekeeper.io/instance-id': String(id) } })));
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 3, { 'zonekeeper.io/instance-ids': 'true' }), ...pods]);
    const r = pick(store, 3, pods.map((p) => p.metadata.name));
    assert.deepEqual(r, { chosen_pods: ['web-rs-id5', 'web-rs-id4', 'web-rs-id3'], tied_pods: [] });
  });

  it('the KEP tie example, metrics [1,2,2,2] and n=2: chosen [pod-1], tied [pod-2, pod-3, pod-4]', () => {
    const pods = [ready(rsPod('web', 'pod-1', { nodeName: 'node-a-1' }), false), ...['pod-2', 'pod-3', 'pod-4'].map((n) => ready(rsPod('web', n, { nodeName: 'node-a-1' })))];
    const store = storeOf([...nodes(['zone-a'], 1), ...deployment('web', 2), ...pods]);
    assert.deepEqual(pick(store, 2, pods.map((p) => p.metadata.name)), { chosen_pods: ['web-rs-pod-1'], tied_pods: ['web-rs-pod-2', 'web-rs-pod-3', 'web-rs-pod-4'] });
  });

  it('removes from the zone furthest over its target, so zones survive: 2/2/2 down to 3 keeps 1/1/1', () => {
    const spots = ['node-a-1', 'node-a-2', 'node-b-1', 'node-b-2', 'node-c-1', 'node-c-2'];
    const pods = spots.map((n, i) => ready(rsPod('web', `p${i}`, { nodeName: n }), true, `2026-11-21T07:00:0${i}Z`));
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 3), ...pods]);
    const r = pick(store, 3, pods.map((p) => p.metadata.name));
    assert.equal(r.chosen_pods.length + r.tied_pods.length, 3);
    const removed = new Set(r.chosen_pods);
    const left = pods.filter((p) => !removed.has(p.metadata.name)).map((p) => store.node(p.spec.nodeName)!.labels['topology.kubernetes.io/zone']);
    assert.deepEqual(left.sort(), ZONES);
  });

  it('StatefulSet ordinals: the highest first, keeping the sequence prefix', () => {
    const pods = [0, 1, 2, 3, 4, 5].map((i) => ready(stsPod('db', i, { nodeName: `node-${'abc'[i % 3]}-1` })));
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 6), ...pods]);
    assert.deepEqual(pick(store, 2, pods.map((p) => p.metadata.name)).chosen_pods, ['db-5', 'db-4']);
  });

  it('WorkloadSpread: over-quota pods and the lowest-priority subset go first', () => {
    const inA = ['p0', 'p1', 'p2'].map((n, i) => ready(rsPod('web', n, { nodeName: 'node-a-1' }), true, `2026-11-21T07:00:0${i}Z`));
    const inB = ['q0', 'q1', 'q2', 'q3', 'q4'].map((n) => ready(rsPod('web', n, { nodeName: 'node-b-1' })));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), ...inA, ...inB,
      workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    const all = [...inA, ...inB].map((p) => p.metadata.name);
    const one = pick(store, 1, all);
    assert.deepEqual(one.chosen_pods, ['web-rs-p2'], "the newest pod over subset a's max of 2");
    const five = pick(store, 6, all);
    const removed = new Set([...five.chosen_pods, ...five.tied_pods]);
    assert.deepEqual(all.filter((n) => !removed.has(n)).sort(), ['web-rs-p0', 'web-rs-p1'], 'subset b emptied before a');
  });

  it('chooses unknown and unbound candidates first, with warnings; returns only candidates, once each', () => {
    const pods = [ready(rsPod('web', 'bound', { nodeName: 'node-a-1' })), ready(rsPod('web', 'pending'))];
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 1), ...pods]);
    const r = pick(store, 2, ['web-rs-bound', 'ghost', 'web-rs-pending', 'ghost']);
    assert.deepEqual(r.chosen_pods, ['ghost', 'web-rs-pending']);
    assert.deepEqual(r.tied_pods, []);
    assert.equal(r.warnings!.length, 2);
    assert.match(r.warnings!.join(), /ghost is not in the cache/);
    assert.match(r.warnings!.join(), /web-rs-pending is not bound/);
  });

  it('returns every candidate when there are fewer than requested, and is deterministic', () => {
    const pods = [0, 1, 2].map((i) => ready(rsPod('web', `p${i}`, { nodeName: `node-${'abc'[i]}-1` })));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), ...pods]);
    const names = pods.map((p) => p.metadata.name);
    const r = pick(store, 10, names);
    assert.deepEqual([...r.chosen_pods, ...r.tied_pods].sort(), names);
    assert.deepEqual(pick(store, 2, names), pick(store, 2, [...names].reverse()));
  });

  it("deletion costs rank pods in the picker's order: the three lowest leave 1/1/1", () => {
    const spots = ['node-a-1', 'node-a-2', 'node-b-1', 'node-b-2', 'node-c-1', 'node-c-2'];
    const pods = spots.map((n, i) => ready(rsPod('web', `p${i}`, { nodeName: n }), true, `2026-11-21T07:00:0${i}Z`));
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 6, { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' }), ...pods]);
    const costs = deletionCosts(workloadModel({ kind: 'Deployment', namespace: 'default', name: 'web' }, store.workload('Deployment', 'default', 'web'), store, defaultSettings()), store);
    assert.deepEqual([...costs.values()].sort(), [0, 1, 2, 3, 4, 5]);
    const kept = pods.filter((p) => costs.get(p.metadata.name)! >= 3).map((p) => store.node(p.spec.nodeName)!.labels['topology.kubernetes.io/zone']);
    assert.deepEqual(kept.sort(), ZONES);
    void node;
  });

  it("deletion costs for WorkloadSpread pods are Kruise's values", () => {
    const inA = ['p0', 'p1', 'p2'].map((n) => ready(rsPod('web', n, { nodeName: 'node-a-1' })));
    const inB = ready(rsPod('web', 'q0', { nodeName: 'node-b-1' }));
    const nowhere = ready(rsPod('web', 'z0', { nodeName: 'node-c-1' }));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 5), ...inA, inB, nowhere,
      workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    const costs = deletionCosts(workloadModel({ kind: 'Deployment', namespace: 'default', name: 'web' }, store.workload('Deployment', 'default', 'web'), store, defaultSettings()), store);
    assert.deepEqual([costs.get('web-rs-p0'), costs.get('web-rs-p1'), costs.get('web-rs-p2')].sort(), [-100, 200, 200]);
    assert.equal(costs.get('web-rs-q0'), 100);
    assert.equal(costs.get('web-rs-z0'), -300);
  });

  // The picker's WorkloadSpread order against its definition (docs/design.md#workloadspread): at every step,
  // Kruise's costs for the workload one pod smaller, recomputed over what is left, then the
  // within-subset order (highest seat, not ready, newest), then the name.
  it('WorkloadSpread removal order: the incremental picker agrees with recomputing the costs at every step (400 seeded cases)', () => {
    const newerReplicaSet = { ...deployment('web', 0)[1]!, metadata: { ...deployment('web', 0)[1]!.metadata, name: 'web-rs2', uid: 'rs-web2',
      annotations: { 'deployment.kubernetes.io/revision': '2' } } };
    const r = seededRandom(11);
    const maxes = [null, 0, 1, 2, 3, 5, '30%', '50%'];
    const allZones = [...ZONES, 'zone-d'];
    const ref = { kind: 'Deployment', namespace: 'default', name: 'web' } as const;
    for (let c = 0; c < 400; c++) {
      const subsets = ZONES.slice(0, 1 + r.below(3)).map((z) => zoneSubset(`s-${z}`, z, maxes[r.below(maxes.length)]!));
      // Two revisions (web-rs, and web-rs2 the newer): Kruise's costs are per revision.
      const pods = Array.from({ length: r.below(25) }, (_, i) => ready(pod(`p${i}`, { kind: 'ReplicaSet', name: r.below(2) ? 'web-rs' : 'web-rs2' },
        { nodeName: `node-${allZones[r.below(4)]!.slice(5)}-1` }), r.below(4) > 0, new Date(Date.UTC(2026, 10, 21, 7, 0, 0, r.below(10_000) * 1000 + i)).toISOString()));
      const store = storeOf([...nodes(allZones, 1), ...deployment('web', pods.length), newerReplicaSet, ...pods, workloadSpread('ws', { kind: 'Deployment', name: 'web' }, subsets)]);
      const names = pods.map((p) => p.metadata.name).filter(() => r.below(3) > 0);
      const n = 1 + r.below(Math.max(1, names.length));
      const model = workloadModel(ref, store.workload('Deployment', 'default', 'web'), store, defaultSettings()) as SpreadModel;
      const remaining = new Map([...model.pods()].map((p) => [p.name, p]));
      const left = new Set(names);
      const expected: string[] = [];
      while (expected.length < n && left.size > 0) {
        const costs = workloadSpreadCosts(model, remaining.values(), remaining.size - 1, store);
        const key = (name: string) => { const p = remaining.get(name)!; return [costs.get(name)!, -model.seat(p).index, p.ready ? 1 : 0, -p.createdAt]; };
        const best = [...left].sort((a, b) => {
          const [ka, kb] = [key(a), key(b)];
          const d = ka.findIndex((v, i) => v !== kb[i]);
          return d < 0 ? a.localeCompare(b) : ka[d]! - kb[d]!;
        })[0]!;
        expected.push(best);
        left.delete(best);
        remaining.delete(best);
      }
      const got = pick(store, n, names);
      assert.deepEqual(got.chosen_pods, expected, `case ${c}: ${JSON.stringify({ subsets: subsets.map((x) => [x.name, x.maxReplicas]), n, names })}`);
      assert.deepEqual(got.tied_pods, []);
    }
  });
});
