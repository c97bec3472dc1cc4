// OpenKruise's CloneSet and Advanced StatefulSet through the real routes: owner references
// told apart by API group, ordinals pinned with reserveOrdinals and ordinals.start, percent
// quotas of a WorkloadSpread on a CloneSet, deletion costs, instance IDs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kindOfObject, WORKLOAD_KINDS, workloadKindNamed, workloadPath } from '../../src/cluster/kinds.js';
import { slimOf, slimWorkload } from '../../src/cluster/convert.js';
import { workloadKindOf } from '../../src/cluster/kinds.js';
import { expectedOrdinals } from '../../src/placement/workload.js';
import {
  advancedStatefulSet, astsPod, clonePod, cloneSet, nodes, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw,
} from '../support/builders.js';
import { testApp } from '../support/app.js';
import { filterFor, passedZones } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const names = ZONES.map((z) => `node-${z.slice(5)}-1`);
const request = (pod: Raw) => ({ Pod: pod, NodeNames: names });
const zonesOf = (store: ReturnType<typeof storeOf>, pod: Raw) => passedZones(store, filterFor(store, pod));

describe('OpenKruise kinds in the kind table', () => {
  it('owner references and targets are told apart by API group', () => {
    assert.equal(workloadKindOf('apps.kruise.io/v1beta1', 'StatefulSet'), 'AdvancedStatefulSet');
    assert.equal(workloadKindOf('apps.kruise.io/v1alpha1', 'StatefulSet'), 'AdvancedStatefulSet');
    assert.equal(workloadKindOf('apps/v1', 'StatefulSet'), 'StatefulSet');
    assert.equal(workloadKindOf('apps.kruise.io/v1alpha1', 'CloneSet'), 'CloneSet');
    assert.equal(workloadKindOf('example.com/v1', 'CloneSet'), 'CloneSet.example.com', 'not Kruise\'s: not a workload of ours');
    assert.equal(workloadKindOf('example.com/v1', 'Deployment'), 'Deployment.example.com');
    assert.equal(workloadKindOf('batch/v1', 'Job'), 'Job');
    assert.equal(kindOfObject('StatefulSet', 'apps.kruise.io/v1alpha1')?.plural, 'advancedstatefulsets');
    assert.equal(kindOfObject('StatefulSet', 'apps/v1'), WORKLOAD_KINDS.StatefulSet);
    assert.equal(kindOfObject('CloneSet', 'apps.kruise.io/v1alpha1')?.plural, 'clonesets');
    assert.equal(kindOfObject('Deployment', 'example.com/v1'), undefined);
    assert.equal(workloadKindNamed('asts'), 'AdvancedStatefulSet');
    assert.equal(workloadKindNamed('clonesets'), 'CloneSet');
    assert.equal(workloadKindNamed('statefulsets'), 'StatefulSet');
  });

  it('writes go to the version an object was read at, under the resource name the API server uses', () => {
    const asts = slimOf(kindOfObject('StatefulSet', 'apps.kruise.io/v1alpha1')!)(advancedStatefulSet('pg', 3)) as ReturnType<typeof slimWorkload>;
    assert.equal(asts.kind, 'AdvancedStatefulSet');
    assert.equal(workloadPath({ ...asts, namespace: 'db' }), '/apis/apps.kruise.io/v1alpha1/namespaces/db/statefulsets/pg');
    assert.equal(workloadPath(slimWorkload('CloneSet', cloneSet('web', 2), 'apps.kruise.io/v1alpha1')), '/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/web');
  });
});

describe('Advanced StatefulSet', () => {
  it('pins ordinal i to L[i mod |L|] by its own frozen list, never an apps/v1 StatefulSet\'s of the same name', () => {
    const store = storeOf([
      ...nodes(ZONES, 1),
      statefulSet('db', 6, { annotations: { 'zonekeeper.io/zones': 'zone-c,zone-a,zone-b' } }),
      advancedStatefulSet('db', 6, { annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' } }),
    ]);
    assert.deepEqual(zonesOf(store, astsPod('db', 4)), ['zone-b']);
    assert.deepEqual(zonesOf(store, stsPod('db', 4)), ['zone-a']);
    assert.deepEqual([...store.podsOwnedBy('AdvancedStatefulSet', 'default', 'db')], []);
  });

  it('reserved ordinals never appear: the seat is the ordinal, so pods keep their zones when an ordinal is reserved', () => {
    const store = storeOf([...nodes(ZONES, 1), advancedStatefulSet('db', 3, { reserveOrdinals: [1], annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' } })]);
    assert.deepEqual(zonesOf(store, astsPod('db', 0)), ['zone-a']);
    assert.deepEqual(zonesOf(store, astsPod('db', 2)), ['zone-c']);
    assert.deepEqual(zonesOf(store, astsPod('db', 3)), ['zone-a']);
  });

  it('ordinals.start shifts the seats', () => {
    const store = storeOf([...nodes(ZONES, 1), advancedStatefulSet('db', 3, { ordinalsStart: 5, annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' } })]);
    assert.deepEqual(zonesOf(store, astsPod('db', 5)), ['zone-a']);
    assert.deepEqual(zonesOf(store, astsPod('db', 7)), ['zone-c']);
    assert.match(filterFor(store, astsPod('db', 2)).summary, /ordinal/);
    assert.equal(filterFor(store, astsPod('db', 2)).passed.length, 0, 'an ordinal below start has no seat');
  });

  it('the ordinals kept skip reserved singles and ranges, in work bounded by replicas and the list', () => {
    const w = (reserveOrdinals: (number | string)[], replicas: number, start = 0) => slimWorkload('AdvancedStatefulSet', advancedStatefulSet('x', replicas, { reserveOrdinals, ordinalsStart: start }));
    assert.deepEqual(expectedOrdinals(w([1], 3), 100), [0, 2, 3]);
    assert.deepEqual(expectedOrdinals(w(['2-4', 6, 'junk', '9-7', -1], 4, 1), 100), [1, 5, 7, 8]);
    // Ranges are jumped, not walked: its time is measured by npm run bench (test/bench/hostile.ts).
    assert.deepEqual(expectedOrdinals(w(['0-2147483645'], 2), 100), [2147483646, 2147483647]);
    assert.deepEqual(expectedOrdinals(w(['0-2147483647'], 2), 100), [], 'nothing left below the int32 limit');
    assert.equal(expectedOrdinals(w([], 1_000_000), 10).length, 10);
  });

  it('the layout names reserved ordinals and the ones not created yet', async () => {
    const store = storeOf([
      ...nodes(ZONES, 1),
      advancedStatefulSet('db', 3, { reserveOrdinals: [1, '5-6'], annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' } }),
      astsPod('db', 0, { nodeName: 'node-a-1' }), astsPod('db', 3),
    ]);
    const layout = await (await testApp(store).adminApp.request('/debug/workloads/default/asts/db')).json() as any;
    assert.equal(layout.policy, 'zone-pin');
    assert.equal(layout.workload.kind, 'AdvancedStatefulSet');
    assert.deepEqual(layout.ordinals, { start: 0, reserved: ['1', '5-6'], missing: [2] });
    assert.deepEqual(layout.pods.map((p: any) => [p.name, p.pinnedZone]), [['db-0', 'zone-a'], ['db-3', 'zone-a']]);
  });
});

describe('CloneSet', () => {
  const spread = (maxA: number | string) => workloadSpread('ws', { kind: 'CloneSet', name: 'web' }, [zoneSubset('a', 'zone-a', maxA), zoneSubset('b', 'zone-b')]);

  it('a WorkloadSpread resolves percent quotas from the CloneSet\'s replicas', () => {
    const bound = [clonePod('web', 'x1', { nodeName: 'node-a-1' }), clonePod('web', 'x2', { nodeName: 'node-a-1' })];
    const store = storeOf([...nodes(ZONES, 1), cloneSet('web', 10), spread('20%'), ...bound]);
    assert.deepEqual(zonesOf(store, clonePod('web', 'new')), ['zone-b'], '20% of 10 is 2, both taken');
    const roomier = storeOf([...nodes(ZONES, 1), cloneSet('web', 20), spread('20%'), ...bound]);
    assert.deepEqual(zonesOf(roomier, clonePod('web', 'new')), ['zone-a'], '20% of 20 is 4: subset a first');
  });

  it('waits while the CloneSet is not cached, rather than guessing its replicas', () => {
    const store = storeOf([...nodes(ZONES, 1), spread('20%')]);
    const v = filterFor(store, clonePod('web', 'new'));
    assert.equal(v.passed.length, 0);
    assert.match(v.summary, /CloneSet default\/web is not in the cache yet/);
  });

  it('deletion costs: the scale-down order of a WorkloadSpread CloneSet removes the subset over quota first', async () => {
    const pods = [clonePod('web', 'a1', { nodeName: 'node-a-1' }), clonePod('web', 'a2', { nodeName: 'node-a-1' }), clonePod('web', 'a3', { nodeName: 'node-a-1' }), clonePod('web', 'b1', { nodeName: 'node-b-1' })];
    const store = storeOf([...nodes(ZONES, 1), cloneSet('web', 4), spread(2), ...pods]);
    const layout = await (await testApp(store).adminApp.request('/debug/workloads/default/cloneset/web')).json() as any;
    assert.equal(layout.policy, 'workloadspread');
    assert.deepEqual(layout.workloadSpread.subsets.map((s: any) => [s.name, s.max, s.bound]), [['a', 2, 3], ['b', null, 1]]);
    assert.equal(layout.removalOrder.length, 4);
    assert.match(layout.removalOrder[0], /^web-a/, 'a pod of the subset over its quota goes first');
    const costs = Object.fromEntries(layout.pods.map((p: any) => [p.name, p.deletionCost.desired]));
    assert.ok(costs['web-b1'] > costs[layout.removalOrder[0]]);
  });

  it('instance IDs: the first filter assigns them on the CloneSet and pins a, b, c', async () => {
    const pods = Array.from({ length: 3 }, (_, i) => clonePod('web', `p${i}`));
    const store = storeOf([...nodes(ZONES, 1), cloneSet('web', 3, { 'zonekeeper.io/instance-ids': 'true' }), ...pods]);
    const app = testApp(store);
    const placed: string[] = [];
    for (const p of pods) placed.push((await (await app.post('/filter', request(p))).json()).NodeNames.join());
    assert.deepEqual(placed, names);
    assert.deepEqual(JSON.parse(store.workload('CloneSet', 'default', 'web')!.annotations['zonekeeper.io/instance-assignment']!), { 0: 'web-p0', 1: 'web-p1', 2: 'web-p2' });
  });
});
