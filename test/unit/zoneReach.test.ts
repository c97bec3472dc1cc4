import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { templateNeeds } from '../../src/cluster/nodeNeeds.js';
import { addObject } from '../../src/cluster/source.js';
import { growthText, zoneReach } from '../../src/placement/zoneReach.js';
import { node, storeOf, type Raw } from '../support/builders.js';

// The zones a pod can use now, grow into, or never (docs/design.md#the-zones-a-workload-can-use):
// the cluster's zones known from tainted system nodes only, the pod's pool scaled to zero, and
// Karpenter NodePools matched as Karpenter matches them.

const ZONE = 'topology.kubernetes.io/zone';
const SYSTEM_TAINT = { key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' };
const DB_TOLERATION = { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' };
const systemNodes = () => ['a', 'b', 'c'].map((z) => node(`system-${z}`, `zone-${z}`, { taints: [SYSTEM_TAINT] }));
const settings = { topologyKey: ZONE };
/** What a running Cluster Autoscaler leaves in the cluster: its status ConfigMap. */
const AUTOSCALER = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-system', name: 'cluster-autoscaler-status' }, data: { status: 'Running' } };
const CA = { kind: 'cluster', autoscaler: 'kube-system/cluster-autoscaler-status' };
const withAutoscaler = () => [AUTOSCALER, ...systemNodes()];

interface PoolSpec { zones?: string[]; notZones?: string[]; labels?: Record<string, string>; requirements?: Raw[]; taints?: Raw[] }
function nodePool(name: string, spec: PoolSpec = {}): Raw {
  const requirements = [
    ...(spec.zones ? [{ key: ZONE, operator: 'In', values: spec.zones }] : []),
    ...(spec.notZones ? [{ key: ZONE, operator: 'NotIn', values: spec.notZones }] : []),
    ...(spec.requirements ?? []),
  ];
  return {
    apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name },
    spec: { template: { metadata: { labels: spec.labels }, spec: { requirements, taints: spec.taints, nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' } } } },
  };
}

const reach = (objects: Raw[], podSpec: Raw, s: Parameters<typeof zoneReach>[2] = settings) => zoneReach(templateNeeds(podSpec), storeOf(objects), s);
const states = (r: ReturnType<typeof zoneReach>, zones = ['zone-a', 'zone-b', 'zone-c']) => zones.map((z) => r.of(z)).join(' ');

describe('the zones a pod can grow into: a Cluster Autoscaler, no Karpenter (node groups scaled to zero)', () => {
  it('a pool with no node anywhere: every zone of the cluster, known from tainted system nodes', () => {
    const r = reach(withAutoscaler(), { nodeSelector: { pool: 'db' } });
    assert.equal(states(r), 'grow grow grow');
    assert.deepEqual(r.sorted, ['zone-a', 'zone-b', 'zone-c']);
    assert.deepEqual(r.grow.get('zone-b'), CA);
    assert.equal(growthText(r.grow.get('zone-b')), 'Cluster Autoscaler (kube-system/cluster-autoscaler-status) may add one');
  });

  it('a pool with one node in zone-b: zone-b now, a and c to grow into (never one zone alone)', () => {
    const r = reach([...withAutoscaler(), node('db-b-1', 'zone-b', { labels: { pool: 'db' } })], { nodeSelector: { pool: 'db' } });
    assert.equal(states(r), 'grow now grow');
  });

  it("the pod's own zone terms hold: required affinity to a and b leaves c out", () => {
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a', 'zone-b'] }] }] } } };
    assert.equal(states(reach(withAutoscaler(), { nodeSelector: { pool: 'db' }, affinity })), 'grow grow never');
    assert.equal(states(reach(withAutoscaler(), { nodeSelector: { [ZONE]: 'zone-c' } })), 'never never grow');
  });

  it("a control-plane node's zone is no zone to grow into, by its role label or by its role taint alone", () => {
    const role = 'node-role.kubernetes.io/control-plane';
    const byLabel = node('cp-d', 'zone-d', { labels: { [role]: '' } });
    const byTaint = node('cp-d', 'zone-d', { taints: [{ key: role, value: '', effect: 'NoSchedule' }] });
    for (const cp of [byLabel, byTaint]) assert.equal(reach([...withAutoscaler(), cp], { nodeSelector: { pool: 'db' } }).of('zone-d'), 'never');
  });

  it('a zone is remembered when its last node goes away; configured zones count too', () => {
    const store = storeOf(withAutoscaler());
    assert.deepEqual(store.clusterZones(ZONE), ['zone-a', 'zone-b', 'zone-c']);
    store.delete('nodes', 'system-c');
    assert.deepEqual(store.zones(ZONE), ['zone-a', 'zone-b']);
    assert.deepEqual(store.clusterZones(ZONE), ['zone-a', 'zone-b', 'zone-c']);
    const r = zoneReach(templateNeeds({ nodeSelector: { pool: 'db' } }), store, { ...settings, clusterZones: ['zone-e'] });
    assert.deepEqual(r.sorted, ['zone-a', 'zone-b', 'zone-c', 'zone-e']);
  });

  it('growInto: nodePools: only the zones of nodes it fits, the Cluster Autoscaler found or not', () => {
    const r = reach([...withAutoscaler(), node('db-b-1', 'zone-b', { labels: { pool: 'db' } })], { nodeSelector: { pool: 'db' } }, { ...settings, growInto: 'nodePools' });
    assert.equal(states(r), 'never now never');
  });
});

describe('the zones a pod can grow into: no autoscaler (static pools)', () => {
  const dbNodes = () => [node('db-a-1', 'zone-a', { labels: { pool: 'db' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
    node('db-b-1', 'zone-b', { labels: { pool: 'db' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] })];

  it('a pool in two zones of three: those two, nothing to grow into', () => {
    const r = reach([...systemNodes(), ...dbNodes()], { nodeSelector: { pool: 'db' }, tolerations: [DB_TOLERATION] });
    assert.equal(states(r), 'now now never');
    assert.deepEqual(r.sorted, ['zone-a', 'zone-b']);
    assert.equal(r.grow.size, 0);
  });

  it("a zone whose every node carries a taint the pod does not tolerate is not the pod's", () => {
    const objects = [node('a-1', 'zone-a'), node('b-1', 'zone-b'), node('c-1', 'zone-c'), node('gpu-d', 'zone-d', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] })];
    assert.deepEqual(reach(objects, {}).sorted, ['zone-a', 'zone-b', 'zone-c']);
    assert.equal(reach(objects, {}).of('zone-d'), 'never');
    assert.deepEqual(reach(objects, { tolerations: [{ key: 'gpu', operator: 'Exists' }] }).sorted, ['zone-a', 'zone-b', 'zone-c', 'zone-d']);
  });

  it("the status ConfigMap's coming and going changes the answer at once; growInto: cluster assumes an autoscaler without it", () => {
    const store = storeOf([...systemNodes(), ...dbNodes()]);
    const needs = templateNeeds({ nodeSelector: { pool: 'db' }, tolerations: [DB_TOLERATION] });
    assert.equal(states(zoneReach(needs, store, settings)), 'now now never');
    addObject(store, AUTOSCALER);
    assert.equal(states(zoneReach(needs, store, settings)), 'now now grow');
    store.upsert('autoscalerstatus', { namespace: 'kube-system', name: 'cluster-autoscaler-status' });
    assert.equal(states(zoneReach(needs, store, settings)), 'now now grow');
    store.delete('autoscalerstatus', 'kube-system/cluster-autoscaler-status');
    assert.equal(states(zoneReach(needs, store, settings)), 'now now never');
    const assumed = zoneReach(needs, store, { ...settings, growInto: 'cluster' });
    assert.equal(states(assumed), 'now now grow');
    assert.equal(growthText(assumed.grow.get('zone-c')), 'an autoscaler may add one (placement.growInto: cluster)');
  });

  it('a ConfigMap of another name is no Cluster Autoscaler (and is not cached)', () => {
    const other = { ...AUTOSCALER, metadata: { namespace: 'kube-system', name: 'coredns' } };
    assert.throws(() => storeOf([other]), /unknown kind ConfigMap/);
  });
});

describe('the zones a pod can grow into: Karpenter NodePools, matched as Karpenter matches them', () => {
  const dbPool = (spec: Parameters<typeof nodePool>[1] = {}) => nodePool('db', { labels: { pool: 'db' }, ...spec });

  it('a NodePool offering a, b, c and one node of it in zone-b: b now, a and c to grow into from that NodePool', () => {
    const r = reach([...systemNodes(), dbPool({ zones: ['zone-a', 'zone-b', 'zone-c'] }), node('db-b-1', 'zone-b', { labels: { pool: 'db' } })], { nodeSelector: { pool: 'db' } });
    assert.equal(states(r), 'grow now grow');
    assert.deepEqual(r.grow.get('zone-a'), { kind: 'nodepools', names: ['db'] });
  });

  it('a NodePool offering a and b only: c is never (the NodePools decide for the pods they take)', () => {
    assert.equal(states(reach([...systemNodes(), dbPool({ zones: ['zone-a', 'zone-b'] })], { nodeSelector: { pool: 'db' } })), 'grow grow never');
    assert.equal(states(reach([...systemNodes(), dbPool({ notZones: ['zone-b'] })], { nodeSelector: { pool: 'db' } })), 'grow never grow');
  });

  it("a NodePool naming no zone offers the cluster's; one naming a zone no node has yet offers it too", () => {
    assert.equal(states(reach([...systemNodes(), dbPool()], { nodeSelector: { pool: 'db' } })), 'grow grow grow');
    assert.equal(reach([...systemNodes(), dbPool({ zones: ['zone-e'] })], { nodeSelector: { pool: 'db' } }).of('zone-e'), 'grow');
  });

  it("a pod asking for a label no NodePool defines is taken by none: the cluster's zones apply where a Cluster Autoscaler runs, else none", () => {
    const r = reach([...withAutoscaler(), dbPool({ zones: ['zone-a'] })], { nodeSelector: { pool: 'web' } });
    assert.equal(states(r), 'grow grow grow');
    assert.deepEqual(r.grow.get('zone-a'), CA);
    assert.equal(states(reach([...systemNodes(), dbPool({ zones: ['zone-a'] })], { nodeSelector: { pool: 'web' } })), 'never never never');
  });

  it("a NodePool's taints must be tolerated; well-known labels need not be named by it", () => {
    const tainted = dbPool({ zones: ['zone-a', 'zone-b'], taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    const objects = [...withAutoscaler(), tainted, nodePool('general', { zones: ['zone-c'] })];
    // Not tolerated: the db NodePool is not its; the general NodePool does not define `pool`.
    assert.equal(states(reach(objects, { nodeSelector: { pool: 'db' } })), 'grow grow grow');
    assert.equal(states(reach(objects, { nodeSelector: { pool: 'db', 'kubernetes.io/arch': 'arm64' }, tolerations: [DB_TOLERATION] })), 'grow grow never');
  });

  it("requirements: In, NotIn, Exists and DoesNotExist against the NodePool's", () => {
    const pool = dbPool({ zones: ['zone-a'], requirements: [{ key: 'gen', operator: 'In', values: ['5', '6'] }, { key: 'gpu', operator: 'DoesNotExist' }] });
    const with_ = (expr: Raw) => reach([...withAutoscaler(), pool], { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['db'] }, expr] }] } } } }).grow.get('zone-a')?.kind;
    assert.equal(with_({ key: 'gen', operator: 'In', values: ['6'] }), 'nodepools');
    assert.equal(with_({ key: 'gen', operator: 'In', values: ['7'] }), 'cluster');
    assert.equal(with_({ key: 'gen', operator: 'NotIn', values: ['5', '6'] }), 'cluster');
    assert.equal(with_({ key: 'gen', operator: 'Exists' }), 'nodepools');
    assert.equal(with_({ key: 'gpu', operator: 'Exists' }), 'cluster');
    assert.equal(with_({ key: 'gpu', operator: 'DoesNotExist' }), 'nodepools');
  });

  it('a NodePool added or removed changes the answer at once (cached per needs until then)', () => {
    const store = storeOf(withAutoscaler());
    const needs = templateNeeds({ nodeSelector: { pool: 'db' } });
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'grow');
    addObject(store, dbPool({ zones: ['zone-a'] }));
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'never');
    store.delete('nodepools', 'db');
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'grow');
  });
});
