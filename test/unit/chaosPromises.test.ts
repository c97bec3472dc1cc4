import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brokenPromises, confirmed, type Observation, type RunPromise } from '../chaos/promises.js';

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
const observation = (o: Partial<Observation>): Observation => ({ pods: [], nodes: NODES, workloads: [], volumes: [], claims: [], evictions: [], ...o });

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
    assert.match(brokenPromises(ids, high, true)[0]!.detail, /outside \[0, 2\)/);
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
});
