import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { fleetHealth, type WorkloadHealth } from '../../src/placement/health.js';
import type { DecisionState } from '../../src/placement/policy.js';
import type { PlacementSettings } from '../../src/placement/settings.js';
import { memorySource } from '../../src/cluster/source.js';
import { healthTracker } from '../../src/controllers/layoutHealth.js';
import { createLogger } from '../../src/common/logger.js';
import { slimPod } from '../../src/cluster/convert.js';
import { deployment, nodes, pod, pv, pvc, rsPod, statefulSet, stsPod, storeOf, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NOW = Date.parse('2026-11-23T12:00:00Z');
const node = (zone: string) => `node-${zone.replace(/^zone-/, '')}-1`;

function healthOf(objects: Raw[], settings: Partial<PlacementSettings> = {}, now = NOW): WorkloadHealth[] {
  const store = storeOf([...nodes(ZONES, 1), ...objects]);
  const state: DecisionState = {
    settings: { ...defaultSettings(), ...settings }, reservations: new Reservations(30),
    pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map(),
  };
  return fleetHealth(store, state, { now, settleSeconds: 60 });
}
const frozen = (zones: string[], at?: string) => ({ 'zonekeeper.io/zones': zones.join(','), ...(at ? { 'zonekeeper.io/zones-frozen-at': at } : {}) });

describe('health: every managed workload judged against where its seats should be', () => {
  it('a StatefulSet placed 3/0/0 before zonekeeper: 1 of 3 zones, two pods placed-before, at risk', () => {
    const [h] = healthOf([statefulSet('db', 3), ...[0, 1, 2].map((i) => stsPod('db', i, { nodeName: node('zone-a') }))]);
    assert.equal(h!.key, 'default/StatefulSet/db');
    assert.deepEqual([h!.zones, h!.wanted, h!.offPin, h!.causes['placed-before'], h!.skew], [1, 3, 2, 2, 3]);
    assert.equal(h!.atRisk, true);
    assert.match(h!.reason, /1 of 3 zones hold pods/);
    // The list it is judged by is the one adoption would freeze: ordinal 0 keeps zone-a.
    assert.deepEqual(h!.offPinPods.map((o) => o.pod).sort(), ['db-1', 'db-2']);
  });

  it('a healthy pinned layout is not at risk, and has no scale-down risk', () => {
    const [h] = healthOf([statefulSet('db', 6, { annotations: frozen(ZONES) }), ...[0, 1, 2, 3, 4, 5].map((i) => stsPod('db', i, { nodeName: node(ZONES[i % 3]!) }))]);
    assert.deepEqual([h!.zones, h!.wanted, h!.offPin, h!.skew, h!.atRisk, h!.reason], [3, 3, 0, 0, false, 'ok']);
    assert.equal(h!.scaleDown, undefined);
  });

  it('all zones covered, but two low ordinals share a zone: scaling down to 4 would keep two zones', () => {
    // Ordinal 1 fell back to zone-a after the freeze (adaptive): 2 is in c, 3 in a, 4 in b, 5 in c.
    const zone = ['zone-a', 'zone-a', 'zone-c', 'zone-a', 'zone-b', 'zone-c'];
    const [h] = healthOf([
      statefulSet('db', 6, { annotations: frozen(ZONES, '2026-11-23T10:00:00Z') }),
      ...zone.map((z, i) => stsPod('db', i, { nodeName: node(z), createdAt: '2026-11-23T11:00:00Z' })),
    ], { zoneFallback: 'adaptive' });
    assert.deepEqual([h!.zones, h!.wanted, h!.offPin, h!.causes.fallback], [3, 3, 1, 1]);
    // Kept by ordinal: 0..3 sit in a, a, c, a; at 2 and 3 too, but 4 is the nearest size that breaks.
    assert.deepEqual(h!.scaleDown, { replicas: 4, zones: 2, wanted: 3 });
    assert.equal(h!.atRisk, true);
    assert.match(h!.reason, /at 4 replicas it would keep 2 of 3 zones/);
  });

  it('causes: a pod older than the freeze was placed before; strict placement leaves the rest unknown', () => {
    const [h] = healthOf([
      statefulSet('db', 3, { annotations: frozen(ZONES, '2026-11-23T10:00:00Z') }),
      stsPod('db', 0, { nodeName: node('zone-b'), createdAt: '2026-11-23T09:00:00Z' }),
      stsPod('db', 1, { nodeName: node('zone-b'), createdAt: '2026-11-23T11:00:00Z' }),
      stsPod('db', 2, { nodeName: node('zone-c'), createdAt: '2026-11-23T11:00:00Z' }),
    ]);
    assert.deepEqual(h!.offPinPods.map((o) => [o.pod, o.cause]), [['db-0', 'placed-before']]);
    assert.equal(h!.causes.unknown, 0);
  });

  it('a pod held off its pin by its bound volume: cause volume, held, and the zone it cannot fill is reported', () => {
    const [h] = healthOf([
      statefulSet('db', 3, { annotations: frozen(ZONES) }),
      pvc('data-db-2', { volumeName: 'pv-2' }), pv('pv-2', 'zone-a', { claim: 'data-db-2' }),
      stsPod('db', 0, { nodeName: node('zone-a') }), stsPod('db', 1, { nodeName: node('zone-b') }),
      stsPod('db', 2, { nodeName: node('zone-a'), claims: ['data-db-2'] }),
    ]);
    assert.deepEqual(h!.offPinPods, [{ pod: 'db-2', zone: 'zone-a', pinnedZone: 'zone-c', cause: 'volume', heldByVolume: true }]);
    assert.equal(h!.atRisk, true);
    assert.match(h!.reason, /zone-c empty/);
  });

  it('pods still being placed may fill the empty zones: not at risk while they settle, at risk after', () => {
    const objects = [
      statefulSet('db', 3, { annotations: frozen(ZONES) }),
      stsPod('db', 0, { nodeName: node('zone-a') }),
      stsPod('db', 1, { createdAt: '2026-11-23T11:59:30Z' }), stsPod('db', 2, { createdAt: '2026-11-23T11:59:30Z' }),
    ];
    const [young] = healthOf(objects);
    assert.deepEqual([young!.pending, young!.settling, young!.atRisk], [2, 2, false]);
    const [old] = healthOf(objects, {}, NOW + 120_000);
    assert.deepEqual([old!.settling, old!.atRisk], [0, true]);
  });

  it('replicas whose pods the controller has not created yet are not judged: a new StatefulSet is not at risk', () => {
    const [h] = healthOf([statefulSet('db', 3), stsPod('db', 0, { nodeName: node('zone-a') })]);
    assert.deepEqual([h!.zones, h!.wanted, h!.missing, h!.atRisk], [1, 3, 2, false]);
    assert.match(h!.reason, /2 not created yet/);
  });

  it('zone preferences: a zone without an entry is not wanted, and a Deployment in zones over its share is off target', () => {
    const prefs = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { 'zone-a': { weight: 1 }, 'zone-b': { weight: 1 } } }) };
    const [h] = healthOf([
      ...deployment('web', 4, prefs),
      ...['zone-a', 'zone-a', 'zone-a', 'zone-c'].map((z, i) => rsPod('web', String(i), { nodeName: node(z) })),
    ]);
    assert.deepEqual([h!.wanted, h!.zones], [2, 1]);
    assert.deepEqual(h!.perZone, { 'zone-a': { pods: 3, want: 2 }, 'zone-b': { pods: 0, want: 2 }, 'zone-c': { pods: 1, want: 0 } });
    assert.equal(h!.offPin, 2, "one over zone-a's share, and the pod in zone-c, which may hold none");
    assert.equal(h!.atRisk, true);
  });

  it('a WorkloadSpread: subsets are the zones, filled in order, and a subset over its quota has pods off their seat', () => {
    const [h] = healthOf([
      ...deployment('web', 4),
      workloadSpread('spread', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')]),
      ...['zone-a', 'zone-a', 'zone-a', 'zone-b'].map((z, i) => rsPod('web', String(i), { nodeName: node(z), createdAt: `2026-11-23T10:0${i}:00Z` })),
    ]);
    assert.equal(h!.domain, 'subset');
    assert.deepEqual(h!.perZone, { a: { pods: 3, want: 2 }, b: { pods: 1, want: 2 } });
    assert.deepEqual(h!.offPinPods.map((o) => o.pod), ['web-rs-2'], 'the newest of subset a');
    assert.equal(h!.atRisk, false, 'both subsets hold pods');
  });

  it('a WorkloadSpread: the replicas beyond every subset\'s max are admitted in none (as Kruise does), and only pods in none past them are off', () => {
    const [h] = healthOf([
      ...deployment('web', 5),
      workloadSpread('spread', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2)]),
      ...['zone-a', 'zone-a', 'zone-b', 'zone-b', 'zone-c', 'zone-c'].map((z, i) => rsPod('web', String(i), { nodeName: node(z), createdAt: `2026-11-23T10:0${i}:00Z` })),
    ]);
    assert.deepEqual(h!.perZone, { a: { pods: 2, want: 2 } });
    assert.deepEqual(h!.offPinPods.map((o) => o.pod), ['web-rs-5'], 'three of 5 replicas beyond subset a are expected in none; the sixth pod is not');
  });

  it('unmanaged workloads are not listed; at-risk workloads come first', () => {
    const list = healthOf([
      statefulSet('aaa', 2, { annotations: frozen(ZONES) }), stsPod('aaa', 0, { nodeName: node('zone-a') }), stsPod('aaa', 1, { nodeName: node('zone-b') }),
      statefulSet('zzz', 2, { annotations: frozen(ZONES) }), stsPod('zzz', 0, { nodeName: node('zone-a') }), stsPod('zzz', 1, { nodeName: node('zone-a') }),
      ...deployment('plain', 2), pod('bare', undefined, { nodeName: node('zone-a') }),
    ]);
    assert.deepEqual(list.map((h) => [h.ref.name, h.atRisk]), [['zzz', true], ['aaa', false]]);
  });
});

describe('the health tracker: kept from cache events, Events on transitions only', () => {
  it('LayoutAtRisk once when a workload turns at risk, LayoutRestored once when it recovers, nothing in between', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: frozen(ZONES) }),
      ...[0, 1, 2].map((i) => stsPod('db', i, { nodeName: node(ZONES[i]!) }))]);
    const events: string[] = [];
    const state: DecisionState = { settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES,
      unschedulableSubsets: new Map() };
    const tracker = healthTracker(memorySource(store, 'test'), state, (w, type, reason, message) => events.push(`${w.name} ${type} ${reason}: ${message}`),
      { settleSeconds: 60, intervalSeconds: 3600 }, createLogger('silent'));
    tracker.startEvents();
    tracker.flush();
    assert.deepEqual(events, [], 'healthy from the start: nothing to say');
    assert.equal(tracker.get('default/StatefulSet/db')?.atRisk, false);
    // db-1 and db-2 fall back into zone-a (an outage): one event, however many pod changes.
    store.upsert('pods', slimPod(stsPod('db', 1, { nodeName: node('zone-a') })));
    store.upsert('pods', slimPod(stsPod('db', 2, { nodeName: node('zone-a') })));
    tracker.flush();
    tracker.flush();
    assert.equal(events.length, 1);
    assert.match(events[0]!, /^db Warning LayoutAtRisk: layout at risk: 1 of 3 zones hold pods \(zone-b, zone-c empty\)/);
    assert.deepEqual(tracker.all().map((h) => [h.key, h.atRisk]), [['default/StatefulSet/db', true]]);
    store.upsert('pods', slimPod(stsPod('db', 1, { nodeName: node('zone-b') })));
    store.upsert('pods', slimPod(stsPod('db', 2, { nodeName: node('zone-c') })));
    tracker.flush();
    assert.equal(events.length, 2);
    assert.match(events[1]!, /^db Normal LayoutRestored: layout restored: 3 of 3 zones hold pods/);
    // A workload deleted leaves the list.
    store.delete('statefulsets', 'StatefulSet/default/db');
    tracker.flush();
    assert.deepEqual(tracker.all(), []);
  });
});

describe('health: the zones a workload can grow into (a node group scaled to zero)', () => {
  // The cluster's zones a, b, c from tainted system nodes; the workload's pool has one node, in zone-b.
  const system = ['a', 'b', 'c'].map((z) => ({ ...nodes([`zone-${z}`], 1)[0]!, spec: { taints: [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }] } }));
  const dbNode = { ...nodes(['zone-b'], 1)[0]!, metadata: { name: 'db-b-1', labels: { 'topology.kubernetes.io/zone': 'zone-b', pool: 'db' } } };
  const autoscaler = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-system', name: 'cluster-autoscaler-status' } };
  const pooled = (annotations?: Record<string, string>) => statefulSet('db', 3, { annotations, template: { nodeSelector: { pool: 'db' } } });
  const healthOn = (objects: Raw[], now = NOW) => fleetHealth(storeOf([autoscaler, ...system, dbNode, ...objects]), {
    settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map(),
  }, { now, settleSeconds: 60 });
  const placed = [0, 1, 2].map((i) => stsPod('db', i, { nodeName: 'db-b-1', nodeSelector: { pool: 'db' } }));

  it('a list zonekeeper froze with zone-b alone: the zones it leaves out are named, at risk, never rewritten', () => {
    const [h] = healthOn([pooled(frozen(['zone-b'], '2026-11-20T00:00:00Z')), ...placed]);
    assert.deepEqual(h!.leftOutZones, ['zone-a', 'zone-c']);
    assert.equal(h!.atRisk, true);
    assert.match(h!.reason, /frozen without zone-a, zone-c, which the pods can use or grow into \(left-out/);
  });

  it("a list the user wrote (no frozen-at) is the user's: nothing is left out", () => {
    const [h] = healthOn([pooled(frozen(['zone-b'])), ...placed]);
    assert.deepEqual([h!.leftOutZones, h!.atRisk], [[], false]);
  });

  it("an autoscaler's refusal for a pending pod: cause cannot-grow, its pod, zone and words", () => {
    const pending = stsPod('db', 2, { nodeSelector: { pool: 'db', 'topology.kubernetes.io/zone': 'zone-c' } });
    const store = storeOf([autoscaler, ...system, dbNode, pooled(frozen(['zone-a', 'zone-b', 'zone-c'], '2026-11-20T00:00:00Z')), ...placed.slice(0, 2), pending]);
    const state: DecisionState = { settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES,
      unschedulableSubsets: new Map() };
    const before = fleetHealth(store, state, { now: NOW, settleSeconds: 60 })[0]!;
    assert.equal(before.causes['cannot-grow'], 0);
    store.upsert('scaleupreports', {
      namespace: 'default', name: 'db-2.1', pod: { name: 'db-2', uid: 'pod-db-2' }, source: 'cluster-autoscaler',
      message: "pod didn't trigger scale-up: 3 node(s) didn't match Pod's node affinity/selector", at: NOW - 10_000,
    });
    const [h] = fleetHealth(store, state, { now: NOW, settleSeconds: 60 });
    assert.equal(h!.causes['cannot-grow'], 1);
    assert.deepEqual(h!.cannotGrow.map((c) => [c.pod, c.zone, c.source]), [['db-2', 'zone-c', 'cluster-autoscaler']]);
    assert.match(h!.reason, /no node can be added for 1 pending pod \(cannot-grow: db-2 in zone-c, cluster-autoscaler: pod didn't trigger scale-up/);
    // A refusal older than a quarter of an hour no longer counts: the autoscaler repeats it while it holds.
    assert.equal(fleetHealth(store, state, { now: NOW + 20 * 60_000, settleSeconds: 60 })[0]!.causes['cannot-grow'], 0);
  });

  it('no autoscaler: a frozen list naming zones nothing can grow is reported, with what would unblock its seats', () => {
    const list = pooled(frozen(['zone-a', 'zone-b', 'zone-c'], '2026-11-20T00:00:00Z'));
    const waiting = [0, 2].map((i) => stsPod('db', i, { nodeSelector: { pool: 'db' } }));
    const [h] = fleetHealth(storeOf([...system, dbNode, list, placed[1]!, ...waiting]), {
      settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map(),
    }, { now: NOW, settleSeconds: 60 });
    assert.deepEqual(h!.unusableZones, ['zone-a', 'zone-c']);
    assert.equal(h!.causes['no-eligible-node'], 2);
    assert.equal(h!.atRisk, true);
    assert.match(h!.reason, /no node fits the pods in zone-a, zone-c and none can be added \(no-eligible-node: 2 seats wait; .*a node there they fit.*zoneFallback: adaptive/);
  });
});
