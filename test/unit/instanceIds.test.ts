import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  annotationBytes, chooseInstanceId, parseAssignment, serializeAssignment,
} from '../../src/placement/instanceAssignment.js';
import { rejectionOf } from '../../src/placement/verdict.js';
import { deployment, nodes, rsPod, storeOf } from '../support/builders.js';
import { filterFor, passedZones } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const all = () => true;

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
    assert.equal(annotationBytes({ ab: 'cde', 'é': 'x' }), 2 + 3 + 2 + 1);
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
    assert.match(v.summary, /pinned to zone-b: instance ID 4 of 3 zones/);
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
