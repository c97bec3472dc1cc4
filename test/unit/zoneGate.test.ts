import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatePatch, mergedTerms, unwritable, volumeStillMoving, type SpecDecision } from '../../src/decision/spec.js';
import { slimPod } from '../../src/cluster/convert.js';
import { addObject } from '../../src/cluster/source.js';
import { filterNodes } from '../../src/placement/filtering.js';
import { deployment, node, nodes, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { inputFor } from '../support/placement.js';
import { testApp } from '../support/app.js';

// The zone gate's pure part (docs/design.md#the-zone-gate): the decision from the filter, the
// patch that writes it, and when a volume keeps the pod gated.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ZONE = 'topology.kubernetes.io/zone';
const GATES = [{ name: 'other.example/gate' }, { name: 'zonekeeper.io/zone' }];
const gated = (raw: Raw, spec: Raw = {}) => ({ ...raw, metadata: { ...raw.metadata, resourceVersion: '42' }, spec: { ...raw.spec, schedulingGates: GATES, ...spec } });

describe("the gate decides with the filter's own policy code", () => {
  it("a StatefulSet pod: its seat's zone; a bound volume elsewhere: the volume's zone", async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }),
      pvc('data-db-1', { volumeName: 'pv-1' }), pv('pv-1', 'zone-c', { claim: 'data-db-1' })]);
    const app = testApp(store);
    const d0 = await app.service.spec.ungate(slimPod(gated(stsPod('db', 0))));
    assert.deepEqual([d0.kind, d0.kind === 'zone' && d0.zone, d0.kind === 'zone' && d0.topologyKey], ['zone', 'zone-a', ZONE]);
    const d1 = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1, { claims: ['data-db-1'] }))));
    assert.equal(d1.kind === 'zone' && d1.zone, 'zone-c', 'the volume wins over the pin to zone-b');
  });

  it('pinned even where no node is schedulable now (an autoscaler adds one)', async () => {
    const offline = nodes(ZONES, 1).map((n) => (n.metadata.labels[ZONE] === 'zone-b' ? { ...n, spec: { unschedulable: true } } : n));
    const app = testApp(storeOf([...offline, statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } })]));
    const d = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1))));
    assert.equal(d.kind === 'zone' && d.zone, 'zone-b');
  });

  it('a pool with no node (a node group scaled to zero): a StatefulSet seat and a balanced Deployment pod are both written into a zone the pool can grow into', async () => {
    const system = nodes(ZONES, 1).map((n) => ({ ...n, spec: { taints: [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }] } }));
    const pool = { nodeSelector: { pool: 'db' } };
    const balanced = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) };
    // A Cluster Autoscaler runs: its status ConfigMap is there.
    const autoscaler = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-system', name: 'cluster-autoscaler-status' } };
    const app = testApp(storeOf([autoscaler, ...system, statefulSet('db', 3, { template: pool }), ...deployment('web', 3, balanced, pool)]));
    const sts = await app.service.spec.ungate(slimPod(gated(stsPod('db', 2, pool))));
    assert.equal(sts.kind, 'zone', 'on main: "no node has label ...: nothing to pin to"');
    const web = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'x', pool))));
    assert.equal(web.kind === 'zone' && ZONES.includes(web.zone), true, `a zone to grow into, not a wait: ${web.kind === 'wait' ? web.why : ''}`);
  });

  it('decisions made at once (the keeper has 32 workers) each see the reservations of those before: a balanced Deployment of 6 gets 2/2/2', async () => {
    const balanced = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) };
    const app = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 6, balanced)]));
    const pods = Array.from({ length: 6 }, (_, i) => slimPod(gated(rsPod('web', `p${i}`))));
    const decided = await Promise.all(pods.map((p) => app.service.spec.ungate(p)));
    const counts = new Map<string, number>();
    for (const d of decided) if (d.kind === 'zone') counts.set(d.zone, (counts.get(d.zone) ?? 0) + 1);
    assert.deepEqual([...counts].sort(), [['zone-a', 2], ['zone-b', 2], ['zone-c', 2]]);
  });

  it('waits: on a cache not synced, for an Immediate-binding claim not bound, when every zone is at its limit', async () => {
    const notSynced = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]), { synced: () => false });
    assert.equal((await notSynced.service.spec.ungate(slimPod(gated(stsPod('db', 0))))).kind, 'wait');
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3), pvc('data-db-0', { storageClassName: 'fast' })]);
    const pod = slimPod(gated(stsPod('db', 0, { claims: ['data-db-0'] })));
    assert.match(volumeStillMoving(pod, store)!, /claim data-db-0 is not bound yet \(Immediate binding\)/);
    const d = await testApp(store).service.spec.ungate(pod);
    assert.equal(d.kind, 'wait');
    const capped = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { 'zone-a': { weight: 1, maxReplicas: 1 } } }) };
    const full = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 2, capped), rsPod('web', 'bound', { nodeName: 'node-a-1' })]));
    const w = await full.service.spec.ungate(slimPod(gated(rsPod('web', 'x'))));
    assert.equal(w.kind, 'wait');
    assert.match(w.why, /every zone is at its limit/);
  });

  it('an instance-ID pod: its new ID goes into the same patch as the zone it pins, not a write of its own', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('ids', 3, { 'zonekeeper.io/instance-ids': 'true', 'zonekeeper.io/zones': ZONES.join(',') })]);
    const app = testApp(store);
    const raw = gated(rsPod('ids', 'x'));
    addObject(store, raw);
    const d = await app.service.spec.ungate(slimPod(raw));
    assert.ok(d.kind === 'zone');
    assert.equal(d.instanceId, 0);
    assert.equal(d.zone, ZONES[0]);
    assert.equal(gatePatch(raw, d).metadata.annotations['zonekeeper.io/instance-id'], '0');
  });

  it('a pod no policy covers is lifted as it is; a WorkloadSpread pod gets its subset', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-b')]),
      ...deployment('plain', 1)]);
    const app = testApp(store);
    assert.equal((await app.service.spec.ungate(slimPod(gated(rsPod('plain', 'x'))))).kind, 'as-is');
    const d = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'x'))));
    assert.deepEqual([d.kind, d.kind === 'subset' && d.subset], ['subset', 'a']);
  });
});

describe('adaptive fallback with the gate: what a pod not scheduled in time was given, skipped by its successor', () => {
  const list = { 'zonekeeper.io/zones': ZONES.join(',') };

  it('strict (the default): no fallback is ever armed', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: list })]));
    const d = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1))));
    assert.equal(d.kind === 'zone' && d.fallback, undefined);
  });

  it("zoneFallback adaptive: armed for the seat; once it fell back, the seat's next pod goes to the next zone, and again", async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: list })]), { config: { placement: { zoneFallback: 'adaptive', fallbackAfterSeconds: 30 } } });
    const d = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1))));
    assert.ok(d.kind === 'zone' && d.fallback);
    assert.deepEqual(d.fallback, { kind: 'pin', key: 'default/StatefulSet/db#1', workload: 'default/StatefulSet/db', given: 'zone-b', afterMs: 30_000 });
    app.service.fallbackExpired(d.fallback);
    const next = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1, { uid: 'successor' }))));
    assert.equal(next.kind === 'zone' && next.zone, 'zone-c');
    assert.match(next.why, /fell through from zone-b to zone-c: a pod of this seat was not scheduled there in time/);
    app.service.fallbackExpired(next.kind === 'zone' ? next.fallback! : d.fallback);
    const third = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1, { uid: 'third' }))));
    assert.equal(third.kind === 'zone' && third.zone, 'zone-a');
    // Other seats keep their pins.
    const other = await app.service.spec.ungate(slimPod(gated(stsPod('db', 2))));
    assert.equal(other.kind === 'zone' && other.zone, 'zone-c');
  });

  it('never for a pod its bound volume holds', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: list }), pvc('data-db-1', { volumeName: 'pv-1' }), pv('pv-1', 'zone-b', { claim: 'data-db-1' })]);
    const app = testApp(store, { config: { placement: { zoneFallback: 'adaptive' } } });
    const d = await app.service.spec.ungate(slimPod(gated(stsPod('db', 1, { claims: ['data-db-1'] }))));
    assert.deepEqual([d.kind === 'zone' && d.zone, d.kind === 'zone' && d.fallback], ['zone-b', undefined]);
  });

  it('an Adaptive WorkloadSpread: the subset is skipped after its pod fell back; the last subset is never given up', async () => {
    const adaptive = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10 } };
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 4), workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')], adaptive)]);
    const app = testApp(store);
    const d = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'x'))));
    assert.ok(d.kind === 'subset' && d.fallback);
    assert.deepEqual([d.subset, d.fallback.kind, d.fallback.afterMs], ['a', 'subset', 10_000]);
    app.service.fallbackExpired(d.fallback);
    const next = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'y'))));
    assert.equal(next.kind === 'subset' && next.subset, 'b');
    // The last subset is never given up: a pod lifted into it is not watched, and b is never skipped.
    assert.equal(next.kind === 'subset' && next.fallback, undefined);
  });
});

describe('the patch: the decision written into the spec, the gate lifted, in one conditional write', () => {
  const zone: SpecDecision & { kind: 'zone' } = { kind: 'zone', topologyKey: ZONE, zone: 'zone-b', why: '' };

  it('a zone: a nodeSelector entry, other gates kept, the resourceVersion read', () => {
    const patch = gatePatch(gated(stsPod('db', 1), { nodeSelector: { disk: 'ssd' } }), zone);
    assert.deepEqual(patch, { metadata: { resourceVersion: '42' }, spec: { schedulingGates: [{ name: 'other.example/gate' }], nodeSelector: { [ZONE]: 'zone-b' } } });
    const only = gatePatch({ metadata: { resourceVersion: '7' }, spec: { schedulingGates: [{ name: 'zonekeeper.io/zone' }] } }, zone);
    assert.equal(only.spec.schedulingGates, null, 'the last gate: the field is removed');
  });

  it('a nodeSelector that already names another zone is left (it may only gain keys), and said', () => {
    const pod = gated(stsPod('db', 1), { nodeSelector: { [ZONE]: 'zone-a' } });
    assert.equal(gatePatch(pod, zone).spec.nodeSelector, undefined);
    assert.match(unwritable(pod, zone)!, /already says topology.kubernetes.io\/zone=zone-a, not zone-b/);
  });

  it("a subset: its term merged into every existing term (they are ORed), Kruise's annotation; its tolerations not written (admission only)", () => {
    const term = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }], matchFields: [] };
    const existing = [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }, { matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }];
    const merged = mergedTerms(existing, term);
    assert.deepEqual(merged.map((t) => t.matchExpressions.map((e: Raw) => e.key)), [['disk', ZONE], ['gen', ZONE]]);
    assert.deepEqual(mergedTerms(undefined, term), [{ matchExpressions: term.matchExpressions }]);
    const patch = gatePatch(gated(rsPod('web', 'x'), { tolerations: [{ key: 'a', operator: 'Exists' }] }), {
      kind: 'subset', workloadSpread: 'ws', subset: 'a', term, preferred: [], tolerations: [{ key: 'spot', operator: 'Exists', value: '', effect: 'NoSchedule' }], why: '',
    });
    assert.deepEqual(patch.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      [{ matchExpressions: term.matchExpressions }]);
    assert.equal(patch.spec.tolerations, undefined, 'zonekeeper\'s account never adds a toleration (docs/security.md#workloadspread-editors)');
    assert.deepEqual(JSON.parse(patch.metadata.annotations['apps.kruise.io/matched-workloadspread']), { name: 'ws', subset: 'a' });
  });

  it("a subset's preferred terms after the pod's own, as Kruise's webhook writes them; the gate's decision carries them from the WorkloadSpread", async () => {
    const ssd = { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }], matchFields: [] } };
    const own = [{ weight: 1, preference: { matchExpressions: [{ key: 'gen', operator: 'In', values: ['5'] }] } }];
    const pod = gated(rsPod('web', 'x'), { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: own } } });
    const patch = gatePatch(pod, { kind: 'subset', workloadSpread: 'ws', subset: 'a', term: undefined, preferred: [ssd], tolerations: [], why: '' });
    assert.deepEqual(patch.spec.affinity.nodeAffinity, { preferredDuringSchedulingIgnoredDuringExecution: [...own, { weight: 10,
      preference: { matchExpressions: ssd.preference.matchExpressions } }] });
    // From a WorkloadSpread: the subset's preferred terms reach the decision (on main they were dropped).
    const subset = { ...zoneSubset('a', 'zone-a', 3), preferredNodeSelectorTerms: [ssd] };
    const app = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 3), workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [subset])]));
    const d = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'y'))));
    assert.equal(d.kind, 'subset');
    assert.deepEqual(d.kind === 'subset' && d.preferred.map((p) => p.weight), [10]);
  });

  it('as-is: only the gate', () => {
    assert.deepEqual(gatePatch(gated(rsPod('web', 'x')), { kind: 'as-is', why: '' }).spec, { schedulingGates: [{ name: 'other.example/gate' }] });
  });
});

describe('a decision written into the spec, over a kept candidate set', () => {
  it('answers per group of alike nodes exactly what it answers per node: the same nodes passed, the same rejected with the same reasons', () => {
    // Unequal zones, a tainted pool, a node without a zone label: groups by zone and by misfit.
    const cluster = [...nodes(ZONES, 2), ...nodes(['zone-a'], 3).map((n, i) => ({ ...n, metadata: { ...n.metadata, name: `extra-${i}` } })),
      node('tainted-b', 'zone-b', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }), node('nowhere', undefined), statefulSet('db', 6),
      ...deployment('web', 6, { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) })];
    const store = storeOf(cluster);
    const byName = (v: { passed: readonly string[]; rejected: Map<{ rule: string; reason: string }, string[]> }) => ({
      passed: [...v.passed].sort(),
      rejected: [...v.rejected].map(([r, names]) => `${r.rule}: ${r.reason}: ${[...names].sort().join(',')}`).sort(),
    });
    // A StatefulSet's seats (zone pin) and a balanced Deployment's pod (zone balance).
    for (const [label, pod] of [...[0, 1, 2, 4].map((o) => [`db-${o}`, stsPod('db', o)] as const), ['web-x', rsPod('web', 'x')] as const]) {
      const input = { ...inputFor(store, pod), writesSpec: true };
      const perNode = filterNodes(input);
      const memo = new Map<string, unknown>();
      const grouped = filterNodes({ ...input, candidates: { ...input.candidates, memo } });
      assert.ok(memo.size > 0 && [...memo.values()].every(Array.isArray), 'the groups were kept');
      assert.deepEqual(byName(grouped), byName(perNode), label);
      assert.ok(perNode.passed.length > 0, `${label} is placed`);
      assert.equal(grouped.zone, perNode.zone);
      // Kept: the next pod with the same needs reads the same groups.
      assert.deepEqual(byName(filterNodes({ ...input, candidates: { ...input.candidates, memo } })), byName(perNode));
    }
  });
});
