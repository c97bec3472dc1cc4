import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planBinding } from '../../src/placement/bindingPlan.js';
import type { MemberInput } from '../../src/placement/clusterDivision.js';
import { websterSeats } from '../../src/placement/websterSeats.js';
import { binding, member } from '../support/federationMembers.js';
import { seededRandom } from '../support/random.js';

// A policy that names zonekeeper and says nothing else of zonekeeper's gets what karmada-scheduler v1.19 gives it:
// the answers below are those of Karmada's own scheduling e2e (test/e2e/suites/base at f8fdd02) and of its source.

const NOW = Date.parse('2026-12-01T00:00:00Z');
const SETTINGS = { pendingMs: 300_000, keepWaiting: 2, stride: undefined };
const ABC = (o: Partial<Record<'A' | 'B' | 'C', Parameters<typeof member>[1]>> = {}) => (['A', 'B', 'C'] as const).map((n) => member(n, o[n]));

function karmada(replicas: number, placement: object, members: MemberInput[], extra: Record<string, unknown> = {}) {
  const b = binding(replicas, (extra.clusters as never) ?? [], { ...extra, placement: { replicaScheduling: undefined, ...placement } });
  return planBinding(b, undefined, members, SETTINGS, NOW);
}
const clustersOf = (r: ReturnType<typeof karmada>) => {
  assert.ok(r.ok, r.ok ? '' : `${r.reason}: ${r.message}`);
  return Object.fromEntries(r.clusters.map((c) => [c.name, c.replicas]));
};
const DIVIDED = { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' };

describe('Webster seats, as Karmada dispenses them', () => {
  it('9 over 1:2 is 3:6; 9 over 1:3 is 2:7 (a tie goes to the party with fewer seats)', () => {
    assert.deepEqual(Object.fromEntries(websterSeats(9, new Map([['a', 1], ['b', 2]]), '')), { a: 3, b: 6 });
    assert.deepEqual(Object.fromEntries(websterSeats(9, new Map([['a', 1], ['b', 3]]), '')), { a: 2, b: 7 });
  });

  it('handing out the sure seats at once gives what one seat at a time gives', () => {
    const random = seededRandom(7).next;
    for (let round = 0; round < 300; round++) {
      const votes = new Map(['a', 'b', 'c', 'd'].slice(0, 1 + Math.floor(random() * 4)).map((n) => [n, Math.floor(random() * 7)]));
      const initial = new Map([...votes.keys()].map((n) => [n, Math.floor(random() * 3)]));
      const seats = Math.floor(random() * 60);
      // One at a time: the reference, on small numbers only.
      const slow = new Map(initial);
      if ([...votes.values()].some((v) => v > 0)) {
        for (let s = 0; s < seats; s++) {
          const best = [...slow.keys()].sort((x, y) => {
            const px = votes.get(x)! / (2 * slow.get(x)! + 1), py = votes.get(y)! / (2 * slow.get(y)! + 1);
            return py - px || slow.get(x)! - slow.get(y)! || (x < y ? -1 : 1);
          })[0]!;
          slow.set(best, slow.get(best)! + 1);
        }
      }
      assert.deepEqual(Object.fromEntries(websterSeats(seats, votes, '', initial)), Object.fromEntries([...slow].sort()), `round ${round}`);
    }
  });

  it('work is bounded by the parties, not by the replicas a tenant writes', () => {
    const seats = websterSeats(2_000_000_000, new Map([['a', 1], ['b', 2], ['c', 4]]), 'uid');
    assert.equal([...seats.values()].reduce((a, b) => a + b, 0), 2_000_000_000);
    assert.ok(Math.abs(seats.get('c')! - (4 / 7) * 2e9) < 2);
  });
});

describe('replicaScheduling as karmada-scheduler assigns it', () => {
  it('no replicaScheduling is Duplicated: every member runs all replicas (ReplicaScheduling Case1)', () => {
    assert.deepEqual(clustersOf(karmada(3, {}, ABC())), { A: 3, B: 3, C: 3 });
    assert.deepEqual(clustersOf(karmada(2, { replicaScheduling: { replicaSchedulingType: 'Duplicated' } }, ABC())), { A: 2, B: 2, C: 2 });
  });

  it('Divided with no weightPreference: equal weights (Case3), 2·N over N gives 2 each', () => {
    assert.deepEqual(clustersOf(karmada(6, { replicaScheduling: DIVIDED }, ABC())), { A: 2, B: 2, C: 2 });
  });

  it('static weights move nothing when a member joins or comes back (Karmada reschedules on a trigger only); a scale, a placement change, a lost member or a WorkloadRebalancer re-divide', () => {
    const placement = { replicaScheduling: DIVIDED };
    const running = [{ name: 'A', replicas: 3 }, { name: 'B', replicas: 3 }];
    const applied = (replicas: number, members: MemberInput[], extra: Record<string, unknown> = {}) => {
      const b = binding(replicas, running, { ...extra, placement });
      return clustersOf(planBinding({ ...b, appliedPlacement: b.placementText }, undefined, members, SETTINGS, NOW));
    };
    assert.deepEqual(applied(6, ABC()), { A: 3, B: 3 }, 'C joined: what runs on A and B stays');
    assert.deepEqual(applied(9, ABC()), { A: 3, B: 3, C: 3 }, 'a scale re-divides over every member');
    assert.deepEqual(clustersOf(karmada(6, placement, ABC(), { clusters: running })), { A: 2, B: 2, C: 2 }, 'a placement not yet applied re-divides');
    const noExecute = { taints: [{ key: 'cluster.karmada.io/not-ready', effect: 'NoExecute' }] };
    assert.deepEqual(applied(6, ABC({ B: noExecute })), { A: 3, C: 3 }, 'B lost: divided over the members left');
    const rebalancer = { status: { lastScheduledTime: '2026-11-30T00:00:00Z' }, rescheduleTriggeredAt: '2026-11-30T01:00:00Z' };
    assert.deepEqual(applied(6, ABC(), rebalancer), { A: 2, B: 2, C: 2 }, 'a WorkloadRebalancer re-divides');
  });

  it('static weights i+1 give cluster i its i+1 (Case5, and the Job case); a member matching no rule gets none', () => {
    const staticWeightList = ['A', 'B', 'C'].map((n, i) => ({ targetCluster: { clusterNames: [n] }, weight: i + 1 }));
    assert.deepEqual(clustersOf(karmada(6, { replicaScheduling: { ...DIVIDED, weightPreference: { staticWeightList } } }, ABC())), { A: 1, B: 2, C: 3 });
    assert.deepEqual(clustersOf(karmada(12, { replicaScheduling: { ...DIVIDED, weightPreference: { staticWeightList } } }, ABC())), { A: 2, B: 4, C: 6 });
    const onlyAB = [{ targetCluster: { clusterNames: ['A'] }, weight: 1 }, { targetCluster: { clusterNames: ['B'] }, weight: 1 }];
    assert.deepEqual(clustersOf(karmada(4, { replicaScheduling: { ...DIVIDED, weightPreference: { staticWeightList: onlyAB } } }, ABC())), { A: 2, B: 2 });
  });

  it('dynamicWeight AvailableReplicas divides by zonekeeper\'s own room; a scale-up adds by the room left, keeping what runs', () => {
    const scheduling = { replicaScheduling: { ...DIVIDED, weightPreference: { dynamicWeight: 'AvailableReplicas' } } };
    const roomy = ABC({ A: { perZone: 4 }, B: { perZone: 2 }, C: { perZone: 0 } });
    assert.deepEqual(clustersOf(karmada(6, scheduling, roomy)), { A: 4, B: 2 }, 'room 12 and 6 (rotation over three zones)');
    assert.deepEqual(clustersOf(karmada(9, scheduling, roomy, { clusters: [{ name: 'A', replicas: 4 }, { name: 'B', replicas: 2 }] })), { A: 6, B: 3 });
    const r = karmada(30, scheduling, roomy);
    assert.ok(!r.ok && r.reason === 'Unschedulable');
    assert.match(r.message, /Clusters available replicas 18 are not enough to schedule/);
  });

  it('Aggregated: the fewest members that hold the replicas, members already used first', () => {
    const scheduling = { replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' } };
    const members = ABC({ A: { perZone: 1 }, B: { perZone: 3 }, C: { perZone: 2 } });
    assert.deepEqual(clustersOf(karmada(6, scheduling, members)), { B: 6 });
    assert.deepEqual(clustersOf(karmada(12, scheduling, members)), { B: 7, C: 5 });
  });

  it('a resource without replicas goes to every member, no replicas (a ClusterRole, a ConfigMap)', () => {
    const b = planBinding(binding(0, [], { replicaRequirements: undefined, placement: { replicaScheduling: DIVIDED } }), undefined, ABC(), SETTINGS, NOW);
    assert.ok(b.ok);
    assert.deepEqual(b.clusters, [{ name: 'A', replicas: 0 }, { name: 'B', replicas: 0 }, { name: 'C', replicas: 0 }]);
  });
});

describe('clusterAffinities, tolerations and spread constraints as karmada-scheduler reads them', () => {
  const groups = { clusterAffinities: [{ affinityName: 'group1', labelSelector: { matchLabels: { ok: 'yes' } } }, { affinityName: 'group2', clusterNames: ['B'] }] };

  it('the first group that fits; its name observed; kept there until a WorkloadRebalancer sends it back', () => {
    const none = ABC();
    const r = karmada(3, groups, none);
    assert.deepEqual(clustersOf(r), { B: 3 });
    assert.equal(r.ok && r.affinityName, 'group2');
    const labelled = ABC({ A: { labels: { ok: 'yes' } } });
    const stays = karmada(3, groups, labelled, { clusters: [{ name: 'B', replicas: 3 }], status: { schedulerObservingAffinityName: 'group2' } });
    assert.equal(stays.ok && stays.affinityName, 'group2', 'the label is back, the binding stays in group2');
    const back = karmada(3, groups, labelled, { clusters: [{ name: 'B', replicas: 3 }], status: { schedulerObservingAffinityName: 'group2', lastScheduledTime: '2026-11-30T00:00:00Z' },
      rescheduleTriggeredAt: '2026-11-30T01:00:00Z' });
    assert.deepEqual(clustersOf(back), { A: 3 });
    assert.equal(back.ok && back.affinityName, 'group1');
  });

  it('overflowAffinities fill the primary group first, then the overflow (Aggregated, by room)', () => {
    const placement = { clusterAffinities: [{ affinityName: 'primary', clusterNames: ['A'], overflowAffinities: [{ affinityName: 'secondary', clusterNames: ['B'] }] }],
      replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' } };
    const members = ABC({ A: { perZone: [1, 1, 0] }, B: { perZone: [1, 1, 0] } });
    assert.deepEqual(clustersOf(karmada(2, placement, members)), { A: 2 });
    assert.deepEqual(clustersOf(karmada(4, placement, members)), { A: 2, B: 2 });
    const r = karmada(5, placement, members);
    assert.ok(!r.ok && r.reason === 'Unschedulable');
  });

  it('a cluster whose label no longer matches: nothing fits, spec.clusters is emptied (NoClusterFit), as Karmada does', () => {
    const r = karmada(1, { clusterAffinity: { labelSelector: { matchLabels: { key: 'ok' } } } }, ABC(), { clusters: [{ name: 'A', replicas: 1 }] });
    assert.ok(!r.ok);
    assert.equal(r.reason, 'NoClusterFit');
    assert.ok(r.clear);
    assert.match(r.message, /^0\/3 clusters are available: 3 outside the placement's cluster affinity\.$/);
  });

  it('every member tainted with its own name, the placement tolerating one: only that one (tainttoleration e2e)', () => {
    const taint = (n: string) => ({ taints: [{ key: 'cluster-toleration.karmada.io', value: n, effect: 'NoSchedule' }] });
    const tolerations = [{ key: 'cluster-toleration.karmada.io', operator: 'Equal', value: 'A', effect: 'NoSchedule' }];
    assert.deepEqual(clustersOf(karmada(3, { clusterTolerations: tolerations }, ABC({ A: taint('A'), B: taint('B'), C: taint('C') }))), { A: 3 });
  });

  it('a NoExecute taint tolerated for tolerationSeconds keeps the replicas until timeAdded + seconds, as Karmada\'s taint manager; untolerated, they move at once', () => {
    const taint = (minutesAgo: number) => ({ taints: [{ key: 'maintenance', effect: 'NoExecute', timeAdded: new Date(NOW - minutesAgo * 60_000).toISOString() }] });
    const tolerating = (seconds?: number) => ({ clusterTolerations: [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) }] });
    const running = { clusters: [{ name: 'A', replicas: 3 }, { name: 'B', replicas: 3 }] };
    const placement = (extra: object) => ({ ...extra, replicaScheduling: { ...DIVIDED, weightPreference: { dynamicWeight: 'AvailableReplicas' } } });
    assert.deepEqual(clustersOf(karmada(6, placement(tolerating(300)), ABC({ B: taint(4) }), running)), { A: 3, B: 3 }, '4 of 5 minutes: B keeps its 3');
    assert.deepEqual(clustersOf(karmada(6, placement(tolerating(300)), ABC({ B: taint(5) }), running)).B, undefined, '5 of 5 minutes: B evicted');
    assert.deepEqual(clustersOf(karmada(6, placement(tolerating()), ABC({ B: taint(600) }), running)), { A: 3, B: 3 }, 'tolerated for good');
    assert.equal(clustersOf(karmada(6, placement({}), ABC({ B: taint(0) }), running)).B, undefined, 'untolerated: at once');
  });

  it('spread by cluster picks minGroups..maxGroups members; without maxGroups Karmada selects none', () => {
    const spread = (min: number, max?: number) => ({ spreadConstraints: [{ spreadByField: 'cluster', minGroups: min, ...(max ? { maxGroups: max } : {}) }] });
    assert.equal(Object.keys(clustersOf(karmada(3, spread(2, 2), ABC()))).length, 2);
    assert.deepEqual(clustersOf(karmada(3, spread(1, 1), ABC(), { clusters: [{ name: 'C', replicas: 3 }] })), { C: 3 }, 'the member it runs on scores first');
    const r = karmada(3, spread(1), ABC());
    assert.ok(!r.ok && r.reason === 'SchedulerError');
  });

  it('spread by region 2/2 with cluster 1/1: one member in each region (spread_by_region e2e)', () => {
    const members = ABC({ A: { spec: { region: 'r1' } }, B: { spec: { region: 'r2' } }, C: {} });
    const placement = { spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1, maxGroups: 1 }, { spreadByField: 'region', minGroups: 2, maxGroups: 2 }] };
    assert.deepEqual(clustersOf(karmada(2, placement, members)), { A: 2, B: 2 });
    const unbounded = karmada(2, { spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1, maxGroups: 1 }, { spreadByField: 'region', minGroups: 2 }] }, members);
    assert.ok(!unbounded.ok && unbounded.reason === 'SchedulerError', 'a region constraint without maxGroups fits no set of regions, as in Karmada');
    assert.equal(Object.keys(clustersOf(karmada(2, { spreadConstraints: [{ minGroups: 1, maxGroups: 1 }] }, members))).length, 1, 'neither field nor label: by cluster');
  });

  it('spread by zone and by label, which Karmada does not carry out: groups within min..max, a member\'s zones each counted, room checked', () => {
    const members = ABC({ A: { spec: { zones: ['z1'] }, perZone: 1, labels: { rack: 'r1' } }, B: { spec: { zones: ['z1', 'z2'] }, labels: { rack: 'r1' } }, C: { spec: { zones: ['z3'] }, labels: { rack: 'r2' } } });
    const byZone = { replicaScheduling: { ...DIVIDED, weightPreference: { dynamicWeight: 'AvailableReplicas' } },
      spreadConstraints: [{ spreadByField: 'cluster', minGroups: 2, maxGroups: 2 }, { spreadByField: 'zone', minGroups: 2, maxGroups: 2 }] };
    const zonesOf = (p: Record<string, number>) => new Set(Object.keys(p).flatMap((n) => members.find((m) => m.cluster.name === n)!.cluster.zones));
    const z = clustersOf(karmada(12, byZone, members));
    assert.ok(zonesOf(z).size >= 2, 'at least two zones, B counting for z1 and z2');
    assert.equal(Object.values(z).reduce((a, b) => a + b, 0), 12);
    // 400 replicas: only B and C together hold them (A holds 3), so a pair with A is passed over.
    assert.deepEqual(clustersOf(karmada(400, byZone, members)), { B: 200, C: 200 });
    const byLabel = { replicaScheduling: DIVIDED, spreadConstraints: [{ spreadByLabel: 'rack', minGroups: 2, maxGroups: 2 }] };
    const l = karmada(4, { ...byLabel, replicaScheduling: { ...DIVIDED, weightPreference: {} } }, members);
    assert.ok(l.ok);
    assert.ok(l.clusters.some((c) => c.name === 'C') && l.clusters.some((c) => c.name !== 'C'), 'both racks used');
  });
});
