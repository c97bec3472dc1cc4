import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetOrder } from '../../../placement/fleet.js';
import { Reservations } from '../../../decision/reservationLedger.js';
import { rejectionOf } from '../../../placement/verdict.js';
import { deployment, node, nodes, rsPod, statefulSet, storeOf, stsPod, type Raw } from '../../../../test/support/builders.js';
import { FakeClock, filterAndReserve, filterFor, passedZones } from '../../../../test/support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const weighted = JSON.stringify({ zones: { 'zone-a': { weight: 2 }, 'zone-b': { weight: 1 }, 'zone-c': { weight: 1 } } });

describe('zone balance (zone preferences without instance IDs)', () => {
  it('8 replicas with weights 2:1:1 land 4/2/2, placed one after another faster than the watch', () => {
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 8, { 'zonekeeper.io/zone-preferences': weighted })]);
    const reservations = new Reservations(30, new FakeClock());
    const placed = Array.from({ length: 8 }, (_, i) => passedZones(store, filterAndReserve(store, rsPod('web', `p${i}`), reservations))[0]);
    const count = (z: string) => placed.filter((x) => x === z).length;
    assert.deepEqual([count('zone-a'), count('zone-b'), count('zone-c')], [4, 2, 2]);
  });

  it('4 replicas over 3 equal zones land 2/1/1 (the planner\'s rounding would plan 2/2/0 and leave a zone empty)', () => {
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 4, { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' })]);
    const reservations = new Reservations(30, new FakeClock());
    const placed = Array.from({ length: 4 }, (_, i) => passedZones(store, filterAndReserve(store, rsPod('web', `p${i}`), reservations))[0]);
    // The list is the fleet's (hash) rotation of the sorted zones: its first zone takes the second pod.
    const list = fleetOrder(ZONES, 'default/Deployment/web', undefined);
    assert.deepEqual(list.map((z) => placed.filter((x) => x === z).length), [2, 1, 1]);
  });

  it('pods already in a zone over its share stay, and the other zones share the rest evenly (seed 002 scenario 7: 4 in A of 10 give 4/3/3, not 4/4/2)', () => {
    const bound = Array.from({ length: 4 }, (_, i) => rsPod('web', `a${i}`, { nodeName: 'node-a-1' }));
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 10, { 'zonekeeper.io/zone-preferences': '{"rebalance":false,"zones":{"*":{"weight":1}}}' }), ...bound]);
    const reservations = new Reservations(30, new FakeClock());
    const placed = Array.from({ length: 6 }, (_, i) => passedZones(store, filterAndReserve(store, rsPod('web', `p${i}`), reservations))[0]);
    const count = (z: string) => placed.filter((x) => x === z).length;
    assert.deepEqual([count('zone-a'), count('zone-b'), count('zone-c')], [0, 3, 3]);
  });

  it('sends the pod to the zone furthest below its target, counting bound pods', () => {
    const bound = (i: number, n: string) => rsPod('web', `b${i}`, { nodeName: n });
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 6, { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' }),
      bound(0, 'node-a-1'), bound(1, 'node-a-1'), bound(2, 'node-b-1')]);
    const v = filterFor(store, rsPod('web', 'new'));
    assert.deepEqual(passedZones(store, v), ['zone-c']);
    const r = rejectionOf(v, 'node-a-1')!;
    assert.equal(r.rule, 'zone-balance');
    assert.equal(r.unresolvable, false);
    assert.equal(r.reason, 'zone balance: zone-c');
    assert.match(v.summary, /zone-c is furthest below its target \(/);
    for (const part of ['zone-a 2/2', 'zone-b 1/2', 'zone-c 0/2']) assert.ok(v.summary.includes(part), v.summary);
  });

  it('takes a full zone\'s capacity from the cache when the scheduler sends none of its nodes', () => {
    const small = (name: string, zone: string): Raw => {
      const n = node(name, zone);
      n.status.allocatable = { cpu: '1', memory: '1Gi', pods: '10' };
      return n;
    };
    const podReq = (name: string, nodeName?: string) => {
      const p = rsPod('web', name, { nodeName });
      p.spec.containers = [{ name: 'c', resources: { requests: { cpu: '500m' } } }];
      return p;
    };
    // zone-c holds one 500m pod and has room for one more; zone-a and zone-b are offered.
    const store = storeOf([small('node-a-1', 'zone-a'), small('node-b-1', 'zone-b'), small('node-c-1', 'zone-c'),
      ...deployment('web', 9, { 'zonekeeper.io/zone-preferences': '{"rebalance":true,"zones":{"*":{"weight":1}}}' }), podReq('c0', 'node-c-1')]);
    const v = filterFor(store, podReq('new'), { candidates: ['node-a-1', 'node-b-1'] });
    // Capacity of zone-c = 1 bound + 1 more fits = 2: the plan is 4/3/2 (order by hash), so a or b.
    assert.equal(v.passed.length, 1);
    assert.match(v.summary, /zone-c 1\/2/);
  });

  it('an invalid annotation falls back to the defaults and says so', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3, { 'zonekeeper.io/zone-preferences': '{"zones":{"zone-a":{"wieght":1}}}' })]);
    const v = filterFor(store, rsPod('web', 'x'));
    assert.equal(v.policy, 'zone-balance');
    assert.equal(v.passed.length, 1, 'balanced with equal weights');
    assert.match(v.effects.preferencesError!.error, /zones\.zone-a\.wieght: unknown key/);
  });

  it('weights the StatefulSet sequence too', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 8, { annotations: { 'zonekeeper.io/zone-preferences': weighted } })]);
    const zones = Array.from({ length: 8 }, (_, i) => passedZones(store, filterFor(store, stsPod('db', i)))[0]);
    assert.deepEqual(zones.filter((z) => z === 'zone-a').length, 4);
    assert.equal(zones[0], 'zone-a');
  });
});

describe('zone preferences are limits (seed 002)', () => {
  const prefs = (json: unknown) => ({ 'zonekeeper.io/zone-preferences': JSON.stringify(json) });
  /** Places `n` pods one after another (reserving, as the watch lags); the zone each went to, or undefined when it waited. */
  function placeAll(store: ReturnType<typeof storeOf>, n: number) {
    const reservations = new Reservations(30, new FakeClock());
    return Array.from({ length: n }, (_, i) => {
      const v = filterAndReserve(store, rsPod('web', `p${i}`), reservations);
      return { zone: passedZones(store, v)[0], v };
    });
  }
  const counts = (placed: { zone: string | undefined }[]) => ZONES.map((z) => placed.filter((p) => p.zone === z).length);

  for (const [name, json] of [
    ['maxReplicas 2 on "*"', { zones: { '*': { maxReplicas: 2, weight: 1 } } }],
    ['minReplicas 2 at weight 0', { zones: { '*': { minReplicas: 2, weight: 0 } } }],
    ['min = max = 2', { zones: { '*': { minReplicas: 2, maxReplicas: 2, weight: 1 } } }],
  ] as const) {
    it(`${name}: 8 replicas over 3 zones place 2/2/2 and 2 wait, naming each zone's limit`, () => {
      const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 8, prefs(json))]);
      const placed = placeAll(store, 8);
      assert.deepEqual(counts(placed), [2, 2, 2]);
      const waiting = placed.filter((p) => p.zone === undefined);
      assert.equal(waiting.length, 2);
      for (const { v } of waiting) {
        assert.match(v.summary, /every zone is at its limit/);
        for (const z of ZONES) assert.match(v.summary, new RegExp(`${z} 2 of limit 2`));
        assert.equal([...v.rejected.keys()][0]!.unresolvable, true);
      }
    });
  }

  it('a zone without an entry (no "*") takes no pod, even when the named zones are cordoned', () => {
    const cordoned = (name: string, zone: string) => node(name, zone, { unschedulable: true });
    const store = storeOf([cordoned('node-a-1', 'zone-a'), cordoned('node-b-1', 'zone-b'), node('node-c-1', 'zone-c'),
      ...deployment('web', 4, prefs({ zones: { 'zone-a': { weight: 1 }, 'zone-b': { weight: 1 } } }))]);
    const v = filterFor(store, rsPod('web', 'p0'), { candidates: ['node-c-1'] });
    assert.deepEqual(v.passed, []);
    assert.match(v.summary, /zone-c 0 of limit 0/);
  });

  it('a zone\'s maximum caps it while another zone is offline (NotReady, unreachable taint): 10 replicas, c max 3 → a 7, c 3', () => {
    const offline = (name: string): Raw => {
      const n = node(name, 'zone-b', { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] });
      n.status.conditions = [{ type: 'Ready', status: 'Unknown' }];
      n.status.allocatable = { cpu: '8', memory: '32Gi', pods: '110' };
      return n;
    };
    const store = storeOf([node('node-a-1', 'zone-a'), offline('node-b-1'), node('node-c-1', 'zone-c'),
      ...deployment('web', 10, prefs({ zones: { '*': { weight: 1 }, 'zone-c': { weight: 1, maxReplicas: 3 } } }))]);
    const reservations = new Reservations(30, new FakeClock());
    // The scheduler itself never sends the unreachable node (its taints filter it out first).
    const placed = Array.from({ length: 10 }, (_, i) => passedZones(store, filterAndReserve(store, rsPod('web', `p${i}`), reservations, { candidates: ['node-a-1', 'node-c-1'] }))[0]);
    assert.deepEqual(ZONES.map((z) => placed.filter((x) => x === z).length), [7, 0, 3]);
  });
});
