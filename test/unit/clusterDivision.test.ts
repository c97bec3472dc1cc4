import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseClusterPreferences, type ClusterPreferences } from '../../src/cluster/karmada.js';
import { planBinding } from '../../src/placement/bindingPlan.js';
import { KARMADA_KINDS, type SlimOrdinalOverride } from '../../src/cluster/karmada.js';
import { ordinalRanges, ordinalStarts, rotationCapacity, type MemberInput } from '../../src/placement/clusterDivision.js';
import { pod } from '../support/builders.js';
import { binding, member } from '../support/federationMembers.js';

// Seed 002's scenarios for member clusters, on planBinding: capacity read from each member's nodes.

const NOW = Date.parse('2026-11-29T00:00:00Z');
const SETTINGS = { pendingMs: 300_000, keepWaiting: 2, stride: undefined };

const prefs = (json: object): ClusterPreferences => {
  const p = parseClusterPreferences(JSON.stringify(json));
  if (!p.ok) throw new Error(p.error);
  return p.spec;
};

const ABC = (o: Partial<Record<'A' | 'B' | 'C', Parameters<typeof member>[1]>> = {}) => (['A', 'B', 'C'] as const).map((n) => member(n, o[n]));
const plan = (replicas: number, p: ClusterPreferences, members: MemberInput[], assigned: { name: string; replicas: number }[] = []) => {
  const r = planBinding(binding(replicas, assigned), p, members, SETTINGS, NOW);
  assert.ok(r.ok);
  return Object.fromEntries(r.members.map((m) => [m.cluster, m.replicas]));
};
const sorted = (p: Record<string, number>) => Object.values(p).sort((a, b) => a - b);
// Capacity 6 in a member of three zones: two replicas per zone.
const SIX = { perZone: 2 };
const OFFLINE = { ready: 'False' };

describe('cluster division: seed 002 scenarios on member clusters', () => {
  const even = prefs({ rebalance: true, clusters: { '*': { weight: 1 } } });

  it('1: 50 evenly over A,B,C gives 16/17/17; C with room for 6 gives 22/22/6; B and C offline gives A=50', () => {
    assert.deepEqual(sorted(plan(50, even, ABC())), [16, 17, 17]);
    assert.deepEqual(plan(50, even, ABC({ C: SIX })), { A: 22, B: 22, C: 6 });
    assert.deepEqual(plan(50, even, ABC({ B: OFFLINE, C: OFFLINE })), { A: 50, B: 0, C: 0 });
  });

  it('2: only 2 per cluster, three ways of saying it', () => {
    for (const c of [{ '*': { maxReplicas: 2, weight: 1 } }, { '*': { minReplicas: 2, weight: 0 } }, { '*': { minReplicas: 2, maxReplicas: 2 } }]) {
      assert.deepEqual(plan(50, prefs({ rebalance: true, clusters: c }), ABC()), { A: 2, B: 2, C: 2 });
    }
  });

  it('3: 20 per cluster asked, 50 in all: 20/20/10', () => {
    assert.deepEqual(sorted(plan(50, prefs({ rebalance: true, clusters: { '*': { minReplicas: 20, weight: 0 } } }), ABC())), [10, 20, 20]);
  });

  it('4: equal, at most 20 in C; B offline gives 30/0/20; A and B offline gives C=20', () => {
    const p = prefs({ rebalance: true, clusters: { '*': { weight: 1 }, C: { maxReplicas: 20, weight: 1 } } });
    assert.deepEqual(sorted(plan(50, p, ABC())), [16, 17, 17]);
    assert.deepEqual(plan(50, p, ABC({ B: OFFLINE })), { A: 30, B: 0, C: 20 });
    assert.deepEqual(plan(50, p, ABC({ A: OFFLINE, B: OFFLINE })), { A: 0, B: 0, C: 20 });
  });

  it('5: A first, B and C as spill-over; A with room for 40 gives 40/5/5', () => {
    const p = prefs({ clusters: { A: { weight: 1000000 }, B: { weight: 1 }, C: { weight: 1 } } });
    assert.deepEqual(plan(50, p, ABC()), { A: 50, B: 0, C: 0 });
    assert.deepEqual(plan(50, p, ABC({ A: { perZone: [14, 13, 13] } })), { A: 40, B: 5, C: 5 }, 'A: 14/13/13 per zone hold 40 in rotation (n ≤ 13·3+1)');
  });

  it('6: A twice the others: 25 and 12/13', () => {
    const r = plan(50, prefs({ clusters: { A: { weight: 2 }, B: { weight: 1 }, C: { weight: 1 } } }), ABC());
    assert.equal(r.A, 25);
    assert.deepEqual([r.B, r.C].sort(), [12, 13]);
  });

  it('7: rebalance false keeps what runs: A with 20 gives 20/15/15; with C room 6 and A 30, 30/14/6', () => {
    const keep = prefs({ rebalance: false, clusters: { '*': { weight: 1 } } });
    assert.deepEqual(plan(50, keep, ABC(), [{ name: 'A', replicas: 20 }]), { A: 20, B: 15, C: 15 });
    assert.deepEqual(plan(50, keep, ABC({ C: SIX }), [{ name: 'A', replicas: 30 }]), { A: 30, B: 14, C: 6 });
  });
});

describe('cluster division: what Karmada cannot express', () => {
  it('a minimum per cluster (karmada #6511): 3 replicas at 10:1:1 with min 1 each give 1/1/1, where Karmada gives 3/0/0', () => {
    const p = prefs({ clusters: { A: { weight: 10, minReplicas: 1 }, B: { weight: 1, minReplicas: 1 }, C: { weight: 1, minReplicas: 1 } } });
    assert.deepEqual(plan(3, p, ABC()), { A: 1, B: 1, C: 1 });
  });

  it('a maximum per cluster: 9 at equal weights with C at most 2 gives C=2 and the rest on A and B', () => {
    const r = plan(9, prefs({ clusters: { '*': { weight: 1 }, C: { weight: 1, maxReplicas: 2 } } }), ABC());
    assert.equal(r.C, 2);
    assert.equal(r.A! + r.B!, 7);
  });

  it('the sum is replicas wherever the limits allow, and what they do not allow is unplaced', () => {
    const r = planBinding(binding(10), prefs({ clusters: { '*': { weight: 1, maxReplicas: 3 } } }), ABC(), SETTINGS, NOW);
    assert.ok(r.ok);
    assert.equal(r.unplaced, 1);
    assert.deepEqual(r.clusters.map((c) => c.replicas), [3, 3, 3]);
  });

  it('a cluster with no entry and no "*" gets nothing', () => {
    assert.deepEqual(plan(4, prefs({ clusters: { A: { weight: 1 }, B: { weight: 1 } } }), ABC()), { A: 2, B: 2, C: 0 });
  });

  it('a bad preference is refused whole, with the reason', () => {
    for (const bad of ['{', '{"clusters":{"A":{"minReplicas":3,"maxReplicas":2}}}', '{"clusters":{"A":{"weight":-1}}}', '{"zones":{}}']) {
      const p = parseClusterPreferences(bad);
      assert.equal(p.ok, false, bad);
    }
  });
});

describe('cluster division: never blind, failover, pending', () => {
  const even = prefs({ rebalance: true, clusters: { '*': { weight: 1 } } });

  it('a member zonekeeper cannot read keeps what it has and gets none added', () => {
    const r = plan(9, even, ABC({ B: { unknown: true } }), [{ name: 'A', replicas: 2 }, { name: 'B', replicas: 1 }, { name: 'C', replicas: 2 }]);
    assert.equal(r.B, 1);
    assert.equal(r.A! + r.C!, 8);
  });

  it('a member that is not Ready, carries a NoExecute taint or is being evicted from gets nothing; its replicas go elsewhere', () => {
    assert.deepEqual(plan(6, even, ABC({ B: OFFLINE }), [{ name: 'B', replicas: 2 }]).B, 0);
    assert.deepEqual(plan(6, even, ABC({ B: { taints: [{ key: 'cluster.karmada.io/unreachable', effect: 'NoExecute' }] } })).B, 0);
    const r = planBinding(binding(6, [], { gracefulEvictionTasks: [{ fromCluster: 'B', reason: 'x', producer: 'y' }] }), even, ABC(), SETTINGS, NOW);
    assert.ok(r.ok);
    assert.equal(r.members.find((m) => m.cluster === 'B')!.replicas, 0);
    assert.equal(r.members.find((m) => m.cluster === 'B')!.state, 'evicting');
  });

  it('pods unscheduled longer than the time allowed: most move, a couple stay waiting there', () => {
    const owner = { kind: 'StatefulSet', name: 'web' };
    const old = new Date(NOW - 600_000).toISOString();
    const pods = [
      pod('web-0', owner, { nodeName: 'B-zone-a' }), pod('web-1', owner, { nodeName: 'B-zone-b' }),
      ...[2, 3, 4, 5, 6].map((i) => ({ ...pod(`web-${i}`, owner), metadata: { ...pod(`web-${i}`, owner).metadata, creationTimestamp: old } })),
    ];
    const r = planBinding(binding(21, [{ name: 'A', replicas: 7 }, { name: 'B', replicas: 7 }, { name: 'C', replicas: 7 }]), even, ABC({ B: { pods } }), SETTINGS, NOW);
    assert.ok(r.ok);
    const b = r.members.find((m) => m.cluster === 'B')!;
    assert.equal(b.state, 'pending');
    assert.equal(b.replicas, 4, '2 bound + 2 left waiting');
    assert.equal(r.unplaced, 0);
    assert.match(b.why, /unscheduled too long/);
    // The same pods, young: nothing moves yet.
    const young = planBinding(binding(21, [{ name: 'A', replicas: 7 }, { name: 'B', replicas: 7 }, { name: 'C', replicas: 7 }]), even, ABC({ B: { pods } }), { ...SETTINGS, pendingMs: 900_000 }, NOW);
    assert.ok(young.ok);
    assert.equal(young.members.find((m) => m.cluster === 'B')!.replicas, 7);
  });

  it('a forecast caps growth, never takes away what a member has', () => {
    const r = plan(9, even, ABC({ C: { perZone: 0 } }), [{ name: 'A', replicas: 3 }, { name: 'B', replicas: 3 }, { name: 'C', replicas: 3 }]);
    assert.equal(r.C, 3);
  });

  it('a WorkloadRebalancer trigger plans afresh even without rebalance', () => {
    const keep = prefs({ clusters: { '*': { weight: 1 } } });
    const b = binding(9, [{ name: 'A', replicas: 9 }], { rescheduleTriggeredAt: new Date(NOW).toISOString() });
    const r = planBinding(b, keep, ABC(), SETTINGS, NOW);
    assert.ok(r.ok && r.rebalance);
    assert.deepEqual(r.clusters.map((c) => c.replicas), [3, 3, 3]);
  });

  it('the placement\'s clusterAffinity as Karmada matches it: labels, provider and region, zones (all listed for In), names, exclude', () => {
    const members = [
      member('A', { labels: { env: 'prod' }, spec: { provider: 'aws', region: 'eu-west-1', zones: ['eu-west-1a', 'eu-west-1b'] } }),
      member('B', { labels: { env: 'prod', tier: 'edge' }, spec: { provider: 'gcp', region: 'europe-west1', zones: ['europe-west1-b'] } }),
      member('C', { labels: { env: 'dev' }, spec: { provider: 'aws', region: 'eu-west-1' } }),
    ];
    const onto = (clusterAffinity: object) => {
      const r = planBinding(binding(6, [], { placement: { clusterAffinity } }), even, members, SETTINGS, NOW);
      assert.ok(r.ok);
      return Object.fromEntries(r.members.filter((m) => m.replicas > 0).map((m) => [m.cluster, m.replicas]));
    };
    assert.deepEqual(onto({ labelSelector: { matchLabels: { env: 'prod' } } }), { A: 3, B: 3 });
    assert.deepEqual(onto({ labelSelector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] } }), { A: 3, C: 3 });
    assert.deepEqual(onto({ labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['edge'] }] }, exclude: ['C'] }), { A: 6 });
    assert.deepEqual(onto({ fieldSelector: { matchExpressions: [{ key: 'provider', operator: 'In', values: ['aws'] }] } }), { A: 3, C: 3 });
    assert.deepEqual(onto({ fieldSelector: { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu-west-1'] }] } }), { B: 6 });
    // Karmada's zone rule (pkg/util/selector.go matchZones): In holds when any zone of the member is listed; C has none.
    assert.deepEqual(onto({ fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['eu-west-1a', 'europe-west1-b'] }] } }), { A: 3, B: 3 });
    assert.deepEqual(onto({ fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['eu-west-1b'] }] } }), { A: 6 });
    assert.deepEqual(onto({ fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } }), { A: 3, B: 3 });
    assert.deepEqual(onto({ labelSelector: { matchLabels: { env: 'prod' } }, clusterNames: ['B', 'C'] }), { B: 6 });
    const r = planBinding(binding(6, [], { placement: { clusterAffinity: { labelSelector: { matchLabels: { env: 'prod' } } } } }), even, members, SETTINGS, NOW);
    assert.ok(r.ok);
    assert.match(r.members.find((m) => m.cluster === 'C')!.why, /outside the placement's cluster affinity/);
  });

  it('clusterTolerations: a tolerated NoSchedule taint takes replicas; a NoExecute one until its tolerationSeconds from timeAdded run out', () => {
    const unreachable = (secondsAgo: number) => ({ key: 'cluster.karmada.io/unreachable', effect: 'NoExecute', timeAdded: new Date(NOW - secondsAgo * 1000).toISOString() });
    const taints = (secondsAgo: number) => ABC({ B: { taints: [{ key: 'maintenance', value: 'yes', effect: 'NoSchedule' }] }, C: { taints: [unreachable(secondsAgo)] } });
    let tainted = taints(0);
    const onto = (clusterTolerations: object[]) => {
      const r = planBinding(binding(6, [], { placement: { clusterTolerations } }), even, tainted, SETTINGS, NOW);
      assert.ok(r.ok);
      return Object.fromEntries(r.members.map((m) => [m.cluster, m.replicas]));
    };
    assert.deepEqual(onto([]), { A: 6, B: 0, C: 0 });
    assert.deepEqual(onto([{ key: 'maintenance', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }]), { A: 3, B: 3, C: 0 });
    const for300 = [{ key: 'cluster.karmada.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
    assert.deepEqual(onto(for300), { A: 3, B: 0, C: 3 }, 'tainted just now: tolerated for 300 s');
    tainted = taints(300);
    assert.deepEqual(onto(for300), { A: 6, B: 0, C: 0 }, '300 s later: evicted');
    assert.deepEqual(onto([{ operator: 'Exists' }]), { A: 2, B: 2, C: 2 }, 'tolerated for good');
  });

  it('what no Karmada release defines is named on the binding; everything Karmada accepts is read', () => {
    assert.equal(binding(3).placement.unsupported, undefined);
    assert.equal(binding(3, [], { placement: { clusterAffinities: [{ affinityName: 'primary', clusterNames: ['A'] }] } }).placement.unsupported, undefined);
    assert.equal(binding(3, [], { placement: { spreadConstraints: [{ spreadByField: 'region', maxGroups: 2 }] } }).placement.unsupported, undefined);
    assert.equal(binding(3, [], { placement: { replicaScheduling: { replicaSchedulingType: 'Duplicated' } } }).placement.unsupported, undefined);
    assert.equal(binding(3, [], { placement: { replicaScheduling: { replicaSchedulingType: 'Mirrored' } } }).placement.unsupported, 'replicaScheduling.replicaSchedulingType: Mirrored');
    assert.equal(binding(3, [], { placement: { spreadConstraints: [{ spreadByField: 'rack', maxGroups: 2 }] } }).placement.unsupported, 'spreadConstraints[0].spreadByField');
    assert.equal(binding(3, [], { placement: { workloadAffinity: { affinity: { groupByLabelKey: 'app' } } } }).placement.unsupported, 'workloadAffinity');
  });

  it('a StatefulSet member holds at most its ordinal range', () => {
    const r = planBinding(binding(9), prefs({ clusters: { A: { weight: 1 } } }), ABC(), { ...SETTINGS, stride: 5 }, NOW);
    assert.ok(r.ok);
    assert.equal(r.members.find((m) => m.cluster === 'A')!.replicas, 5);
    assert.equal(r.unplaced, 4);
  });
});

describe('ordinal ranges', () => {
  it('a member keeps its range; a new one takes the lowest free; a member at 0 keeps its range', () => {
    const s1 = ordinalStarts({}, [{ name: 'm2', replicas: 2 }, { name: 'm1', replicas: 3 }], 1000);
    assert.deepEqual(s1, { m1: 0, m2: 1000 });
    const s2 = ordinalStarts(s1, [{ name: 'm2', replicas: 4 }, { name: 'm3', replicas: 1 }, { name: 'm1', replicas: 0 }], 1000);
    assert.deepEqual(s2, { m1: 0, m2: 1000, m3: 2000 });
  });

  /** An OverridePolicy as a tenant or zonekeeper may write it: `starts` per member, by plaintext overriders on /spec/ordinals. */
  const override = (name: string, starts: Record<string, number>, o: { label?: string; sts?: string } = {}) => KARMADA_KINDS.overrides.slim!({
    metadata: { namespace: 'db', name, resourceVersion: '7', labels: o.label ? { 'zonekeeper.io/ordinals-of': o.label } : {} },
    spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: o.sts ?? 'web' }],
      overrideRules: Object.entries(starts).map(([m, start]) => ({ targetCluster: { clusterNames: [m] }, overriders: { plaintext: [{ path: '/spec/ordinals', operator: 'add', value: { start } }] } })) },
  }) as SlimOrdinalOverride;
  const web = { namespace: 'db', name: 'web' };
  const two = [{ name: 'm1', replicas: 2 }, { name: 'm2', replicas: 2 }];

  it('ranges only zonekeeper can write: its own policy is read; a squatter, a decoy, a tenant\'s overlapping ranges are refused, the object named', () => {
    const ok = ordinalRanges(web, [override('web-zonekeeper-ordinals', { m1: 0 }, { label: 'web' })], two, 1000);
    assert.ok(ok.ok);
    assert.deepEqual(ok.starts, { m1: 0, m2: 1000 });
    assert.deepEqual(ok.write, { resourceVersion: '7' }, 'm2 has no range yet: written first, conditional on the policy read');
    const squat = ordinalRanges(web, [override('web-zonekeeper-ordinals', { m1: 0, m2: 0 })], two, 1000);
    assert.ok(!squat.ok && /OverridePolicy db\/web-zonekeeper-ordinals bears zonekeeper's name .* but not its label/.test(squat.why));
    // The live split-brain: a tenant's labelled policy giving every member ordinals from 0, written before the StatefulSet.
    const tenant = ordinalRanges(web, [override('tenant', { m1: 0, m2: 0 }, { label: 'web' })], two, 1000);
    assert.ok(!tenant.ok && /OverridePolicy db\/tenant also sets StatefulSet web's spec.ordinals/.test(tenant.why));
    const unlabelled = ordinalRanges(web, [override('web-zonekeeper-ordinals', { m1: 0 }, { label: 'web' }), override('mine', { m2: 5 })], two, 1000);
    assert.ok(!unlabelled.ok && /db\/mine/.test(unlabelled.why));
    const overlap = ordinalRanges(web, [override('web-zonekeeper-ordinals', { m1: 0, m2: 500 }, { label: 'web' })], two, 1000);
    assert.ok(!overlap.ok && /m1 from 0 and m2 from 500 overlap/.test(overlap.why));
    assert.ok(ordinalRanges(web, [override('other', { m1: 0 }, { sts: 'cache' })], two, 1000).ok, 'another StatefulSet\'s policy is none of this one\'s business');
  });

  it('rotation capacity: zone k holds ordinals k, k+Z, …', () => {
    assert.equal(rotationCapacity([2, 2, 2]), 6);
    assert.equal(rotationCapacity([0, 5, 5]), 0, 'ordinal 0 is pinned to a full zone');
    assert.equal(rotationCapacity([1, 0, 9]), 1);
    assert.equal(rotationCapacity([14, 14, 14]), 42);
  });
});
