import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { zoneStability } from '../../src/controllers/zoneStability.js';
import { slimNode } from '../../src/cluster/convert.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { workloadHealth } from '../../src/placement/health.js';
import { workloadModel } from '../../src/placement/model.js';
import type { DecisionState } from '../../src/placement/policy.js';
import { rebalanceRequested, repairStep, type RepairInputs } from '../../src/placement/repairChoice.js';
import { deployment, node, nodes, pv, pvc, rsPod, statefulSet, stsPod, storeOf, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { defaultSettings, FakeClock } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NOW = Date.parse('2026-11-23T12:00:00Z');
const at = (zone: string) => `node-${zone.slice(5)}-1`;
const state: DecisionState = { settings: { ...defaultSettings(), zoneFallback: 'adaptive' }, reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map() };
const FROZEN = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zones-frozen-at': '2026-11-23T10:00:00Z', 'zonekeeper.io/rebalance': 'true' };
/** Every zone with a schedulable node, stable for an hour. */
const stable: RepairInputs['zones'] = { schedulableNodes: () => 1, stableSince: () => NOW - 3_600_000 };

/** Nodes with room: repair moves a pod only towards a zone that can take it. */
const roomy = () => nodes(ZONES, 1).map((n) => ({ ...n, status: { ...n.status, allocatable: { cpu: '8', memory: '32Gi', pods: '110' } } }));

function step(objects: Raw[], o: Partial<RepairInputs> = {}, store: ClusterStore = storeOf([...roomy(), ...objects])) {
  const w = store.workload('StatefulSet', 'default', 'db')!;
  const model = workloadModel({ kind: 'StatefulSet', namespace: 'default', name: 'db' }, w, store, state.settings, state);
  const health = workloadHealth(model, w, store, state, { now: NOW, settleSeconds: 60 })!;
  return repairStep(model, w, health, store, { now: NOW, zoneStableSeconds: 300, zones: stable, evicted: undefined, ...o });
}
const pods = (zones: string[], extra: (i: number) => Raw = () => ({})) =>
  zones.map((z, i) => stsPod('db', i, { nodeName: at(z), ready: true, createdAt: '2026-11-23T11:00:00Z', ...extra(i) }));

describe('repair: which pod moves next, or why none may', () => {
  it('a pod that fell back to zone-a moves towards its seat\'s zone', () => {
    const s = step([statefulSet('db', 3, { annotations: FROZEN }), ...pods(['zone-a', 'zone-a', 'zone-c'])]);
    assert.equal(s.kind, 'evict');
    if (s.kind !== 'evict') return;
    assert.deepEqual([s.pod.name, s.from, s.to], ['db-1', 'zone-a', 'zone-b']);
    assert.match(s.why, /its seat is in zone-b, it runs in zone-a \(fallback\)/);
  });

  it('a pod the gate (or admission) wrote into another zone moves: its replacement comes from the template, not its own node selector', () => {
    // db-1's seat is zone-b; it runs in zone-a with the zone term a decision wrote into its spec (a rollout's ID swap, a fallback).
    const written = (i: number) => (i === 1 ? { nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } } : {});
    const s = step([statefulSet('db', 3, { annotations: FROZEN }), ...pods(['zone-a', 'zone-a', 'zone-c'], written)]);
    assert.equal(s.kind, 'evict', s.kind === 'wait' ? s.reason : '');
    if (s.kind !== 'evict') return;
    assert.deepEqual([s.pod.name, s.from, s.to], ['db-1', 'zone-a', 'zone-b']);
  });

  it('nothing to do for a workload on its layout', () => {
    assert.deepEqual(step([statefulSet('db', 3, { annotations: FROZEN }), ...pods(ZONES)]), { kind: 'none' });
  });

  it('waits while a wanted zone has no schedulable node, and until it has been stable for zoneStableSeconds', () => {
    const objects = [statefulSet('db', 3, { annotations: FROZEN }), ...pods(['zone-a', 'zone-a', 'zone-c'])];
    const noB = step(objects, { zones: { schedulableNodes: (_k, z) => (z === 'zone-b' ? 0 : 1), stableSince: () => NOW - 3_600_000 } });
    assert.deepEqual(noB, { kind: 'wait', reason: 'zone zone-b has no schedulable node' });
    const flapping = step(objects, { zones: { schedulableNodes: () => 1, stableSince: (_k, z) => (z === 'zone-b' ? NOW - 20_000 : NOW - 3_600_000) } });
    assert.deepEqual(flapping, { kind: 'wait', reason: 'zone zone-b changed 20s ago: waiting until it has been stable for 300s' });
  });

  it('never moves a pod its bound volume holds: reported, not evicted', () => {
    const s = step([
      statefulSet('db', 3, { annotations: FROZEN }), pvc('data-db-1', { volumeName: 'pv-1' }), pv('pv-1', 'zone-a', { claim: 'data-db-1' }),
      ...pods(['zone-a', 'zone-a', 'zone-c'], (i) => (i === 1 ? { claims: ['data-db-1'] } : {})),
    ]);
    assert.equal(s.kind, 'wait');
    assert.match((s as { reason: string }).reason, /held there by its bound volume/);
  });

  it('one at a time: waits while the evicted pod is there, then for its replacement (any pod of the workload) to be bound and Ready, remembered or not', () => {
    // db-1 and db-2 both fell back into zone-a; db-1 was evicted first.
    const sts = statefulSet('db', 3, { annotations: FROZEN });
    const evicted = { uid: 'pod-db-1', name: 'db-1' };
    assert.match((step([sts, ...pods(['zone-a', 'zone-a', 'zone-a'])], { evicted }) as { reason: string }).reason, /db-1 was evicted and is still there/);
    const replacement = stsPod('db', 1, { uid: 'pod-db-1-new', createdAt: '2026-11-23T11:59:50Z' });
    const pending = step([sts, ...pods(['zone-a', 'zone-a', 'zone-a']).filter((_, i) => i !== 1), replacement], { evicted });
    assert.match((pending as { reason: string }).reason, /^pod db-1 is Pending: repair moves a pod only while every pod of the workload is available$/);
    // A new Lease holder remembers no eviction: the cluster shows the same wait.
    assert.deepEqual(step([sts, ...pods(['zone-a', 'zone-a', 'zone-a']).filter((_, i) => i !== 1), replacement]), pending);
    assert.match((step([sts, ...pods(['zone-a', 'zone-a', 'zone-a']).filter((_, i) => i !== 1)]) as { reason: string }).reason, /^1 of 3 replicas have no pod/);
    const done = step([sts, ...pods(['zone-a', 'zone-b', 'zone-a'], (i) => (i === 1 ? { uid: 'pod-db-1-new' } : {}))], { evicted });
    assert.equal(done.kind, 'evict');
    assert.equal((done as { pod: { name: string } }).pod.name, 'db-2');
  });

  it('rebalanceRequested: the annotation, or rebalance: true in the zone preferences', () => {
    const store = storeOf([
      statefulSet('a', 1, { annotations: { 'zonekeeper.io/rebalance': 'true' } }),
      statefulSet('b', 1, { annotations: { 'zonekeeper.io/zone-preferences': '{"rebalance":true,"zones":{"*":{"weight":1}}}' } }),
      statefulSet('c', 1, { annotations: { 'zonekeeper.io/zone-preferences': '{"rebalance":false,"zones":{"*":{"weight":1}}}' } }),
      statefulSet('d', 1),
    ]);
    assert.deepEqual(['a', 'b', 'c', 'd'].map((n) => rebalanceRequested(store.workload('StatefulSet', 'default', n)!)), [true, true, false, false]);
  });
});

describe('repair of a WorkloadSpread: its subsets judged by their own nodes, not by their names', () => {
  // Subsets named as users name them: subset-a (zone-a), ecs (nodes labelled pool=ecs, in zone-b), elastic (zone-c).
  const allocatable = { cpu: '8', memory: '32Gi', pods: '110' };
  const withRoom = (n: Raw) => ({ ...n, status: { ...n.status, allocatable } });
  const cluster = (ecs: { unschedulable?: boolean } = {}) => [
    withRoom(node('node-a-1', 'zone-a')), withRoom(node('node-b-1', 'zone-b', { labels: { pool: 'ecs' }, ...ecs })), withRoom(node('node-b-2', 'zone-b')),
    withRoom(node('node-c-1', 'zone-c')),
  ];
  const ecs = { name: 'ecs', maxReplicas: 2, requiredNodeSelectorTerm: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['ecs'] }] } };
  const spread = workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('subset-a', 'zone-a', 2), ecs, zoneSubset('elastic', 'zone-c')]);
  // Four replicas: subset-a wants 2 and holds 3 (the newest over its quota), ecs wants 2 and holds 1.
  const pods = ['node-a-1', 'node-a-1', 'node-a-1', 'node-b-1'].map((n, i) => rsPod('web', `p${i}`, { nodeName: n, ready: true, createdAt: `2026-11-23T11:0${i}:00Z` }));
  const hourAgo: RepairInputs['zones'] = { schedulableNodes: () => 0, stableSince: () => NOW - 3_600_000 };
  function spreadStep(o: Partial<RepairInputs> = {}, store = storeOf([...cluster(), ...deployment('web', 4, { 'zonekeeper.io/rebalance': 'true' }), spread, ...pods])) {
    const ref = { kind: 'Deployment' as const, namespace: 'default', name: 'web' };
    const w = store.workload('Deployment', 'default', 'web')!;
    const model = workloadModel(ref, w, store, state.settings, state);
    const health = workloadHealth(model, w, store, state, { now: NOW, settleSeconds: 60 })!;
    assert.equal(health.domain, 'subset');
    return repairStep(model, w, health, store, { now: NOW, zoneStableSeconds: 300, zones: hourAgo, evicted: undefined, ...o });
  }

  it('the pod over subset-a\'s quota moves towards ecs, whose node is in zone-b', () => {
    const s = spreadStep();
    assert.equal(s.kind, 'evict', s.kind === 'wait' ? s.reason : s.kind);
    if (s.kind !== 'evict') return;
    assert.deepEqual([s.pod.name, s.from, s.to], ['web-rs-p2', 'subset-a', 'ecs']);
    assert.match(s.why, /subset-a holds more than its share, ecs fewer/);
    assert.deepEqual(Object.keys(s.stableFor).sort(), ['ecs', 'subset-a']);
  });

  it('waits while ecs\'s own node is cordoned (zone-b still has a schedulable node), and while a zone of its nodes is not stable', () => {
    const cordoned = spreadStep({}, storeOf([...cluster({ unschedulable: true }), ...deployment('web', 4, { 'zonekeeper.io/rebalance': 'true' }), spread, ...pods]));
    assert.deepEqual(cordoned, { kind: 'wait', reason: 'subset ecs has no schedulable node' });
    const flapping = spreadStep({ zones: { schedulableNodes: () => 0, stableSince: (_k, z) => (z === 'zone-b' ? NOW - 20_000 : NOW - 3_600_000) } });
    assert.deepEqual(flapping, { kind: 'wait', reason: 'subset ecs changed 20s ago: waiting until it has been stable for 300s' });
  });

  it('with the controller\'s own zone stability (from the store): an hour of stable zones, the same move', () => {
    const store = storeOf([...cluster(), ...deployment('web', 4, { 'zonekeeper.io/rebalance': 'true' }), spread, ...pods]);
    const zones = zoneStability(store, new FakeClock(NOW - 3_600_000), ['topology.kubernetes.io/zone']);
    const s = spreadStep({ zones }, store);
    assert.deepEqual(s.kind === 'evict' ? [s.pod.name, s.to] : s, ['web-rs-p2', 'ecs']);
  });
});

describe('zone stability: when a zone last gained or lost its last schedulable node', () => {
  it('cordoning the only node stamps the zone, a heartbeat does not, uncordoning stamps it again', () => {
    const clock = new FakeClock(NOW);
    const store = storeOf(nodes(ZONES, 1));
    const zones = zoneStability(store, clock);
    assert.deepEqual([zones.schedulableNodes('topology.kubernetes.io/zone', 'zone-b'), zones.stableSince('topology.kubernetes.io/zone', 'zone-b')], [1, NOW]);
    clock.advance(10_000);
    store.upsert('nodes', slimNode(node('node-b-1', 'zone-b', { unschedulable: true })));
    assert.deepEqual([zones.schedulableNodes('topology.kubernetes.io/zone', 'zone-b'), zones.stableSince('topology.kubernetes.io/zone', 'zone-b')], [0, NOW + 10_000]);
    clock.advance(10_000);
    store.upsert('nodes', slimNode(node('node-b-1', 'zone-b', { unschedulable: true })));
    assert.equal(zones.stableSince('topology.kubernetes.io/zone', 'zone-b'), NOW + 10_000, 'an unchanged node changes nothing');
    clock.advance(10_000);
    store.upsert('nodes', slimNode(node('node-b-1', 'zone-b')));
    assert.deepEqual([zones.schedulableNodes('topology.kubernetes.io/zone', 'zone-b'), zones.stableSince('topology.kubernetes.io/zone', 'zone-b')], [1, NOW + 30_000]);
    // A second node joining a zone that has one already is no change of the zone.
    store.upsert('nodes', slimNode(node('node-b-2', 'zone-b')));
    assert.deepEqual([zones.schedulableNodes('topology.kubernetes.io/zone', 'zone-b'), zones.stableSince('topology.kubernetes.io/zone', 'zone-b')], [2, NOW + 30_000]);
    store.delete('nodes', 'node-b-2');
    assert.equal(zones.schedulableNodes('topology.kubernetes.io/zone', 'zone-b'), 1);
  });
});
