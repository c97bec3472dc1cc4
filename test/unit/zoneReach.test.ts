import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { templateNeeds } from '../../src/cluster/nodeNeeds.js';
import { addObject } from '../../src/cluster/source.js';
import { zoneReach } from '../../src/placement/zoneReach.js';
import { node, storeOf, type Raw } from '../support/builders.js';

// The zones a pod can use now, grow into, or never (docs/design.md#the-zones-a-workload-can-use):
// the cluster's zones known from tainted system nodes only, the pod's pool scaled to zero, and
// Karpenter NodePools matched as Karpenter matches them.

const ZONE = 'topology.kubernetes.io/zone';
const SYSTEM_TAINT = { key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' };
const DB_TOLERATION = { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' };
const systemNodes = () => ['a', 'b', 'c'].map((z) => node(`system-${z}`, `zone-${z}`, { taints: [SYSTEM_TAINT] }));
const settings = { topologyKey: ZONE };

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

describe('the zones a pod can grow into: no Karpenter (a Cluster Autoscaler node group scaled to zero)', () => {
  it('a pool with no node anywhere: every zone of the cluster, known from tainted system nodes', () => {
    const r = reach(systemNodes(), { nodeSelector: { pool: 'db' } });
    assert.equal(states(r), 'grow grow grow');
    assert.deepEqual(r.sorted, ['zone-a', 'zone-b', 'zone-c']);
    assert.deepEqual(r.grow.get('zone-b'), { kind: 'cluster' });
  });

  it('a pool with one node in zone-b: zone-b now, a and c to grow into (never one zone alone)', () => {
    const r = reach([...systemNodes(), node('db-b-1', 'zone-b', { labels: { pool: 'db' } })], { nodeSelector: { pool: 'db' } });
    assert.equal(states(r), 'grow now grow');
  });

  it("the pod's own zone terms hold: required affinity to a and b leaves c out", () => {
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a', 'zone-b'] }] }] } } };
    assert.equal(states(reach(systemNodes(), { nodeSelector: { pool: 'db' }, affinity })), 'grow grow never');
    assert.equal(states(reach(systemNodes(), { nodeSelector: { [ZONE]: 'zone-c' } })), 'never never grow');
  });

  it("a control-plane node's zone is no zone to grow into", () => {
    const cp = node('cp-d', 'zone-d', { labels: { 'node-role.kubernetes.io/control-plane': '' }, taints: [{ key: 'node-role.kubernetes.io/control-plane', value: '', effect: 'NoSchedule' }] });
    assert.equal(reach([...systemNodes(), cp], { nodeSelector: { pool: 'db' } }).of('zone-d'), 'never');
  });

  it('a zone is remembered when its last node goes away; configured zones count too', () => {
    const store = storeOf(systemNodes());
    assert.deepEqual(store.clusterZones(ZONE), ['zone-a', 'zone-b', 'zone-c']);
    store.delete('nodes', 'system-c');
    assert.deepEqual(store.zones(ZONE), ['zone-a', 'zone-b']);
    assert.deepEqual(store.clusterZones(ZONE), ['zone-a', 'zone-b', 'zone-c']);
    const r = zoneReach(templateNeeds({ nodeSelector: { pool: 'db' } }), store, { ...settings, clusterZones: ['zone-e'] });
    assert.deepEqual(r.sorted, ['zone-a', 'zone-b', 'zone-c', 'zone-e']);
  });

  it('growInto: nodePools: only the zones of nodes it fits', () => {
    const r = reach([...systemNodes(), node('db-b-1', 'zone-b', { labels: { pool: 'db' } })], { nodeSelector: { pool: 'db' } }, { ...settings, growInto: 'nodePools' });
    assert.equal(states(r), 'never now never');
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

  it("a pod asking for a label no NodePool defines is taken by none: the cluster's zones apply", () => {
    const r = reach([...systemNodes(), dbPool({ zones: ['zone-a'] })], { nodeSelector: { pool: 'web' } });
    assert.equal(states(r), 'grow grow grow');
    assert.deepEqual(r.grow.get('zone-a'), { kind: 'cluster' });
  });

  it("a NodePool's taints must be tolerated; well-known labels need not be named by it", () => {
    const tainted = dbPool({ zones: ['zone-a', 'zone-b'], taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    const objects = [...systemNodes(), tainted, nodePool('general', { zones: ['zone-c'] })];
    // Not tolerated: the db NodePool is not its; the general NodePool does not define `pool`.
    assert.equal(states(reach(objects, { nodeSelector: { pool: 'db' } })), 'grow grow grow');
    assert.equal(states(reach(objects, { nodeSelector: { pool: 'db', 'kubernetes.io/arch': 'arm64' }, tolerations: [DB_TOLERATION] })), 'grow grow never');
  });

  it("requirements: In, NotIn, Exists and DoesNotExist against the NodePool's", () => {
    const pool = dbPool({ zones: ['zone-a'], requirements: [{ key: 'gen', operator: 'In', values: ['5', '6'] }, { key: 'gpu', operator: 'DoesNotExist' }] });
    const with_ = (expr: Raw) => reach([...systemNodes(), pool], { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['db'] }, expr] }] } } } }).grow.get('zone-a')?.kind;
    assert.equal(with_({ key: 'gen', operator: 'In', values: ['6'] }), 'nodepools');
    assert.equal(with_({ key: 'gen', operator: 'In', values: ['7'] }), 'cluster');
    assert.equal(with_({ key: 'gen', operator: 'NotIn', values: ['5', '6'] }), 'cluster');
    assert.equal(with_({ key: 'gen', operator: 'Exists' }), 'nodepools');
    assert.equal(with_({ key: 'gpu', operator: 'Exists' }), 'cluster');
    assert.equal(with_({ key: 'gpu', operator: 'DoesNotExist' }), 'nodepools');
  });

  it('a NodePool added or removed changes the answer at once (cached per needs until then)', () => {
    const store = storeOf(systemNodes());
    const needs = templateNeeds({ nodeSelector: { pool: 'db' } });
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'grow');
    addObject(store, dbPool({ zones: ['zone-a'] }));
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'never');
    store.delete('nodepools', 'db');
    assert.equal(zoneReach(needs, store, settings).of('zone-c'), 'grow');
  });
});
