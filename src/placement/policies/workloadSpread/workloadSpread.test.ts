import assert from 'node:assert/strict';
import { rejectionOf } from '../../../placement/verdict.js';
import { describe, it } from 'node:test';
import { Reservations } from '../../../decision/reservationLedger.js';
import { resolveMax, subsetKey } from '../../../placement/policies/workloadSpread/subsets.js';
import { slimWorkloadSpread } from '../../../cluster/convertWorkloadSpread.js';
import { ClusterStore } from '../../../cluster/store.js';
import { addObject } from '../../../cluster/source.js';
import {
  deployment, node, nodes, pod, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw,
} from '../../../../test/support/builders.js';
import { defaultSettings, FakeClock, filterAndReserve, filterFor, passedZones } from '../../../../test/support/placement.js';
import { kruiseStatusJson, workloadSpreadStatus } from './status.js';
import { statusDigest } from '../../../cluster/objects.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const web = (subsets: Raw[], strategy?: Raw) => workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, subsets, strategy);

/** Places `count` new pods one after another, as the scheduler would, binding none. */
function placeSequentially(store: ClusterStore, count: number, reservations = new Reservations(30, new FakeClock())): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = filterAndReserve(store, rsPod('web', `p${i}`), reservations);
    out.push(v.passed.length ? passedZones(store, v).join('+') : 'none');
  }
  return out;
}

describe('WorkloadSpread subsets', () => {
  it('subsets max 2 and nil on 5 replicas give 2 and 3', () => {
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 5), web([zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    assert.deepEqual(placeSequentially(store, 5), ['zone-a', 'zone-a', 'zone-b', 'zone-b', 'zone-b']);
  });

  it('a Job target: its parallelism is the replica count, so percent quotas resolve (50%/50% of 4 is 2/2)', () => {
    const job: Raw = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch', namespace: 'default', uid: 'job-batch' }, spec: { parallelism: 4, completions: 100 } };
    const ws = workloadSpread('batch-ws', { kind: 'Job', name: 'batch', apiVersion: 'batch/v1' }, [zoneSubset('a', 'zone-a', '50%'), zoneSubset('b', 'zone-b', '50%')]);
    const store = storeOf([...nodes(ZONES, 2), job, ws]);
    assert.equal(store.workload('Job', 'default', 'batch')!.replicas, 4);
    const reservations = new Reservations(30, new FakeClock());
    const placed = [0, 1, 2, 3, 4].map((i) => {
      const v = filterAndReserve(store, pod(`batch-${i}`, { kind: 'Job', name: 'batch', apiVersion: 'batch/v1' }), reservations);
      return v.passed.length ? passedZones(store, v).join('+') : v.summary;
    });
    assert.deepEqual(placed.slice(0, 4), ['zone-a', 'zone-a', 'zone-b', 'zone-b']);
    // The fifth is beyond both subsets: admitted without one, as Kruise does (podsBeyondSubsets: admit).
    assert.equal(placed[4], 'zone-a+zone-b+zone-c');
  });

  it('rounds percents up: 20%/20%/60% of 7 replicas is 2/2/5', () => {
    assert.deepEqual(['20%', '20%', '60%'].map((p) => resolveMax(p, 7)), [2, 2, 5]);
    assert.equal(resolveMax('20%', 10), 2);
    assert.equal(resolveMax(null, 10), Infinity);
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 7),
      web([zoneSubset('a', 'zone-a', '20%'), zoneSubset('b', 'zone-b', '20%'), zoneSubset('c', 'zone-c', '60%')])]);
    const placed = placeSequentially(store, 10);
    assert.deepEqual(placed, ['zone-a', 'zone-a', 'zone-b', 'zone-b', 'zone-c', 'zone-c', 'zone-c', 'zone-c', 'zone-c', 'zone-a+zone-b+zone-c']);
  });

  it('counts bound pods, and stops double-counting when filter calls come faster than the watch', () => {
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 4), web([zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    const clock = new FakeClock();
    const reservations = new Reservations(30, clock);
    const first = rsPod('web', 'p0');
    assert.deepEqual(passedZones(store, filterAndReserve(store, first, reservations)), ['zone-a']);
    // The same pod retried: its own reservation must not count against it.
    assert.deepEqual(passedZones(store, filterAndReserve(store, first, reservations)), ['zone-a']);
    // The watch now shows p0 bound on node-a-1: its seat is counted once, from the cache.
    addObject(store, rsPod('web', 'p0', { nodeName: 'node-a-1' }));
    assert.deepEqual(passedZones(store, filterAndReserve(store, rsPod('web', 'p1'), reservations)), ['zone-a']);
    assert.deepEqual(passedZones(store, filterAndReserve(store, rsPod('web', 'p2'), reservations)), ['zone-b'], 'a is full: 1 bound + 1 reserved');
    // Reservations expire with their TTL: p1 never showed up, so its seat frees.
    clock.advance(31_000);
    assert.deepEqual(passedZones(store, filterFor(store, rsPod('web', 'p3'), { reservations })), ['zone-a']);
  });

  it('does not count terminating pods', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web([zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b')]),
      rsPod('web', 'old', { nodeName: 'node-a-1', terminating: true })]);
    assert.deepEqual(passedZones(store, filterFor(store, rsPod('web', 'new'))), ['zone-a']);
  });

  it('rejects with FailedNodes (resolvable) and a reason naming the WorkloadSpread and subset', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web([zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    const v = filterFor(store, rsPod('web', 'x'));
    const r = rejectionOf(v, 'node-b-1')!;
    assert.equal(r.rule, 'workloadspread');
    assert.equal(r.unresolvable, false);
    assert.equal(r.reason, 'not in subset a of WorkloadSpread web-ws');
    assert.match(v.summary, /WorkloadSpread web-ws: subset a \(a 0\/2\)/);
  });

  it('waits when every subset is full, with podsBeyondSubsets: wait', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 2), web([zoneSubset('a', 'zone-a', 1)]),
      rsPod('web', 'p0', { nodeName: 'node-a-1' })]);
    const v = filterFor(store, rsPod('web', 'p1'), { settings: { podsBeyondSubsets: 'wait' } });
    assert.equal(v.passed.length, 0);
    assert.match(v.summary, /every subset is full/);
  });

  it('Fixed keeps a pod on its subset even with no feasible node; Adaptive falls through after rescheduleCriticalSeconds', () => {
    const subsets = [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')];
    const onlyB = ['node-b-1', 'node-c-1'];
    const clock = new FakeClock();

    const fixed = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web(subsets, { type: 'Fixed' })]);
    const stuck = filterFor(fixed, rsPod('web', 'x'), { candidates: onlyB, clock, waitingSince: clock.t - 3_600_000 });
    assert.equal(stuck.passed.length, 0, 'Fixed never falls through');

    const adaptive = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web(subsets, { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 5, disableSimulationSchedule: true } })]);
    const waiting = filterFor(adaptive, rsPod('web', 'x'), { candidates: onlyB, clock, waitingSince: clock.t - 4_000 });
    assert.equal(waiting.passed.length, 0, 'still inside rescheduleCriticalSeconds');
    assert.match(waiting.summary, /Adaptive waits 5s/);
    assert.equal(waiting.retryAfterMs, 1_000, 'a wait that ends with time asks to be retried when it ends');
    assert.equal(stuck.retryAfterMs, undefined, 'Fixed waits for the cluster to change, not for time');
    const fallen = filterFor(adaptive, rsPod('web', 'x'), { candidates: onlyB, clock, waitingSince: clock.t - 5_000 });
    assert.deepEqual(fallen.passed, ['node-b-1']);
    assert.equal(fallen.retryAfterMs, undefined);
    assert.equal(fallen.effects.markUnschedulable?.key, 'default/web-ws/a');
    assert.equal(fallen.effects.markUnschedulable?.until, clock.t + 300_000);

    // While marked unschedulable, the next pod skips subset a at once.
    const unschedulable = new Map([[subsetKey(slimWorkloadSpread(web(subsets)), 'a'), clock.t + 300_000]]);
    const next = filterFor(adaptive, rsPod('web', 'y'), { clock, unschedulable });
    assert.deepEqual(passedZones(adaptive, next), ['zone-b']);
  });

  it('Adaptive looks first: a subset the scheduler sent no node of is skipped at once, without a mark', () => {
    const subsets = [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')];
    const clock = new FakeClock();
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web(subsets, { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 60 } })]);
    const v = filterFor(store, rsPod('web', 'x'), { candidates: ['node-b-1', 'node-c-1'], clock });
    assert.deepEqual(v.passed, ['node-b-1']);
    assert.equal(v.retryAfterMs, undefined, 'no wait');
    assert.equal(v.effects.markUnschedulable, undefined, 'the subset is not marked: the next pod looks again');
    assert.match(v.summary, /the scheduler sent no node of a \(the nodes its requiredNodeSelectorTerm takes\)/);
    // The same WorkloadSpread written as v1beta1 is explained in v1beta1's field names.
    const beta = { ...web([]), apiVersion: 'apps.kruise.io/v1beta1', spec: { ...web([]).spec, scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 60 } },
      subsets: subsets.map(({ requiredNodeSelectorTerm, ...s }) => ({ ...s, requiredNodeSelector: requiredNodeSelectorTerm })) } };
    const betaVerdict = filterFor(storeOf([...nodes(ZONES, 1), ...deployment('web', 3), beta]), rsPod('web', 'x'), { candidates: ['node-b-1', 'node-c-1'], clock });
    assert.deepEqual(betaVerdict.passed, ['node-b-1']);
    assert.match(betaVerdict.summary, /the scheduler sent no node of a \(the nodes its requiredNodeSelector takes\)/);
    // Its nodes sent but excluded by the pod's bound volume: that is a wait of rescheduleCriticalSeconds.
    const withVolume = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web(subsets, { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 60 } }),
      pvc('data-x', { volumeName: 'pv-x' }), pv('pv-x', 'zone-c', { claim: 'data-x' })]);
    const held = filterFor(withVolume, rsPod('web', 'x', { claims: ['data-x'] }), { clock, waitingSince: clock.t });
    assert.equal(held.passed.length, 0);
    assert.equal(held.retryAfterMs, 60_000);
  });

  it('Adaptive never gives up the last subset: its pod waits for it, never beyond every subset onto a full subset\'s node', () => {
    // A robustness run's flex: a and b full, zone-b out, zone-c cordoned; kube-scheduler sends zone-a's node only.
    const subsets = [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b', 1), zoneSubset('rest', 'zone-c')];
    const clock = new FakeClock();
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web(subsets, { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } }),
      rsPod('web', 'p0', { nodeName: 'node-a-1' }), rsPod('web', 'p1', { nodeName: 'node-b-1' })]);
    const v = filterFor(store, rsPod('web', 'x'), { candidates: ['node-a-1'], clock, waitingSince: clock.t - 31_000 });
    assert.deepEqual(v.passed, [], 'zone-a\'s subset is full: a third pod there overfills it');
    assert.equal(v.effects.markUnschedulable, undefined, 'the last subset is never marked, as in Kruise');
    assert.match(v.summary, /subset rest/);
    // Where the last subset has a feasible node, the pod goes there.
    assert.deepEqual(passedZones(store, filterFor(store, rsPod('web', 'y'), { clock, waitingSince: clock.t - 31_000 })), ['zone-c']);
  });

  it('respects the subset Kruise already matched (apps.kruise.io/matched-workloadspread)', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web([zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]);
    const p = rsPod('web', 'k', { annotations: { 'apps.kruise.io/matched-workloadspread': '{"name":"web-ws","subset":"b"}' } });
    assert.deepEqual(passedZones(store, filterFor(store, p)), ['zone-b']);
  });

  it('uses cumulative ordinal ranges for StatefulSet targets', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 6),
      workloadSpread('db-ws', { kind: 'StatefulSet', name: 'db' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b', 3), zoneSubset('c', 'zone-c')])]);
    const zones = [0, 1, 2, 3, 4, 5, 6].map((i) => passedZones(store, filterFor(store, stsPod('db', i)))[0]);
    assert.deepEqual(zones, ['zone-a', 'zone-a', 'zone-b', 'zone-b', 'zone-b', 'zone-c', 'zone-c']);
  });

  it('puts tainted nodes in a subset only when the pod or the subset tolerates the taint', () => {
    const taint = [{ key: 'elastic', value: 'true', effect: 'NoSchedule' }];
    const elastic = { requiredNodeSelectorTerm: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['elastic'] }] } };
    const store = storeOf([node('e1', 'zone-a', { labels: { pool: 'elastic' }, taints: taint }), node('n1', 'zone-a'), ...deployment('web', 3),
      web([{ name: 'elastic', ...elastic }])]);
    assert.deepEqual(filterFor(store, rsPod('web', 'x')).passed, []);
    const tolerated = storeOf([node('e1', 'zone-a', { labels: { pool: 'elastic' }, taints: taint }), ...deployment('web', 3),
      web([{ name: 'elastic', ...elastic, tolerations: [{ key: 'elastic', operator: 'Exists' }] }])]);
    // The subset's tolerations reach the pod through OpenKruise's webhook; until then kube-scheduler would refuse e1 too.
    const bare = filterFor(tolerated, rsPod('web', 'x'));
    assert.deepEqual([bare.passed, [...bare.rejected.keys()].map((r) => r.rule)], [[], ['taint']]);
    assert.deepEqual(filterFor(tolerated, rsPod('web', 'x', { tolerations: [{ key: 'elastic', operator: 'Exists' }] })).passed, ['e1']);
  });

  it('a node a bound volume excludes is rejected as hard (the volume), even where a subset rejects it too', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web([zoneSubset('a', 'zone-a', 3)]),
      pvc('data', { volumeName: 'pv-c' }), pv('pv-c', 'zone-c', { claim: 'data' })]);
    const v = filterFor(store, rsPod('web', 'x', { claims: ['data'] }));
    const ruleOf = (n: string) => [...v.rejected].find(([, names]) => names.includes(n))![0];
    assert.deepEqual([ruleOf('node-b-1').rule, ruleOf('node-b-1').unresolvable], ['volume', true]);
    assert.deepEqual([ruleOf('node-a-1').rule, ruleOf('node-a-1').unresolvable], ['volume', true]);
    assert.deepEqual([ruleOf('node-c-1').rule, ruleOf('node-c-1').unresolvable], ['workloadspread', false]);
  });

  it('reads v1beta1 field names', () => {
    const ws = slimWorkloadSpread({
      metadata: { name: 'b', namespace: 'default' },
      spec: { targetRef: { kind: 'Deployment', name: 'web' }, subsets: [{ name: 's', maxReplicas: '50%', requiredNodeSelector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] }, preferredNodeSelector: [{ weight: 5, preference: { matchExpressions: [{ key: 'p', operator: 'Exists' }] } }] }] },
    });
    assert.equal(ws.subsets[0]!.requiredNodeSelectorTerm?.matchExpressions[0]!.key, 'k');
    assert.equal(ws.subsets[0]!.preferredNodeSelectorTerms[0]!.weight, 5);
    assert.equal(ws.subsets[0]!.maxReplicas, '50%');
  });

  it('waits when the ReplicaSet is unknown and a WorkloadSpread may target it', () => {
    const store = storeOf([...nodes(ZONES, 1), web([zoneSubset('a', 'zone-a', 2)])]);
    const v = filterFor(store, rsPod('web', 'x'));
    assert.equal(v.passed.length, 0);
    assert.match(v.summary, /ReplicaSet default\/web-rs is not in the cache yet/);
  });
});

describe('WorkloadSpread status (standalone mode)', () => {
  it('per subset: its pods, what it still misses (−1 unlimited), and reserved pods not counted yet as creatingPods', () => {
    const bound = [0, 1].map((i) => rsPod('web', `b${i}`, { nodeName: 'node-a-1' }));
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 6), ...bound, web([zoneSubset('a', 'zone-a', 3), zoneSubset('b', 'zone-b')])]);
    const reservations = new Reservations(30, new FakeClock());
    const pending = rsPod('web', 'new');
    addObject(store, pending);
    assert.deepEqual(passedZones(store, filterAndReserve(store, pending, reservations)), ['zone-a']);
    const ws = [...store.workloadSpreads('default')][0]!;
    const { status } = workloadSpreadStatus({ ...ws, generation: 4 }, store, defaultSettings(), reservations, 0);
    assert.equal(status.observedGeneration, 4);
    assert.deepEqual(status.subsetStatuses.map((s) => [s.name, s.replicas, s.missingReplicas, Object.keys(s.creatingPods)]), [
      ['a', 2, 0, ['web-rs-new']], ['b', 0, -1, []],
    ]);
    // The digest of what was computed equals the digest of the same status read back.
    const again = slimWorkloadSpread({ ...web([]), status: kruiseStatusJson(status) });
    assert.equal(again.statusDigest, statusDigest(status.observedGeneration, status.subsetStatuses));
  });

  it("a subset's patch is kept by subset name, for admission to apply", () => {
    const ws = slimWorkloadSpread(web([zoneSubset('a', 'zone-a', 2, { patch: { metadata: { labels: { x: 'y' } } } }), zoneSubset('b', 'zone-b')]));
    assert.deepEqual([...ws.patches], [['a', { metadata: { labels: { x: 'y' } } }]]);
  });
});

describe('WorkloadSpread: a running pod keeps its subset\'s seat when its node gains a taint (found by a robustness run)', () => {
  it('a zone-b node unreachable: its pod still counts in subset b (max 1), so the next pod is not sent there too', () => {
    const ws = workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b', 1), zoneSubset('rest', 'zone-c')]);
    const unreachable = [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }];
    const out = { ...node('node-b-1', 'zone-b'), spec: { taints: unreachable } };
    const placed = [rsPod('web', 'p0', { nodeName: 'node-a-1' }), rsPod('web', 'p1', { nodeName: 'node-a-1' }), rsPod('web', 'p2', { nodeName: 'node-b-1' })];
    const store = storeOf([...nodes(['zone-a', 'zone-c'], 1), out, node('node-b-2', 'zone-b'), ...deployment('web', 4), ws, ...placed]);
    const v = filterFor(store, rsPod('web', 'p3'));
    assert.equal(v.subset?.subset.name, 'rest', v.summary);
    assert.match(v.summary, /b is full: 1\/1/);
  });
});

describe('WorkloadSpread: refused to zonekeeper after it watched them (found by a robustness run)', () => {
  it('a pod its last known WorkloadSpread targets waits, naming why; it is never placed as if it had none', () => {
    const ws = workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b')]);
    const store = storeOf([...nodes(['zone-a', 'zone-b'], 1), ...deployment('web', 3), ...deployment('other', 1), ws, rsPod('web', 'p0', { nodeName: 'node-a-1' })]);
    assert.equal(filterFor(store, rsPod('web', 'p1')).subset?.subset.name, 'b');
    store.setKindOff('workloadspreads', 'WorkloadSpreads are off: zonekeeper may not list apps.kruise.io/workloadspreads');
    const v = filterFor(store, rsPod('web', 'p1'));
    assert.equal(v.passed.length, 0, v.summary);
    assert.match(v.summary, /WorkloadSpreads are off: zonekeeper may not list/);
    assert.equal(filterFor(store, rsPod('other', 'q0')).managed, false, 'a workload no WorkloadSpread targets is not held');
  });
});
