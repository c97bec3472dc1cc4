import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adoptedList, minCostAssignment } from '../../src/placement/zoneListAdoption.js';
import { nodes, pv, pvc, statefulSet, stsPod, storeOf } from '../support/builders.js';
import { filterFor, passedZones } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

describe('adoption: the zone list keeps what is already placed', () => {
  it('minCostAssignment finds the optimum where the greedy choice does not', () => {
    // Greedy takes row 0 → column 0 (cost 1) and pays 100 later; the optimum is 2 + 2 + 3.
    const cost = [[1, 2, 100], [2, 100, 100], [100, 3, 2]];
    assert.deepEqual(minCostAssignment(cost), [1, 0, 2]);
    assert.deepEqual(minCostAssignment([[5]]), [0]);
  });

  it('volumes in c, a, b for ordinals 0, 1, 2 give the list c, a, b: every seat agrees', () => {
    const seats = [{ index: 0, zone: 'zone-c' }, { index: 1, zone: 'zone-a' }, { index: 2, zone: 'zone-b' }, { index: 3, zone: 'zone-c' }];
    assert.deepEqual(adoptedList(ZONES, seats), { zones: ['zone-c', 'zone-a', 'zone-b'], agree: 4 });
  });

  it('the most seats win over a majority of positions, and ties keep the fleet order', () => {
    // Positions 0 and 1 both want zone-a, 3 seats against 1: position 0 gets it.
    const seats = [0, 3, 6].map((index) => ({ index, zone: 'zone-a' })).concat([{ index: 1, zone: 'zone-a' }]);
    const out = adoptedList(['zone-b', 'zone-c', 'zone-a'], seats);
    assert.equal(out.zones[0], 'zone-a');
    assert.equal(out.agree, 3);
    // Nothing placed: the fleet's order as it is.
    assert.deepEqual(adoptedList(['zone-b', 'zone-c', 'zone-a'], []).zones, ['zone-b', 'zone-c', 'zone-a']);
  });

  const cluster = () => storeOf([...nodes(ZONES, 1), statefulSet('db', 3),
    ...[['zone-c', 0], ['zone-a', 1], ['zone-b', 2]].flatMap(([zone, i]) => [pvc(`data-db-${i}`, { volumeName: `pv-${i}` }), pv(`pv-${i}`, zone as string, { claim: `data-db-${i}` })]),
    ...[0, 1, 2].map((i) => stsPod('db', i, { claims: [`data-db-${i}`] }))]);

  it('a StatefulSet whose bound volumes sit in c, a, b gets that list frozen, and no pin conflicts with its volume', () => {
    const store = cluster();
    const v = filterFor(store, stsPod('db', 0, { claims: ['data-db-0'] }));
    assert.deepEqual(passedZones(store, v), ['zone-c']);
    assert.deepEqual(v.effects.freeze?.zones, ['zone-c', 'zone-a', 'zone-b']);
    assert.deepEqual(v.effects.freeze?.adopted, { agree: 3, seats: 3 });
    assert.equal(v.effects.conflict, undefined);
  });

  it('the first pod of a StatefulSet adopts the zones of its later ordinals\' claims too (volumeClaimTemplates)', () => {
    // OrderedReady: only ordinal 0 exists; the PVCs of 1 and 2 are bound already.
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { claimTemplates: ['data'] }),
      ...[['zone-c', 0], ['zone-a', 1], ['zone-b', 2]].flatMap(([zone, i]) => [pvc(`data-db-${i}`, { volumeName: `pv-${i}` }), pv(`pv-${i}`, zone as string, { claim: `data-db-${i}` })]),
      stsPod('db', 0, { claims: ['data-db-0'] })]);
    const v = filterFor(store, stsPod('db', 0, { claims: ['data-db-0'] }));
    assert.deepEqual(v.effects.freeze?.zones, ['zone-c', 'zone-a', 'zone-b']);
    assert.deepEqual(v.effects.freeze?.adopted, { agree: 3, seats: 3 });
  });

  it('placement.adoptExisting: false keeps the fleet order, and the volume then overrides the pin', () => {
    const store = cluster();
    const v = filterFor(store, stsPod('db', 1, { claims: ['data-db-1'] }), { settings: { adoptExisting: false } });
    assert.equal(v.effects.freeze?.adopted, undefined);
    assert.deepEqual(v.effects.freeze?.zones, ZONES, 'no list starts anywhere yet: the fleet starts at the first zone');
    assert.deepEqual(v.effects.conflict?.volumeZones, ['zone-a'], 'ordinal 1 is pinned to zone-b, its volume is in zone-a');
  });
});
