import assert from 'node:assert/strict';
import { rejectionOf } from '../../../placement/verdict.js';
import { describe, it } from 'node:test';
import { POD_INDEX_LABEL } from '../../../cluster/annotations.js';
import { slimNode } from '../../../cluster/convert.js';
import { deployment, nodes, pod, pv, pvc, rsPod, statefulSet, storeOf, stsPod, node } from '../../../../test/support/builders.js';
import { FakeClock, filterFor, inputFor, passedZones } from '../../../../test/support/placement.js';
import { filterNodes } from '../../../placement/filtering.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

describe('zone pin (StatefulSet ordinals)', () => {
  it('sends ordinals 0..5 over 3 zones to a,b,c,a,b,c', () => {
    const store = storeOf([...nodes(ZONES, 2), statefulSet('db', 6)]);
    const zones = [0, 1, 2, 3, 4, 5].map((i) => passedZones(store, filterFor(store, stsPod('db', i))));
    assert.deepEqual(zones, [['zone-a'], ['zone-b'], ['zone-c'], ['zone-a'], ['zone-b'], ['zone-c']]);
  });

  it('reads zones by slot, and by node where a slot changed hands after the names were resolved', () => {
    const store = storeOf([...nodes(ZONES, 2), statefulSet('db', 6)]);
    const input = inputFor(store, stsPod('db', 1)); // pinned to zone-b
    assert.deepEqual(filterNodes(input).passed, ['node-b-1', 'node-b-2']);
    // While the request awaits: node-a-1 goes, and its slot goes to a new zone-b node. The
    // request still holds node-a-1's object: it is judged by it, not by the slot's new node.
    store.delete('nodes', 'node-a-1');
    store.upsert('nodes', slimNode(node('node-b-9', 'zone-b')));
    const v = filterNodes(input);
    assert.deepEqual(v.passed, ['node-b-1', 'node-b-2']);
    assert.equal(rejectionOf(v, 'node-a-1')?.reason, 'pinned to zone-b');
  });

  it('rejects the other zones as unresolvable with a reason that names the rule and the zone', () => {
    const store = storeOf([...nodes(ZONES, 2), statefulSet('db', 6)]);
    const v = filterFor(store, stsPod('db', 4));
    assert.deepEqual(v.passed, ['node-b-1', 'node-b-2']);
    const r = rejectionOf(v, 'node-a-1')!;
    assert.equal(r.rule, 'zone-pin');
    assert.equal(r.unresolvable, true);
    assert.equal(r.reason, 'pinned to zone-b');
    assert.match(v.summary, /^pinned: ordinal 4 → zone-b \(3 zones\)$/);
    assert.deepEqual(v.effects.reserve, { zone: 'zone-b' });
  });

  it('honours spec.ordinals.start = 5', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { ordinalsStart: 5 })]);
    assert.deepEqual([5, 6, 7, 8].map((o) => passedZones(store, filterFor(store, stsPod('db', o)))), [['zone-a'], ['zone-b'], ['zone-c'], ['zone-a']]);
    const below = filterFor(store, stsPod('db', 2));
    assert.equal(below.passed.length, 0, 'an ordinal below start cannot be placed');
  });

  it('reads the ordinal from the pod-index label before the name', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 6)]);
    const p = stsPod('db', 0, { labels: { [POD_INDEX_LABEL]: '2' } });
    assert.deepEqual(passedZones(store, filterFor(store, p)), ['zone-c']);
  });

  it('uses the zonekeeper.io/zones annotation, and asks to freeze a derived list', () => {
    const annotated = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': 'zone-c, zone-a' } })]);
    assert.deepEqual(passedZones(annotated, filterFor(annotated, stsPod('db', 0))), ['zone-c']);
    assert.deepEqual(passedZones(annotated, filterFor(annotated, stsPod('db', 1))), ['zone-a']);
    assert.equal(filterFor(annotated, stsPod('db', 0)).effects.freeze, undefined);

    const derived = storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]);
    assert.deepEqual(filterFor(derived, stsPod('db', 0)).effects.freeze?.zones, ZONES);
    assert.equal(filterFor(derived, stsPod('db', 0), { settings: { freezeZones: false } }).effects.freeze, undefined);
  });

  it('keeps the frozen mapping when a zone is added later', () => {
    const store = storeOf([...nodes([...ZONES, 'zone-d'], 1), statefulSet('db', 6, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } })]);
    assert.deepEqual(passedZones(store, filterFor(store, stsPod('db', 3))), ['zone-a']);
  });

  it('lets a bound volume in zone-c beat the pin, and reports the conflict', () => {
    const store = storeOf([...nodes(ZONES, 2), statefulSet('db', 3), pvc('data-db-0', { volumeName: 'pv-0' }), pv('pv-0', 'zone-c', { claim: 'data-db-0' })]);
    const v = filterFor(store, stsPod('db', 0, { claims: ['data-db-0'] }));
    assert.deepEqual(passedZones(store, v), ['zone-c']);
    assert.equal(v.effects.conflict?.pinnedZone, 'zone-a');
    assert.deepEqual(v.effects.conflict?.volumeZones, ['zone-c']);
    const r = rejectionOf(v, 'node-a-1')!;
    assert.equal(r.rule, 'volume');
    assert.equal(r.unresolvable, true);
    assert.match(r.reason, /volume data-db-0 \(PV pv-0\)/);
  });

  it('narrows to the pin inside the volume zones when they agree, with no conflict', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3), pvc('data-db-1', { volumeName: 'pv-1' }),
      pv('pv-1', undefined, { labelZone: 'zone-a__zone-b' })]);
    const v = filterFor(store, stsPod('db', 1, { claims: ['data-db-1'] }));
    assert.deepEqual(passedZones(store, v), ['zone-b']);
    assert.equal(v.effects.conflict, undefined);
  });

  it('waits (resolvable) when a PVC or PV is not in the cache', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3), pvc('data-db-2', { volumeName: 'pv-gone' })]);
    const missingPv = filterFor(store, stsPod('db', 2, { claims: ['data-db-2'] }));
    assert.equal(missingPv.passed.length, 0);
    assert.match(rejectionOf(missingPv, 'node-a-1')!.reason, /PV pv-gone of claim data-db-2 is not in the cache/);
    assert.equal(rejectionOf(missingPv, 'node-a-1')!.unresolvable, false);
    const missingPvc = filterFor(store, stsPod('db', 1, { claims: ['nope'] }));
    assert.match(missingPvc.summary, /PVC default\/nope is not in the cache/);
  });

  it('waits when the StatefulSet is not in the cache, and rejects unknown node names with a reason', () => {
    const store = storeOf(nodes(ZONES, 1));
    const v = filterFor(store, stsPod('db', 0));
    assert.equal(v.passed.length, 0);
    assert.match(rejectionOf(v, 'node-a-1')!.reason, /StatefulSet default\/db is not in the cache/);

    const withSts = storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]);
    const unknown = filterFor(withSts, stsPod('db', 0), { candidates: ['node-a-1', 'ghost'] });
    assert.deepEqual(unknown.passed, ['node-a-1']);
    assert.equal(rejectionOf(unknown, 'ghost')!.rule, 'cache');
  });

  it('passes every node for unmanaged pods and opted-out workloads', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), statefulSet('skip', 3, { annotations: { 'zonekeeper.io/ignore': 'true' } })]);
    for (const p of [rsPod('web', 'x'), pod('bare', undefined), stsPod('skip', 1), stsPod('db', 1, { annotations: { 'zonekeeper.io/ignore': 'true' } })]) {
      const v = filterFor(store, p);
      assert.equal(v.managed, false, p.metadata.name);
      assert.equal(v.passed.length, 3);
    }
  });

  it('does not pin when manageStatefulSets is off', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]);
    assert.equal(filterFor(store, stsPod('db', 1), { settings: { manageStatefulSets: false } }).passed.length, 3);
  });

  it('honours a per-workload topology key', () => {
    const racks = [node('r1', 'zone-a', { labels: { rack: 'r1' } }), node('r2', 'zone-a', { labels: { rack: 'r2' } })];
    const store = storeOf([...racks, statefulSet('db', 2, { annotations: { 'zonekeeper.io/topology-key': 'rack' } })]);
    assert.deepEqual(filterFor(store, stsPod('db', 1)).passed, ['r2']);
  });

  it('strict: waits for the pinned zone; adaptive: falls through after fallbackAfterSeconds, never with a bound volume', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3), pvc('data-db-1', { volumeName: 'pv-1' }), pv('pv-1', 'zone-b', { claim: 'data-db-1' })]);
    const noB = ['node-a-1', 'node-c-1'];
    const clock = new FakeClock();
    const strict = filterFor(store, stsPod('db', 1), { candidates: noB, clock, waitingSince: clock.t - 600_000 });
    assert.equal(strict.passed.length, 0);
    assert.match(rejectionOf(strict, 'node-a-1')!.reason, /pinned to zone-b/);

    const adaptive = { zoneFallback: 'adaptive' as const, fallbackAfterSeconds: 120 };
    const early = filterFor(store, stsPod('db', 1), { candidates: noB, clock, waitingSince: clock.t - 60_000, settings: adaptive });
    assert.equal(early.passed.length, 0, 'not yet');
    assert.equal(early.retryAfterMs, 60_000, 'retried when fallbackAfterSeconds is up');
    assert.equal(strict.retryAfterMs, undefined, 'strict waits for the zone, not for time');
    const late = filterFor(store, stsPod('db', 1), { candidates: noB, clock, waitingSince: clock.t - 120_000, settings: adaptive });
    assert.deepEqual(late.passed, ['node-c-1'], 'next zone of the list after zone-b');
    assert.match(late.summary, /fell through from zone-b to zone-c/);
    const withVolume = filterFor(store, stsPod('db', 1, { claims: ['data-db-1'] }), { candidates: noB, clock, waitingSince: 0, settings: adaptive });
    assert.equal(withVolume.passed.length, 0, 'bound volumes never fall through');
    assert.equal(withVolume.retryAfterMs, undefined, 'and so never wait for time');
  });

  it('a listed zone nothing can grow a node in (no autoscaler): strict says so; adaptive moves the seat after its time', () => {
    // Frozen under the old default: zone-b had no node the pool fits and no autoscaler can add one.
    const sts = statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' }, template: { nodeSelector: { pool: 'db' } } });
    const pool = ['zone-a', 'zone-c'].map((z) => node(`db-${z}`, z, { labels: { pool: 'db' } }));
    const store = storeOf([...pool, node('web-b', 'zone-b'), sts]);
    const clock = new FakeClock();
    const seat1 = stsPod('db', 1, { nodeSelector: { pool: 'db' } });
    const strict = filterFor(store, seat1, { clock, waitingSince: clock.t });
    assert.equal(strict.passed.length, 0);
    assert.match(rejectionOf(strict, 'db-zone-a')!.reason, /pinned to zone-b: no node in zone-b fits .*, and none can be added/);
    const settings = { zoneFallback: 'adaptive' as const, fallbackAfterSeconds: 120 };
    assert.equal(filterFor(store, seat1, { clock, waitingSince: clock.t, settings }).retryAfterMs, 120_000);
    const adaptive = filterFor(store, seat1, { clock, waitingSince: clock.t - 120_000, settings });
    assert.deepEqual(adaptive.passed, ['db-zone-c']);
    assert.match(adaptive.summary, /fell through from zone-b to zone-c after 120s/);
  });
});
