import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployment, nodes, pod, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { testApp } from '../support/app.js';

// POST /preempt (docs/design.md#preemption): of kube-scheduler's candidates, the nodes the pod may use.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const FROZEN = { 'zonekeeper.io/zones': ZONES.join(',') };
const victims = (...uids: string[]) => ({ Pods: uids.map((UID) => ({ UID })), NumPDBViolations: 0 });
const args = (pod: Raw, candidates: Record<string, unknown>) => ({ Pod: pod, NodeNameToMetaVictims: candidates });
const everyZone = { 'node-a-1': victims('low-a'), 'node-b-1': victims('low-b'), 'node-c-1': victims('low-c') };

describe('POST /preempt', () => {
  it('a pinned pod keeps only the candidates in its zone, victims as sent', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: FROZEN })]));
    const res = await app.post('/preempt', args(stsPod('db', 2), everyZone));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { NodeNameToMetaVictims: { 'node-c-1': victims('low-c') } });
  });

  it('a candidate without victims is kept; a bound volume decides over the pin', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: FROZEN }), pvc('data-db-0', { volumeName: 'pv-0' }), pv('pv-0', 'zone-b', { claim: 'data-db-0' })]);
    const app = testApp(store);
    const body = await (await app.post('/preempt', args(stsPod('db', 0, { claims: ['data-db-0'] }), { ...everyZone, 'node-b-1': { Pods: null, NumPDBViolations: 0 } }))).json();
    assert.deepEqual(body, { NodeNameToMetaVictims: { 'node-b-1': victims() } });
  });

  it('an unmanaged pod keeps every candidate; whole victim pods (no nodeCacheCapable) come back as UIDs', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 2)]));
    const body = await (await app.post('/preempt', { Pod: rsPod('web', 'x'), NodeNameToVictims: { 'node-a-1': { Pods: [{ metadata: { uid: 'v1' } }], NumPDBViolations: 1 } } })).json();
    assert.deepEqual(body, { NodeNameToMetaVictims: { 'node-a-1': { Pods: [{ UID: 'v1' }], NumPDBViolations: 1 } } });
  });

  it('a WorkloadSpread subset at its quota: a node there is kept only when its victims include a pod of that subset (the victims replayed against the decision)', async () => {
    const ws = workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b', 1)]);
    const inA = rsPod('web', 'in-a', { nodeName: 'node-a-1', annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset: 'a' }) } });
    const inB = rsPod('web', 'in-b', { nodeName: 'node-b-1', annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset: 'b' }) } });
    const other = pod('other-a', undefined, { nodeName: 'node-a-2' });
    const store = () => storeOf([...nodes(ZONES, 2), ...deployment('web', 3), ws, inA, inB, other]);
    const app = testApp(store(), { config: { workloadSpread: { podsBeyondSubsets: 'wait' } } });
    const pending = rsPod('web', 'x');
    const candidates = { 'node-a-2': victims('pod-other-a'), 'node-a-1': victims('pod-web-rs-in-a') };
    // Both subsets full and the pod waits for room (podsBeyondSubsets: wait): evicting a pod of another workload in zone-a frees nothing.
    const body = await (await app.post('/preempt', args(pending, candidates))).json();
    assert.deepEqual(body, { NodeNameToMetaVictims: { 'node-a-1': victims('pod-web-rs-in-a') } });
    // By default (admit, as Kruise) the pod beyond both subsets may go anywhere: both nodes are kept.
    const admitted = await (await testApp(store()).post('/preempt', args(pending, candidates))).json();
    assert.deepEqual(Object.keys(admitted.NodeNameToMetaVictims).sort(), ['node-a-1', 'node-a-2']);
  });

  it('never blind: no candidate while the cache is not synced', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]), { synced: () => false });
    assert.deepEqual(await (await app.post('/preempt', args(stsPod('db', 2), everyZone))).json(), { NodeNameToMetaVictims: {} });
  });

  it('bad bodies get a 400 naming the field; more candidates than the cluster allows too', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]));
    assert.equal((await app.post('/preempt', '{')).status, 400);
    const noPod = await app.post('/preempt', { NodeNameToMetaVictims: {} });
    assert.equal(noPod.status, 400);
    assert.match(JSON.stringify(await noPod.json()), /Pod/);
    const many = Object.fromEntries(Array.from({ length: 10_010 }, (_, i) => [`n${i}`, victims()]));
    const tooMany = await app.post('/preempt', args(stsPod('db', 0), many));
    assert.equal(tooMany.status, 400);
    assert.match(JSON.stringify(await tooMany.json()), /more than the 10003/);
    const longName = await app.post('/preempt', args(stsPod('db', 0), { ['n'.repeat(254)]: victims() }));
    assert.equal(longName.status, 400);
    // A name the cache does not know is never vouched for.
    assert.deepEqual(await (await app.post('/preempt', args(stsPod('db', 0), { 'not-cached': victims() }))).json(), { NodeNameToMetaVictims: {} });
  });
});
