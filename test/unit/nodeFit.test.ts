import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimNode } from '../../src/cluster/convert.js';
import { nodeSelection, tolerations } from '../../src/cluster/nodeNeeds.js';
import { addObject } from '../../src/cluster/source.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { fleetHealth, workloadHealth } from '../../src/placement/health.js';
import { workloadModel } from '../../src/placement/model.js';
import { misfitOf, nodeFit, selects } from '../../src/placement/nodeFit.js';
import type { DecisionState } from '../../src/placement/policy.js';
import { repairStep } from '../../src/placement/repairChoice.js';
import { deployment, node, rsPod, statefulSet, stsPod, storeOf, type NodeAsks, type Raw } from '../support/builders.js';
import { defaultSettings, filterFor, passedZones } from '../support/placement.js';

/** A fixed time, after every builder's creationTimestamp. */
const NOW = Date.parse('2026-11-25T12:00:00Z');

// The zones a workload can use (docs/design.md#the-zones-a-workload-can-use), on a cluster
// shaped like production: general nodes in zones a, b, c; a tainted `pool=db` pool in a and b
// only; a control-plane node in zone-d.

const DB_TAINT = { key: 'dedicated', value: 'db', effect: 'NoSchedule' };
const CP_TAINT = { key: 'node-role.kubernetes.io/control-plane', value: '', effect: 'NoSchedule' };
const DB_POOL: NodeAsks = { nodeSelector: { pool: 'db' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] };
const zoneAffinity = (zones: string[]) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }] }] } },
});

function productionNodes(): Raw[] {
  return [
    ...['a', 'b', 'c'].flatMap((z) => [1, 2].map((i) => node(`general-${z}-${i}`, `zone-${z}`))),
    ...['a', 'b'].map((z) => node(`db-${z}-1`, `zone-${z}`, { labels: { pool: 'db' }, taints: [DB_TAINT] })),
    node('control-plane-d', 'zone-d', { labels: { 'node-role.kubernetes.io/control-plane': '' }, taints: [CP_TAINT] }),
  ];
}

const state: DecisionState = { settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES,
  unschedulableSubsets: new Map() };

function listOf(objects: Raw[], kind: 'StatefulSet' | 'Deployment' = 'StatefulSet', name = 'db', settings: Partial<DecisionState['settings']> = {}) {
  const store = storeOf([...productionNodes(), ...objects]);
  const w = store.workload(kind, 'default', name)!;
  return workloadModel({ kind, namespace: 'default', name }, w, store, { ...state.settings, ...settings }, state).zones();
}

const labelled = (labels: Record<string, string>, name = 'n1') => slimNode(node(name, undefined, { labels }));
const selection = (spec: Raw) => nodeSelection(spec, false);
const term = (...matchExpressions: Raw[]) => ({ matchExpressions });
const affinity = (...terms: Raw[]) => selection({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
});

describe('node fit: node selector and required node affinity, as kube-scheduler reads them', () => {
  const n = labelled({ disk: 'ssd', gen: '5', pool: 'db' });

  it('nodeSelector: every key must equal', () => {
    assert.equal(selects(selection({ nodeSelector: { disk: 'ssd' } }), n), true);
    assert.equal(selects(selection({ nodeSelector: { disk: 'ssd', pool: 'web' } }), n), false);
    assert.equal(selects(selection({ nodeSelector: { missing: '' } }), n), false);
    assert.equal(selects(undefined, n), true, 'a pod that asks nothing fits');
  });

  it('In, NotIn, Exists, DoesNotExist', () => {
    const one = (op: string, key: string, values: string[] = []) => selects(affinity(term({ key, operator: op, values })), n);
    assert.deepEqual([one('In', 'disk', ['ssd', 'nvme']), one('In', 'disk', ['hdd']), one('In', 'none', ['ssd'])], [true, false, false]);
    assert.deepEqual([one('NotIn', 'disk', ['hdd']), one('NotIn', 'disk', ['ssd']), one('NotIn', 'none', ['x'])], [true, false, true]);
    assert.deepEqual([one('Exists', 'disk'), one('Exists', 'none')], [true, false]);
    assert.deepEqual([one('DoesNotExist', 'none'), one('DoesNotExist', 'disk')], [true, false]);
  });

  it('Gt and Lt compare whole numbers only', () => {
    const one = (op: string, key: string, v: string) => selects(affinity(term({ key, operator: op, values: [v] })), n);
    assert.deepEqual([one('Gt', 'gen', '4'), one('Gt', 'gen', '5'), one('Lt', 'gen', '6'), one('Lt', 'gen', '5')], [true, false, true, false]);
    assert.deepEqual([one('Gt', 'gen', '4.5'), one('Gt', 'disk', '1'), one('Gt', 'none', '1'), one('Lt', 'gen', '-1')], [false, false, false, false]);
    assert.equal(selects(affinity(term({ key: 'gen', operator: 'Gt', values: ['1', '2'] })), n), false, 'exactly one value');
    assert.equal(selects(labelled({ gen: '1.5' }) && affinity(term({ key: 'gen', operator: 'Gt', values: ['1'] })), labelled({ gen: '1.5' })), false);
  });

  it('matchFields on metadata.name; terms ORed, expressions ANDed; an empty term matches nothing', () => {
    const byName = (op: string, names: string[]) => affinity({ matchFields: [{ key: 'metadata.name', operator: op, values: names }] });
    assert.deepEqual([selects(byName('In', ['n1']), n), selects(byName('In', ['n2']), n), selects(byName('NotIn', ['n2']), n)], [true, false, true]);
    const ssd = { key: 'disk', operator: 'In', values: ['ssd'] }, web = { key: 'pool', operator: 'In', values: ['web'] };
    assert.equal(selects(affinity(term(ssd, web)), n), false, 'ANDed');
    assert.equal(selects(affinity(term(web), term(ssd)), n), true, 'ORed');
    assert.equal(selects(affinity({}), n), false);
    assert.equal(selects(affinity(), n), false, 'no term at all: nothing');
    assert.equal(selects(selection({ nodeSelector: { disk: 'ssd' }, affinity: zoneAffinity(['zone-a']) }), n), false, 'both must hold');
  });
});

describe('node fit: taints', () => {
  const tainted = (effect: string) => slimNode(node('t', 'zone-a', { taints: [{ key: 'k', value: 'v', effect }] }));
  const fits = (node: ReturnType<typeof tainted>, t: Raw[]) => misfitOf({ selection: undefined, tolerations: tolerations(t) })(node);

  it('NoSchedule and NoExecute keep out a pod that does not tolerate them; PreferNoSchedule does not', () => {
    assert.equal(fits(tainted('NoSchedule'), []), 'taint');
    assert.equal(fits(tainted('NoExecute'), []), 'taint');
    assert.equal(fits(tainted('PreferNoSchedule'), []), undefined);
  });

  it('tolerations: Equal needs the value, Exists any value, an empty key every taint, an effect only its own', () => {
    const node = tainted('NoSchedule');
    assert.equal(fits(node, [{ key: 'k', operator: 'Equal', value: 'v' }]), undefined);
    assert.equal(fits(node, [{ key: 'k', value: 'other' }]), 'taint');
    assert.equal(fits(node, [{ key: 'k', operator: 'Exists' }]), undefined);
    assert.equal(fits(node, [{ operator: 'Exists' }]), undefined);
    assert.equal(fits(node, [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }]), 'taint');
    assert.equal(fits(node, [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }]), undefined);
  });

  it('a node the labels exclude is an affinity misfit before a taint one', () => {
    const m = misfitOf({ selection: selection({ nodeSelector: { pool: 'db' } }), tolerations: [] });
    assert.equal(m(tainted('NoSchedule')), 'affinity');
  });
});

describe('the zones a workload can use', () => {
  it("no constraints: every zone with an untainted node, not the control plane's zone", () => {
    const list = listOf([statefulSet('db', 6)]);
    assert.deepEqual([...list.zones].sort(), ['zone-a', 'zone-b', 'zone-c']);
    assert.equal(list.usable.has('zone-d'), false);
  });

  it("a tainted pool in two zones, selected and tolerated: those two now; the cluster's third to grow into only with an autoscaler (never the control plane's zone-d)", () => {
    // No autoscaler (the default growInto: auto finds none): only the zones of its nodes.
    const list = listOf([statefulSet('db', 4, { template: DB_POOL })]);
    assert.deepEqual([...list.zones].sort(), ['zone-a', 'zone-b']);
    assert.deepEqual(['zone-a', 'zone-c', 'zone-d'].map((z) => list.reach.of(z)), ['now', 'never', 'never']);
    // An autoscaler zonekeeper is told of (growInto: cluster): zone-c to grow into.
    const grown = listOf([statefulSet('db', 4, { template: DB_POOL })], 'StatefulSet', 'db', { growInto: 'cluster' });
    assert.deepEqual([...grown.zones].sort(), ['zone-a', 'zone-b', 'zone-c']);
    assert.deepEqual(['zone-a', 'zone-c', 'zone-d'].map((z) => grown.reach.of(z)), ['now', 'grow', 'never']);
    // Selected but not tolerated: no node fits it anywhere, and with nothing to grow nothing to pin to.
    assert.deepEqual(listOf([statefulSet('db', 4, { template: { nodeSelector: { pool: 'db' } } })]).zones, []);
  });

  it('required node affinity on the zone key: its zones', () => {
    assert.deepEqual([...listOf([statefulSet('db', 4, { template: { affinity: zoneAffinity(['zone-a', 'zone-b']) } })]).zones].sort(), ['zone-a', 'zone-b']);
  });

  it('tolerating the control plane makes zone-d usable', () => {
    const t = { tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }] };
    assert.deepEqual([...listOf([statefulSet('db', 4, { template: t })]).zones].sort(), ['zone-a', 'zone-b', 'zone-c', 'zone-d']);
  });

  it('a Deployment with preferences is balanced over its usable zones, and its health wants 3 zones, not 4', () => {
    const prefs = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) };
    const general = ['a', 'b', 'c'].flatMap((z) => [1, 2].map((i) => `general-${z}-${i}`));
    const pods = general.map((n, i) => rsPod('web', `p${i}`, { nodeName: n }));
    const store = storeOf([...productionNodes(), ...deployment('web', 6, prefs), ...pods]);
    const [h] = fleetHealth(store, state, { now: NOW, settleSeconds: 60 });
    assert.deepEqual([h!.zones, h!.wanted, h!.atRisk, h!.reason], [3, 3, false, 'ok']);
  });

  it('a cordoned or NotReady node keeps its zone in the list (an outage does not reshuffle it)', () => {
    const nodes = productionNodes().map((n) => (n.metadata.name.endsWith('-c-1') || n.metadata.name.endsWith('-c-2')
      ? { ...n, spec: { ...n.spec, unschedulable: n.metadata.name.endsWith('-1') }, status: { conditions: [{ type: 'Ready', status: 'False' }] } } : n));
    const store = storeOf([...nodes, statefulSet('db', 3)]);
    const w = store.workload('StatefulSet', 'default', 'db')!;
    assert.deepEqual([...workloadModel({ kind: 'StatefulSet', namespace: 'default', name: 'db' }, w, store, state.settings, state).zones().zones].sort(), ['zone-a', 'zone-b', 'zone-c']);
  });
});

describe('the filter never passes a node the pod itself excludes', () => {
  it("every node is judged by the pod's selector and tolerations before its pin", () => {
    const store = storeOf([...productionNodes(), statefulSet('db', 4, { template: DB_POOL })]);
    const v = filterFor(store, stsPod('db', 0, DB_POOL));
    const rules = new Map([...v.rejected].flatMap(([r, names]) => names.map((n) => [n, r.rule])));
    assert.equal(v.passed.length, 1);
    assert.match(v.passed[0]!, /^db-[ab]-1$/);
    assert.equal(rules.get('general-a-1'), 'node-affinity');
    assert.equal(rules.get('control-plane-d'), 'node-affinity');
    assert.deepEqual(passedZones(store, v).length, 1);
  });

  it('an unconstrained pinned pod is never passed the control-plane node, even when its zone is listed', () => {
    const store = storeOf([...productionNodes(), statefulSet('db', 4, { annotations: { 'zonekeeper.io/zones': 'zone-d,zone-a,zone-b,zone-c' } })]);
    const v = filterFor(store, stsPod('db', 0));
    assert.deepEqual(v.passed, []);
    assert.equal([...v.rejected].find(([, names]) => names.includes('control-plane-d'))![0].rule, 'taint');
    assert.match(v.summary, /^pinned: ordinal 0 → zone-d \(4 zones\): no node in zone-d fits the pod's node selector, affinity and tolerations, and none can be added$/);
    const pin = [...v.rejected.keys()].find((r) => r.rule === 'zone-pin')!;
    assert.match(pin.reason, /^pinned to zone-d: no node in zone-d fits/);
  });
});

describe('an explicit list naming a zone no node fits (a node group scaled to zero)', () => {
  const listed = { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c,zone-e' };

  it('health: the zone is not "empty", its seats wait with the cause no-eligible-node, at risk for it (nothing stranded silently)', () => {
    const pods = [0, 1, 2].map((i) => stsPod('db', i, { nodeName: `general-${'abc'[i]}-1` }));
    // A tainted node in zone-e: a zone of the cluster, but with growInto: nodePools none the pods can grow into.
    const store = storeOf([...productionNodes(), node('gpu-e-1', 'zone-e', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }), statefulSet('db', 4, { annotations: listed }), ...pods, stsPod('db', 3)]);
    const w = store.workload('StatefulSet', 'default', 'db')!;
    const model = workloadModel({ kind: 'StatefulSet', namespace: 'default', name: 'db' }, w, store, { ...state.settings, growInto: 'nodePools' }, state);
    const h = workloadHealth(model, w, store, state, { now: NOW, settleSeconds: 0 })!;
    assert.deepEqual([h.zones, h.wanted, h.unusableZones, h.causes['no-eligible-node'], h.atRisk], [3, 3, ['zone-e'], 1, true]);
    assert.match(h.reason, /no node fits the pods in zone-e and none can be added \(no-eligible-node: 1 seat wait; a node there they fit, /);
    // Repair waits for no such zone, and never moves a pod towards it.
    const step = repairStep(model, w, { ...h, offPin: 1, offPinPods: [{ pod: 'db-0', zone: 'zone-a', pinnedZone: 'zone-e', cause: 'unknown', heldByVolume: false }] }, store,
      { now: NOW, zoneStableSeconds: 0, zones: { schedulableNodes: () => 1, stableSince: () => 0 }, evicted: undefined });
    assert.equal(step.kind, 'wait');
  });
});

describe('cost: node fit is computed once per distinct needs, until a node is reshaped', () => {
  it('kept across readiness changes, dropped on a label or taint change', () => {
    const store = storeOf(productionNodes());
    const needs = { selection: undefined, tolerations: [] };
    const first = nodeFit(needs, store);
    assert.equal(nodeFit(needs, store), first);
    const raw = node('general-a-1', 'zone-a');
    addObject(store, { ...raw, status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    assert.equal(nodeFit(needs, store), first, 'readiness does not change what fits');
    addObject(store, node('general-a-1', 'zone-a', { taints: [DB_TAINT] }));
    const second = nodeFit(needs, store);
    assert.notEqual(second, first);
    assert.equal(second.zones('topology.kubernetes.io/zone').set.has('zone-a'), true, 'general-a-2 still fits');
  });
});
