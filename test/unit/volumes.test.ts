import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimNode } from '../../src/cluster/convert.js';
import { matchesTerm, toleratesNode } from '../../src/placement/nodeMatching.js';
import { podVolumes, volumeZones } from '../../src/placement/volumes.js';
import { node, nodes, pod, pv, pvc, storeOf } from '../support/builders.js';
import { asPending } from '../support/builders.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const term = (key: string, operator: string, values: string[] = []) => ({ matchExpressions: [{ key, operator, values }], matchFields: [] });

describe('node selector terms', () => {
  const n = slimNode(node('n1', 'zone-a', { labels: { gen: '5', disk: 'ssd' } }));
  it('implements every operator', () => {
    assert.equal(matchesTerm(term('disk', 'In', ['ssd']), n), true);
    assert.equal(matchesTerm(term('disk', 'NotIn', ['ssd']), n), false);
    assert.equal(matchesTerm(term('missing', 'NotIn', ['x']), n), true);
    assert.equal(matchesTerm(term('disk', 'Exists'), n), true);
    assert.equal(matchesTerm(term('disk', 'DoesNotExist'), n), false);
    assert.equal(matchesTerm(term('gen', 'Gt', ['4']), n), true);
    assert.equal(matchesTerm(term('gen', 'Lt', ['4']), n), false);
    assert.equal(matchesTerm(term('gen', 'Bogus', ['4']), n), false);
    assert.equal(matchesTerm({ matchExpressions: [], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, n), true);
    assert.equal(matchesTerm({ matchExpressions: [], matchFields: [] }, n), false, 'an empty term matches nothing');
  });
  it('tolerates taints by key, value, operator and effect', () => {
    const tainted = slimNode(node('t', 'zone-a', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }, { key: 'soft', effect: 'PreferNoSchedule' }] }));
    assert.equal(toleratesNode([], tainted), false);
    assert.equal(toleratesNode([{ key: 'k', operator: 'Equal', value: 'v', effect: '' }], tainted), true);
    assert.equal(toleratesNode([{ key: 'k', operator: 'Equal', value: 'w', effect: '' }], tainted), false);
    assert.equal(toleratesNode([{ key: '', operator: 'Exists', value: '', effect: '' }], tainted), true);
    assert.equal(toleratesNode([{ key: 'k', operator: 'Exists', value: '', effect: 'NoExecute' }], tainted), false);
  });
});

describe('volume zones', () => {
  it('restricts to a bound PV\'s node affinity, any key and operator', () => {
    const store = storeOf([...nodes(ZONES, 1), node('special', 'zone-b', { labels: { disk: 'local' } }),
      pvc('c1', { volumeName: 'local-pv' }), pv('local-pv', undefined, { affinity: [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }] })]);
    const v = podVolumes(asPending(pod('p', undefined, { claims: ['c1'] })), store);
    assert.equal(v.constraints.length, 1);
    assert.deepEqual([...store.nodes()].filter((n) => v.constraints[0]!.allows(n)).map((n) => n.name), ['special']);
    assert.deepEqual([...volumeZones(v.constraints, store, 'topology.kubernetes.io/zone')], ['zone-b']);
  });

  it('reads legacy zone labels with several zones joined by __', () => {
    const store = storeOf([...nodes(ZONES, 1), pvc('c1', { volumeName: 'legacy' }), pv('legacy', undefined, { labelZone: 'zone-a__zone-c' })]);
    const v = podVolumes(asPending(pod('p', undefined, { claims: ['c1'] })), store);
    assert.deepEqual([...volumeZones(v.constraints, store, 'topology.kubernetes.io/zone')].sort(), ['zone-a', 'zone-c']);
  });

  it('restricts an unbound WaitForFirstConsumer claim to the class\'s allowedTopologies', () => {
    const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'wffc' }, volumeBindingMode: 'WaitForFirstConsumer',
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['zone-b', 'zone-c'] }] }] };
    const immediate = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'now' }, volumeBindingMode: 'Immediate' };
    const store = storeOf([...nodes(ZONES, 1), sc, immediate, pvc('w', { storageClassName: 'wffc' }), pvc('i', { storageClassName: 'now' })]);
    const w = podVolumes(asPending(pod('p', undefined, { claims: ['w'] })), store);
    assert.equal(w.constraints[0]!.bound, false);
    assert.deepEqual([...volumeZones(w.constraints, store, 'topology.kubernetes.io/zone')].sort(), ['zone-b', 'zone-c']);
    assert.equal(podVolumes(asPending(pod('p', undefined, { claims: ['i'] })), store).constraints.length, 0);
  });

  it('uses a PV pre-bound to the claim before the PVC shows it, and names what is missing', () => {
    const store = storeOf([...nodes(ZONES, 1), pv('pre', 'zone-c', { claim: 'data' })]);
    const v = podVolumes(asPending(pod('p', undefined, { claims: ['data', 'other'] })), store);
    assert.equal(v.constraints.length, 1);
    assert.deepEqual(v.missing, ['PVC default/other is not in the cache yet']);
  });

  it('names generic ephemeral volumes <pod>-<volume>', () => {
    const raw = pod('p', undefined);
    raw.spec.volumes = [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }];
    assert.deepEqual(asPending(raw).claims, ['p-scratch']);
  });
});
