import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  annotationBytes, chooseInstanceId, idsForWaitingPods, parseAssignment, serializeAssignment,
} from '../../src/placement/instanceAssignment.js';
import { instanceSeats, rolloutSeat } from '../../src/placement/instanceSeats.js';
import { workloadModel } from '../../src/placement/model.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { rejectionOf } from '../../src/placement/verdict.js';
import { deployment, nodes, pod, rsPod, storeOf, type PodOpts, type Raw } from '../support/builders.js';
import { defaultSettings, filterFor, passedZones } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const all = () => true;
const modelOf = (store: ClusterStore, name: string) =>
  workloadModel({ kind: 'Deployment', namespace: 'default', name }, store.workload('Deployment', 'default', name), store, defaultSettings());

describe('instance ID assignment (pure)', () => {
  it('takes the lowest free ID, and reuses the ID a pod already holds', () => {
    const a = parseAssignment('{"0":"p0","2":"p2"}');
    const c = chooseInstanceId(a, 'new', 4, all);
    assert.deepEqual(c.kind === 'new' && [c.id, serializeAssignment(c.assignment)], [1, '{"0":"p0","1":"new","2":"p2"}']);
    assert.deepEqual(chooseInstanceId(a, 'p2', 4, all), { kind: 'held', id: 2 });
  });

  it('when the map is full, first frees the IDs of gone pods', () => {
    const full = parseAssignment('{"0":"p0","1":"gone","2":"p2"}');
    const c = chooseInstanceId(full, 'new', 3, (p) => p !== 'gone');
    assert.ok(c.kind === 'new');
    assert.equal(c.id, 1);
    assert.deepEqual(c.pruned, ['gone']);
    const stuck = chooseInstanceId(full, 'new', 3, all);
    assert.equal(stuck.kind, 'full');
  });

  it('never hands out an ID at or above replicas', () => {
    const c = chooseInstanceId(parseAssignment('{"0":"a","1":"b"}'), 'c', 2, all);
    assert.equal(c.kind, 'full');
  });

  it('refuses a map that is not a JSON object, and counts annotation bytes as Kubernetes does', () => {
    assert.throws(() => parseAssignment('[1]'), /not a JSON object/);
    assert.throws(() => parseAssignment('{'), /not JSON/);
    assert.equal(annotationBytes({ ab: 'cde', é: 'x' }), 2 + 3 + 2 + 1);
  });
});

describe('instance IDs pin zones through the sequence', () => {
  const cluster = () => storeOf([...nodes(ZONES, 1), ...deployment('web', 6, { 'zonekeeper.io/instance-ids': 'true' })]);

  it('IDs 0..5 go a,b,c,a,b,c', () => {
    const store = cluster();
    const zones = [0, 1, 2, 3, 4, 5].map((id) => passedZones(store, filterFor(store, rsPod('web', `p${id}`, { annotations: { 'zonekeeper.io/instance-id': String(id) } }))));
    assert.deepEqual(zones, [['zone-a'], ['zone-b'], ['zone-c'], ['zone-a'], ['zone-b'], ['zone-c']]);
    const v = filterFor(store, rsPod('web', 'p4', { annotations: { 'zonekeeper.io/instance-id': '4' } }));
    assert.equal(rejectionOf(v, 'node-a-1')!.reason, 'pinned to zone-b');
    assert.match(v.summary, /^pinned: instance ID 4 → zone-b \(3 zones\)$/);
  });

  it('a pod without an ID waits (resolvable), it is not placed blind', () => {
    const store = cluster();
    const v = filterFor(store, rsPod('web', 'x'));
    assert.equal(v.passed.length, 0);
    assert.match(v.summary, /has no instance ID yet/);
  });

  it('the opt-in on the Deployment pod template counts', () => {
    const [deploy, rs] = deployment('web', 3);
    deploy!.spec.template = { metadata: { annotations: { 'zonekeeper.io/instance-ids': 'true' } } };
    const store = storeOf([...nodes(ZONES, 1), deploy!, rs!]);
    assert.deepEqual(passedZones(store, filterFor(store, rsPod('web', 'p', { annotations: { 'zonekeeper.io/instance-id': '2' } }))), ['zone-c']);
  });
});

describe('instance IDs through a rollout (docs/design.md#instance-ids)', () => {
  // Deployment web at 3: the old ReplicaSet's pods hold 0, 1, 2 in a, b, c; a new ReplicaSet surges.
  const newRs = (hash: string): Raw => ({
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: { name: `web-${hash}`, namespace: 'default', uid: `rs-${hash}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-web', controller: true }] },
    spec: { replicas: 1 },
  });
  const newPod = (name: string, o: PodOpts = {}) => pod(`web-new-${name}`, { kind: 'ReplicaSet', name: 'web-new' }, o);
  const old = (id: number, o: PodOpts = {}) =>
    rsPod('web', `o${id}`, { nodeName: `node-${'abc'[id]}-1`, annotations: { 'zonekeeper.io/instance-id': String(id) }, ...o });
  const cluster = (extra: Raw[] = []) => storeOf([...nodes(ZONES, 1), ...deployment('web', 3, { 'zonekeeper.io/instance-ids': 'true' }), newRs('new'), old(0), old(1), old(2), ...extra]);

  it('the surge pod is placed, without an ID, in the zone of the pod removed first (the highest ID)', async () => {
    const store = cluster([newPod('s1')]);
    const seats = instanceSeats(modelOf(store, 'web'), store, 'web-new-s1');
    assert.deepEqual([seats.free, [...seats.held.keys()].sort()], [[], [0, 1, 2]]);
    assert.equal(rolloutSeat(modelOf(store, 'web'), { name: 'web-new-s1', owner: { kind: 'ReplicaSet', name: 'web-new' } as any }, seats, store), 2);
  });

  it('an ID freed by the old pod goes to the placed pod in its zone, before any pending pod', () => {
    // o2 (zone c) is gone; s1 runs in c without an ID, s2 runs in a; a third surge pod is pending.
    const store = cluster([newPod('s1', { nodeName: 'node-c-1' }), newPod('s2', { nodeName: 'node-a-1' }), newPod('s3')]);
    store.delete('pods', 'default/web-rs-o2');
    const seats = instanceSeats(modelOf(store, 'web'), store, 'web-new-s3');
    assert.deepEqual(Object.fromEntries(seats.due), { 'web-new-s1': 2 });
    // s2 in zone a makes a the zone over its target, so o0 (ID 0) goes next and s2 gets 0;
    // s3 is placed for the ID after it: o1's 1, in zone b.
    assert.equal(rolloutSeat(modelOf(store, 'web'), { name: 'web-new-s3', owner: { kind: 'ReplicaSet', name: 'web-new' } as any }, seats, store), 1);
  });

  it('free IDs match placed pods by zone, else the lowest', () => {
    const zoneOfId = (id: number) => ZONES[id % 3];
    const due = idsForWaitingPods([0, 2], [{ name: 'x', zone: 'zone-c' }, { name: 'y', zone: 'zone-b' }], zoneOfId);
    assert.deepEqual(Object.fromEntries(due), { x: 2, y: 0 });
    // The older pod in zone a does not take b's ID from the pod in b (seen on 1.30: 'rclsz' before 'rvthb').
    const fair = idsForWaitingPods([1], [{ name: 'older-in-a', zone: 'zone-a' }, { name: 'in-b', zone: 'zone-b' }], zoneOfId);
    assert.deepEqual(Object.fromEntries(fair), { 'in-b': 1 });
  });

  it('IDs live pods carry count as taken even where the map misses them, and reserved IDs are skipped', () => {
    const c = chooseInstanceId(new Map(), 'new', 4, all, { held: new Map([[0, 'old-a']]), reserved: new Set([1]) });
    assert.deepEqual(c.kind === 'new' && [c.id, serializeAssignment(c.assignment)], [2, '{"0":"old-a","2":"new"}']);
    const preferred = chooseInstanceId(new Map(), 'new', 4, all, { prefer: 3 });
    assert.equal(preferred.kind === 'new' && preferred.id, 3);
  });
});
