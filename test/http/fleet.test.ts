// Fleet balance (issue 10 §1): many small workloads must not all put their first replica in
// the same zone. Placed one after another through the real routes, as kube-scheduler would.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION } from '../../src/cluster/annotations.js';
import { slimPod } from '../../src/cluster/convert.js';
import { firstSeatCounts, fleetOrder, type PendingList } from '../../src/placement/fleet.js';
import { deployment, nodes, pod, statefulSet, storeOf, stsPod, type Raw } from '../support/builders.js';
import { testApp, type TestApp } from '../support/app.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NAMES = ZONES.map((z) => `node-${z.slice(5)}-1`);
const zoneOfNode = (n: string) => `zone-${n.slice(5, 6)}`;

async function place(app: TestApp, podRaw: Raw): Promise<string> {
  const body = await (await app.post('/filter', { Pod: podRaw, NodeNames: NAMES })).json();
  assert.equal(body.NodeNames.length, 1, JSON.stringify(body));
  return zoneOfNode(body.NodeNames[0]);
}

const tally = (zones: string[]) => ZONES.map((z) => zones.filter((x) => x === z).length);

/** n StatefulSets of `replicas` each, every pod placed in turn; the zone of each ordinal. */
async function statefulSets(n: number, replicas: number, config: Record<string, unknown> = {}): Promise<string[][]> {
  const app = testApp(storeOf([...nodes(ZONES, 1), ...Array.from({ length: n }, (_, i) => statefulSet(`db${i}`, replicas))]), { config });
  const out: string[][] = [];
  for (let i = 0; i < n; i++) {
    const zones: string[] = [];
    for (let o = 0; o < replicas; o++) zones.push(await place(app, stsPod(`db${i}`, o)));
    out.push(zones);
  }
  return out;
}

describe('fleet balance: first replicas spread over the zones', () => {
  it('30 single-replica StatefulSets over 3 zones: each zone 7..13 (was 30/0/0)', async () => {
    const counts = tally((await statefulSets(30, 1)).map((z) => z[0]!));
    console.log(`# 30 single-replica StatefulSets: ${counts.join('/')}`);
    for (const c of counts) assert.ok(c >= 7 && c <= 13, `${counts}`);
  });

  it('300 single-replica StatefulSets: each zone within ±10 % of 100', async () => {
    const counts = tally((await statefulSets(300, 1)).map((z) => z[0]!));
    console.log(`# 300 single-replica StatefulSets: ${counts.join('/')}`);
    for (const c of counts) assert.ok(c >= 90 && c <= 110, `${counts}`);
  });

  it('2-replica StatefulSets use every zone evenly, each keeping its replicas in two zones (was zones a and b only)', async () => {
    const placed = await statefulSets(30, 2);
    const counts = tally(placed.flat());
    console.log(`# 30 two-replica StatefulSets, all replicas: ${counts.join('/')}`);
    for (const c of counts) assert.ok(c >= 14 && c <= 26, `${counts}`);
    for (const [a, b] of placed) assert.notEqual(a, b, 'two replicas, two zones');
  });

  it('instance-ID Deployments of 1 and 2 replicas spread the same way', async () => {
    const workloads = Array.from({ length: 30 }, (_, i) => deployment(`web${i}`, 1 + (i % 2), { [ANNOTATION.instanceIds]: 'true' })).flat();
    const store = storeOf([...nodes(ZONES, 1), ...workloads]);
    const app = testApp(store);
    const first: string[] = [];
    for (let i = 0; i < 30; i++) {
      for (let r = 0; r < 1 + (i % 2); r++) {
        const p = pod(`web${i}-rs-p${r}`, { kind: 'ReplicaSet', name: `web${i}-rs` });
        store.upsert('pods', slimPod(p));
        const zone = await place(app, p);
        if (r === 0) first.push(zone);
      }
    }
    const counts = tally(first);
    console.log(`# 30 instance-ID Deployments, ID 0: ${counts.join('/')}`);
    for (const c of counts) assert.ok(c >= 7 && c <= 13, `${counts}`);
  });

  it('zone-balanced Deployments of 1 replica spread too (the list is the fleet\'s hash rotation; was 30/0/0)', async () => {
    const prefs = { [ANNOTATION.zonePreferences]: '{"zones":{"*":{"weight":1}}}' };
    const store = storeOf([...nodes(ZONES, 1), ...Array.from({ length: 30 }, (_, i) => deployment(`api${i}`, 1, prefs)).flat()]);
    const app = testApp(store);
    const first: string[] = [];
    for (let i = 0; i < 30; i++) first.push(await place(app, pod(`api${i}-rs-p0`, { kind: 'ReplicaSet', name: `api${i}-rs` })));
    const counts = tally(first);
    console.log(`# 30 zone-balanced 1-replica Deployments: ${counts.join('/')}`);
    for (const c of counts) assert.ok(c >= 7 && c <= 13, `${counts}`);
    // The debug view shows the same list the filter balanced by.
    for (let i = 0; i < 30; i += 7) {
      const layout = await (await app.adminApp.request(`/debug/workloads/default/deployment/api${i}`)).json() as { zones: { list: string[] }; targets: Record<string, number> };
      assert.equal(layout.zones.list[0], first[i], `api${i}`);
      assert.equal(layout.targets[first[i]!], 1);
    }
  });

  it('placement.fleetBalance: false keeps today\'s order: every first replica in the first zone', async () => {
    const counts = tally((await statefulSets(30, 1, { placement: { fleetBalance: false } })).map((z) => z[0]!));
    assert.deepEqual(counts, [30, 0, 0]);
  });

  it('lists already frozen never change, and count: the next lists start where first seats are few', async () => {
    const frozen = (name: string, list: string) => statefulSet(name, 3, { annotations: { [ANNOTATION.zones]: list } });
    const app = testApp(storeOf([
      ...nodes(ZONES, 1), frozen('old1', 'zone-a,zone-b,zone-c'), frozen('old2', 'zone-a,zone-b,zone-c'), frozen('old3', 'zone-b,zone-c,zone-a'),
      statefulSet('new1', 1), statefulSet('new2', 1),
    ]));
    assert.equal(await place(app, stsPod('old1', 0)), 'zone-a', 'frozen lists keep their mapping');
    assert.equal(await place(app, stsPod('old3', 0)), 'zone-b');
    assert.equal(await place(app, stsPod('new1', 0)), 'zone-c', 'the zone no list starts at');
    assert.equal(await place(app, stsPod('new2', 0)), 'zone-b', 'then the zone with fewer first seats');
    assert.equal(app.source.snapshot.workload('StatefulSet', 'default', 'new1')!.annotations[ANNOTATION.zones], 'zone-c,zone-a,zone-b', 'a rotation of the sorted zones, frozen');
  });
});

describe('with freezing off, every reader sees the same rotated list', () => {
  it('placement and /debug/workloads agree on the seat of each ordinal', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...Array.from({ length: 6 }, (_, i) => statefulSet(`db${i}`, 3))]);
    const app = testApp(store, { config: { placement: { freezeZones: false } } });
    const starts = new Set<string>();
    for (let i = 0; i < 6; i++) {
      for (let o = 0; o < 3; o++) {
        const zone = await place(app, stsPod(`db${i}`, o));
        store.upsert('pods', slimPod(stsPod(`db${i}`, o, { nodeName: `node-${zone.slice(5)}-1` })));
        if (o === 0) starts.add(zone);
      }
      const layout = await (await app.adminApp.request(`/debug/workloads/default/statefulset/db${i}`)).json() as { pods: { inPinnedZone: boolean }[]; zones: { list: string[] } };
      assert.ok(layout.pods.every((p) => p.inPinnedZone), `db${i}: ${JSON.stringify(layout)}`);
      assert.equal(store.workload('StatefulSet', 'default', `db${i}`)!.annotations[ANNOTATION.zones], undefined, 'nothing frozen');
    }
    assert.ok(starts.size > 1, 'the hash spreads first replicas too');
  });
});

describe('first-seat counting', () => {
  it('counts lists being frozen that the cache does not show yet, once', () => {
    const store = storeOf([statefulSet('a', 1, { annotations: { [ANNOTATION.zones]: 'zone-b,zone-c,zone-a' } }), statefulSet('b', 1)]);
    const pending: PendingList[] = [
      { namespace: 'default', kind: 'StatefulSet', name: 'b', zones: ['zone-c', 'zone-a', 'zone-b'] },
      { namespace: 'default', kind: 'StatefulSet', name: 'a', zones: ['zone-b', 'zone-c', 'zone-a'] },
    ];
    assert.deepEqual([...firstSeatCounts(store, pending)].sort(), [['zone-b', 1], ['zone-c', 1]]);
  });

  it('without counts (lists not frozen) a stable hash picks the start: the same for a workload every time, spread over many', () => {
    const starts = Array.from({ length: 300 }, (_, i) => fleetOrder(ZONES, `default/StatefulSet/db${i}`, undefined)[0]!);
    assert.deepEqual(fleetOrder(ZONES, 'default/StatefulSet/db7', undefined), fleetOrder(ZONES, 'default/StatefulSet/db7', undefined));
    const counts = tally(starts);
    for (const c of counts) assert.ok(c >= 70 && c <= 130, `${counts}`);
  });
});
