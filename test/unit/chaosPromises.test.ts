import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evictionLedger } from '../chaos/evictions.js';
import { brokenPromises, confirmed, type Disruption, type Observation, type RunPromise } from '../chaos/promises.js';

// The robustness run's judge (test/chaos/promises.ts): it must see each kind of broken promise,
// and not cry wolf on the cases the rules allow.

type Obj = Record<string, any>;
const ZONE = 'topology.kubernetes.io/zone';
const node = (name: string, zone: string): Obj => ({ metadata: { name, labels: { [ZONE]: zone } } });
const NODES = [node('a-1', 'zone-a'), node('b-1', 'zone-b'), node('c-1', 'zone-c')];
const pod = (name: string, app: string, nodeName?: string, o: { annotations?: Record<string, string>; deleting?: boolean } = {}): Obj => ({
  metadata: { name, namespace: 'chaos', labels: { app }, annotations: o.annotations, ...(o.deleting ? { deletionTimestamp: '2026-11-26T00:00:00Z' } : {}) },
  spec: { nodeName }, status: { phase: nodeName ? 'Running' : 'Pending' },
});
const sts = (name: string, zones?: string): Obj => ({ kind: 'StatefulSet', metadata: { name, namespace: 'chaos', annotations: zones ? { 'zonekeeper.io/zones': zones } : {} }, spec: {} });
const observation = (o: Partial<Observation>): Observation => ({
  pods: [], nodes: NODES, workloads: [], volumes: [], claims: [], evictions: [], gateWaits: [], handovers: [], at: 0, ...o,
});

describe('the robustness run\'s promises', () => {
  const pinned: RunPromise[] = [{ kind: 'pinned', namespace: 'chaos', name: 'db', claim: 'data' }];

  it('a pinned pod off its ordinal\'s zone is a violation; on it, or bound before the list is seen, is not', () => {
    const ok = observation({ workloads: [sts('db', 'zone-b,zone-c,zone-a')], pods: [pod('db-0', 'db', 'b-1'), pod('db-1', 'db', 'c-1'), pod('db-2', 'db')] });
    assert.deepEqual(brokenPromises(pinned, ok), []);
    const off = observation({ workloads: [sts('db', 'zone-b,zone-c,zone-a')], pods: [pod('db-0', 'db', 'b-1'), pod('db-4', 'db', 'a-1')] });
    const v = brokenPromises(pinned, off);
    assert.deepEqual(v.map((x) => [x.promise, x.subject]), [['pinned', 'chaos/db-4']]);
    assert.match(v[0]!.detail, /ordinal 4 bound in zone-a, allowed zone-c/);
    assert.deepEqual(brokenPromises(pinned, observation({ workloads: [sts('db')], pods: [pod('db-4', 'db', 'a-1')] })), []);
  });

  it('a bound volume decides where its pod may be', () => {
    const pv = { metadata: { name: 'pv-1' }, spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] }] } } } };
    const claim = { metadata: { name: 'data-db-1', namespace: 'chaos' }, spec: { volumeName: 'pv-1' } };
    const o = (nodeName: string) => observation({ workloads: [sts('db', 'zone-a,zone-b,zone-c')], volumes: [pv], claims: [claim], pods: [pod('db-1', 'db', nodeName)] });
    assert.deepEqual(brokenPromises(pinned, o('a-1')), [], 'its volume\'s zone, not its pin\'s (zone-b)');
    assert.match(brokenPromises(pinned, o('b-1'))[0]!.detail, /allowed zone-a \(its volume\)/);
  });

  it('a zone over its maximum, counting live bound pods only', () => {
    const max: RunPromise[] = [{ kind: 'maximum', namespace: 'chaos', name: 'web', max: { 'zone-c': 1 } }];
    const pods = [pod('w1', 'web', 'c-1'), pod('w2', 'web', 'c-1', { deleting: true }), pod('w3', 'web', 'a-1'), pod('w4', 'web')];
    assert.deepEqual(brokenPromises(max, observation({ pods })), []);
    const v = brokenPromises(max, observation({ pods: [...pods, pod('w5', 'web', 'c-1')] }));
    assert.deepEqual(v.map((x) => x.subject), ['chaos/web@zone-c']);
    assert.match(v[0]!.detail, /2 pods in zone-c, at most 1: w1, w5/);
  });

  it('a quota per revision (a WorkloadSpread\'s, as OpenKruise counts it): a rollout may hold the max of each', () => {
    const quota: RunPromise[] = [{ kind: 'maximum', namespace: 'chaos', name: 'ws', max: { 'zone-a': 1 }, perRevision: true }];
    const rev = (name: string, hash: string) => ({ ...pod(name, 'ws', 'a-1'), metadata: { ...pod(name, 'ws').metadata, labels: { app: 'ws', 'pod-template-hash': hash } } });
    assert.deepEqual(brokenPromises(quota, observation({ pods: [rev('o1', 'old'), rev('n1', 'new')] })), []);
    assert.deepEqual(brokenPromises(quota, observation({ pods: [rev('n1', 'new'), rev('n2', 'new')] })).map((v) => v.subject), ['chaos/ws@zone-a/new']);
  });

  it('instance IDs: two live pods with one is a violation, a terminating holder is not; out of [0, replicas) only once quiet', () => {
    const ids: RunPromise[] = [{ kind: 'instance-ids', namespace: 'chaos', name: 'ids' }];
    const deploy = { kind: 'Deployment', metadata: { name: 'ids', namespace: 'chaos' }, spec: { replicas: 2 } };
    const id = (n: string) => ({ annotations: { 'zonekeeper.io/instance-id': n } });
    const handedOver = observation({ workloads: [deploy], pods: [pod('i1', 'ids', 'a-1', { ...id('0'), deleting: true }), pod('i2', 'ids', 'b-1', id('0'))] });
    assert.deepEqual(brokenPromises(ids, handedOver), []);
    const twice = observation({ workloads: [deploy], pods: [pod('i1', 'ids', 'a-1', id('1')), pod('i2', 'ids', 'b-1', id('1'))] });
    assert.match(brokenPromises(ids, twice)[0]!.detail, /ID 1 held by i1, i2/);
    const high = observation({ workloads: [deploy], pods: [pod('i1', 'ids', 'a-1', id('2'))] });
    assert.deepEqual(brokenPromises(ids, high), [], 'a scale-down in progress');
    assert.deepEqual(brokenPromises(ids, high, { since: 0, settled: false }), [], 'healed, not settled yet');
    assert.match(brokenPromises(ids, high, { since: 0, settled: true })[0]!.detail, /outside \[0, 2\)/);
  });

  it('repair evicting a pod its volume holds is a violation', () => {
    const never: RunPromise[] = [{ kind: 'never-evicted', namespace: 'chaos', name: 'vol' }];
    const event = (name: string) => ({ reason: 'Rebalanced', message: 'evicted', involvedObject: { kind: 'Pod', namespace: 'chaos', name } });
    assert.deepEqual(brokenPromises(never, observation({ evictions: [event('ids-x')] })), []);
    assert.deepEqual(brokenPromises(never, observation({ evictions: [event('vol-1')] })).map((v) => v.subject), ['chaos/vol-1']);
  });

  it('a violation counts only when a second read sees it too', () => {
    const v = (subject: string) => ({ promise: 'pinned' as const, subject, detail: '' });
    assert.deepEqual(confirmed([v('a'), v('b')], [v('b'), v('c')]).map((x) => x.subject), ['b']);
  });
  describe('every Pending pod says what it waits for, once the run is quiet', () => {
    const promise: RunPromise[] = [{ kind: 'pending-reason', namespace: 'chaos', name: 'db', afterSeconds: 60 }];
    const T0 = Date.parse('2026-11-26T12:00:00Z');
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    const pending = (o: { gated?: boolean; scheduled?: Obj } = {}): Obj => {
      const p = pod('db-0', 'db');
      return {
        ...p, metadata: { ...p.metadata, uid: 'u-0', creationTimestamp: at(0) },
        spec: { ...(o.gated ? { schedulingGates: [{ name: 'zonekeeper.io/zone' }] } : {}) },
        status: { phase: 'Pending', conditions: o.scheduled ? [{ type: 'PodScheduled', ...o.scheduled }] : [] },
      };
    };
    const waitEvent = { reason: 'ZoneGateWaiting', message: 'zonekeeper keeps the pod gated: zone-b is at its maxReplicas', involvedObject: { kind: 'Pod', namespace: 'chaos', name: 'db-0', uid: 'u-0' } };
    const judge = (p: Obj, o: { seconds: number; quietSince?: number; gateWaits?: Obj[] }) => {
      const calm = o.quietSince === undefined ? undefined : { since: o.quietSince, settled: false };
      return brokenPromises(promise, observation({ pods: [p], at: T0 + o.seconds * 1000, gateWaits: o.gateWaits ?? [] }), calm);
    };

    it('a gated pod needs zonekeeper\'s ZoneGateWaiting Event about it (by UID)', () => {
      const v = judge(pending({ gated: true }), { seconds: 90, quietSince: T0 });
      assert.deepEqual(v.map((x) => [x.promise, x.subject]), [['pending-reason', 'chaos/db-0']]);
      assert.match(v[0]!.detail, /held by the zone gate without a ZoneGateWaiting Event/);
      assert.deepEqual(judge(pending({ gated: true }), { seconds: 90, quietSince: T0, gateWaits: [waitEvent] }), []);
      const another = { ...waitEvent, involvedObject: { ...waitEvent.involvedObject, uid: 'u-old' } };
      assert.equal(judge(pending({ gated: true }), { seconds: 90, quietSince: T0, gateWaits: [another] }).length, 1, 'the Event of an earlier pod of that name');
    });

    it('an ungated pod needs kube-scheduler\'s Unschedulable message', () => {
      const unschedulable = { status: 'False', reason: 'Unschedulable', message: '0/6 nodes are available: 6 zonekeeper: zone-c is at its maxReplicas (1).' };
      assert.deepEqual(judge(pending({ scheduled: unschedulable }), { seconds: 90, quietSince: T0 }), []);
      assert.match(judge(pending(), { seconds: 90, quietSince: T0 })[0]!.detail, /no PodScheduled condition/);
      assert.match(judge(pending({ scheduled: { status: 'False', reason: 'SchedulerError', message: 'extender unreachable' } }), { seconds: 90, quietSince: T0 })[0]!.detail, /SchedulerError/);
      assert.equal(judge(pending({ scheduled: { ...unschedulable, message: '' } }), { seconds: 90, quietSince: T0 }).length, 1);
    });

    it('judged only once quiet, and only after the time allowed since the later of its creation and the quiet', () => {
      assert.deepEqual(judge(pending(), { seconds: 600 }), [], 'faults in force');
      assert.deepEqual(judge(pending(), { seconds: 59, quietSince: T0 }), []);
      assert.deepEqual(judge(pending(), { seconds: 90, quietSince: T0 + 40_000 }), [], '50 s since the quiet began');
      assert.equal(judge(pending(), { seconds: 101, quietSince: T0 + 40_000 }).length, 1);
      const bound = { ...pending(), spec: { nodeName: 'a-1' } };
      assert.deepEqual(judge(bound, { seconds: 600, quietSince: T0 }), []);
    });
  });

  describe('repair: one disruption at a time, within its budget', () => {
    const promise: RunPromise[] = [{ kind: 'repair-disruptions', namespace: 'chaos', name: 'ids', perMinute: 6 }];
    const T0 = Date.parse('2026-11-26T12:00:00Z');
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    const evicted = (name: string, s: number) => ({ reason: 'Rebalanced', message: 'evicted by zonekeeper', firstTimestamp: at(s), involvedObject: { kind: 'Pod', namespace: 'chaos', name } });
    const onWorkload = { reason: 'Rebalanced', firstTimestamp: at(0), involvedObject: { kind: 'Deployment', namespace: 'chaos', name: 'ids' } };
    const replacement = (name: string, created: number, ready?: number): Obj => {
      const p = pod(name, 'ids', 'a-1');
      return { ...p, metadata: { ...p.metadata, creationTimestamp: at(created) }, status: { phase: 'Running', conditions: ready === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: at(ready) }] } };
    };
    const judge = (o: Partial<Observation>) => brokenPromises(promise, observation({ at: T0 + 3_600_000, ...o }));

    it('a seventh eviction in one second is past a budget of six a minute; one ten seconds later is not', () => {
      const six = [0, 0, 0, 0, 0, 0].map((s, i) => evicted(`ids-${i}`, s));
      assert.deepEqual(judge({ evictions: [...six, onWorkload, evicted('ids-6', 10)] }), []);
      const v = judge({ evictions: [...six, evicted('ids-6', 1)] });
      assert.deepEqual(v.map((x) => x.promise), ['repair-disruptions']);
      assert.match(v[0]!.detail, /ids-6 beyond rebalance.evictionsPerMinute \(6\): 7 in the minute/);
    });

    it('a new Lease holder starts with a full budget of its own', () => {
      const evictions = [...[0, 0, 0, 0, 0, 0].map((s, i) => evicted(`ids-${i}`, s)), evicted('ids-6', 3)];
      assert.equal(judge({ evictions }).length, 1);
      assert.deepEqual(judge({ evictions, handovers: [T0 + 2000] }), []);
    });

    it('a second eviction while a pod made since the first is not Ready is a violation', () => {
      const evictions = [evicted('ids-a', 0), evicted('ids-b', 20)];
      assert.deepEqual(judge({ evictions, pods: [replacement('ids-r', 1, 10)] }), [], 'the replacement was Ready first');
      const v = judge({ evictions, pods: [replacement('ids-r', 1, 30)] });
      assert.deepEqual(v.map((x) => x.subject), ['chaos/ids-b']);
      assert.match(v[0]!.detail, /ids-r, created after the eviction of ids-a, was not Ready/);
      assert.equal(judge({ evictions, pods: [replacement('ids-r', 1)] }).length, 1, 'never Ready');
      assert.deepEqual(judge({ evictions, pods: [replacement('ids-r', 19)] }), [], 'made a moment before: zonekeeper\'s cache may not show it yet');
      assert.deepEqual(judge({ evictions: [evicted('ids-a', 0)], pods: [replacement('ids-r', 1)] }), [], 'one eviction');
    });
  });

  it('zone at a time: an eviction in zone-b, in the API server\'s order, while the seat of one evicted in zone-a had no Ready pod again is a violation; after, in the same zone, or once scaled below the seat, is not', () => {
    const pr: RunPromise[] = [{ kind: 'zone-at-a-time', namespace: 'chaos', name: 'pin' }];
    const at = '2026-11-27T12:00:00Z';
    const member = (name: string, uid: string, nodeName: string, o: { ready?: boolean; evicted?: boolean } = {}): Obj => ({
      metadata: { name, uid, namespace: 'chaos', labels: { app: 'pin' } }, spec: { nodeName },
      status: { conditions: [
        ...(o.ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: at }] : []),
        ...(o.evicted ? [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: at }] : []),
      ] },
    });
    /** The pods' states fed in order (after the nodes and a StatefulSet of `replicas`); the violations judged from what was recorded. */
    const judge = (states: Obj[]) => {
      const disruptions: Disruption[] = [];
      const ledger = evictionLedger('chaos', disruptions, () => Date.parse(at) + 500);
      for (const n of NODES) ledger.node(n);
      ledger.statefulSet({ metadata: { name: 'pin' }, spec: { replicas: 3 } });
      for (const s of states) ledger[s.kind === 'StatefulSet' ? 'statefulSet' : 'pod'](s);
      return brokenPromises(pr, observation({ disruptions }));
    };
    const evictA = member('pin-0', 'a0', 'a-1', { ready: true, evicted: true });
    const evictB = member('pin-1', 'b1', 'b-1', { ready: true, evicted: true });
    const v = judge([evictA, evictB]);
    assert.deepEqual(v.map((x) => [x.promise, x.subject]), [['zone-at-a-time', 'chaos/pin-1']]);
    assert.match(v[0]!.detail, /evicted in zone-b at 2026-11-27T12:00:00.500Z while the seats of pin-0 \(zone-a\), emptied by earlier evictions, had no Ready pod yet/);
    assert.equal(judge([evictA, member('pin-0', 'a0-new', 'a-1'), evictB]).length, 1, 'its successor made, not Ready');
    assert.deepEqual(judge([evictA, member('pin-0', 'a0-new', 'a-1', { ready: true }), evictB]), [], 'its successor Ready before');
    assert.deepEqual(judge([evictA, { metadata: { name: 'pin' }, spec: { replicas: 0 }, kind: 'StatefulSet' }, evictB]), [], 'its seat gone: scaled below it');
    assert.deepEqual(judge([evictA, member('pin-3', 'a3', 'a-1', { ready: true, evicted: true })]), [], 'one zone');
    assert.deepEqual(judge([evictA, evictA, member('pin-0', 'a0', 'a-1', { evicted: true })]), [], 'the same eviction shown again');
  });
});
