// End-to-end: OpenKruise's own WorkloadSpread scenarios (openkruise/kruise
// test/e2e/apps/v1alpha1/workloadspread.go), each under Kruise's name and with Kruise's
// assertions, on zonekeeper's standalone mode as manifests/overlays/managed sets it up with
// ../../workloadspread-crd and --workloadspread-status: zonekeeper's WorkloadSpread CRD, its
// admission webhook (subsets and patches), its status, its deletion costs and Adaptive
// rescheduling, and the default scheduler alone. The CRD stores v1beta1 as shipped; the scenarios
// write and read v1alpha1, as Kruise's v1alpha1 suite does, through zonekeeper's conversion. A Deployment stands for Kruise's CloneSet.
// Kruise's waits are shortened by the settings this suite sets: rescheduleCriticalSeconds 5 (as
// Kruise's test sets it) and a 20 s recovery window (placement.adaptiveUnschedulableSeconds,
// Kruise's fixed 5 minutes). The scenarios' rolling-update steps (an image change) are left to
// the suite of revision-aware deletion costs (issue 47, behaviour 7).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { tearDown, deployment as defaultSchedulerDeployment } from './workloads.js';
import { standaloneWorkloadSpreads } from './workloadSpreadCrd.js';

const ZONE = 'topology.kubernetes.io/zone';
const NS = 'kruise-scenarios';
const WS_API = 'apps.kruise.io/v1alpha1';
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const RECOVERY_SECONDS = 20;

const zoneSubset = (name: string, zone: string, maxReplicas: number | null): Obj => ({
  name, requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] },
  ...(maxReplicas === null ? {} : { maxReplicas }), patch: { metadata: { annotations: { subset: name } } },
});

/** A Deployment for the cluster's default scheduler. */
const deployment = (name: string, replicas: number): Obj => defaultSchedulerDeployment(NS, name, replicas, null);

for (const k of kubeVersions()) describe(`[${k.version}] OpenKruise's WorkloadSpread scenarios on zonekeeper's standalone mode`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;

  before(async () => {
    // The shipped CRD stores v1beta1: the scenarios' v1alpha1 objects go through zonekeeper's /convert.
    kube = await standaloneWorkloadSpreads(cp, NS, { placement: { adaptiveUnschedulableSeconds: RECOVERY_SECONDS } });
    stopKubelet = kube.kubelet(NS);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  const spreadOf = (name: string) => kube.get(WS_API, 'WorkloadSpread', NS, name);
  /** Kruise's WaitForWorkloadSpreadRunning: status.observedGeneration equals metadata.generation. */
  const running = (name: string) => eventually(`WorkloadSpread ${name} observed`, async () => {
    const ws = await spreadOf(name);
    return ws.status?.observedGeneration === ws.metadata.generation && ws;
  }, 60_000, 500);
  /** Kruise's CreateWorkloadSpread: created, then running. */
  async function createSpread(name: string, target: string, subsets: Obj[], scheduleStrategy?: Obj): Promise<Obj> {
    await kube.create({ apiVersion: WS_API, kind: 'WorkloadSpread', metadata: { name, namespace: NS }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, subsets, scheduleStrategy } });
    return running(name);
  }
  async function updateSpread(name: string, spec: Obj): Promise<Obj> {
    await kube.patch(WS_API, 'WorkloadSpread', NS, name, { spec });
    return running(name);
  }
  /** Kruise's WaitForCloneSetRunReplicas: `count` pods Running (the stand-in kubelet runs bound pods), and `total` pods in all. */
  const runReplicas = (app: string, count: number, total = count) => eventually(`${count} of ${total} pods of ${app} running`, async () => {
    await kube.reapTerminating(NS);
    const pods = await kube.podsOf(NS, `app=${app}`);
    return pods.length === total && pods.filter((p) => p.status?.phase === 'Running').length === count && pods;
  }, 120_000, 500);
  const scale = (app: string, replicas: number) => kube.scale('Deployment', NS, app, replicas);

  /**
   * Kruise's loop over the pods: per subset, how many carry its matched-workloadspread
   * annotation; each such pod names the WorkloadSpread, carries the subset's required term as its
   * first term's expressions, its patch, and the deletion cost Kruise gives it (200 for the first
   * of two subsets, 100 for the second); a pod in none has no cost. Settled within 30 s (costs
   * and status are written after the pods), as Kruise's controller does before its test reads them.
   */
  async function subsetPods(app: string, ws: string, subsets: Obj[]): Promise<Record<string, number>> {
    return eventually(`the pods of ${app} as Kruise checks them`, async () => {
      const counts: Record<string, number> = Object.fromEntries(subsets.map((s) => [s.name, 0]));
      for (const pod of await kube.podsOf(NS, `app=${app}`)) {
        const raw = pod.metadata.annotations?.[MATCHED];
        if (!raw) {
          assert.equal(pod.metadata.annotations?.[COST] ?? '', '', `${pod.metadata.name}: no subset, no cost`);
          continue;
        }
        const injected = JSON.parse(raw);
        const i = subsets.findIndex((s) => s.name === injected.subset);
        assert.ok(i >= 0, `${pod.metadata.name} in a subset of the spec: ${raw}`);
        counts[injected.subset]!++;
        assert.equal(injected.name, ws);
        assert.deepEqual(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchExpressions,
          subsets[i]!.requiredNodeSelectorTerm.matchExpressions, `${pod.metadata.name}: the subset's term`);
        assert.equal(pod.metadata.annotations?.[COST], String(100 * (subsets.length - i)), `${pod.metadata.name}: Kruise's deletion cost`);
        assert.equal(pod.metadata.annotations?.subset, subsets[i]!.name, `${pod.metadata.name}: the subset's patch`);
      }
      return counts;
    }, 30_000, 500);
  }

  /** Kruise's status assertions: per subset its name, missingReplicas, replicas, and no creating or deleting pods left. */
  async function assertStatus(name: string, want: [missing: number, replicas: number][]): Promise<Obj> {
    return eventually(`the status of ${name}: ${JSON.stringify(want)}`, async () => {
      const ws = await spreadOf(name);
      want.forEach(([missing, replicas], i) => {
        const s = ws.status?.subsetStatuses?.[i];
        assert.equal(s?.name, ws.spec.subsets[i].name);
        assert.equal(s?.missingReplicas, missing, `${s?.name} missingReplicas`);
        assert.equal(s?.replicas, replicas, `${s?.name} replicas`);
        assert.equal(Object.keys(s?.creatingPods ?? {}).length, 0, `${s?.name} creatingPods`);
        assert.equal(Object.keys(s?.deletingPods ?? {}).length, 0, `${s?.name} deletingPods`);
      });
      return ws;
    }, 30_000, 500);
  }

  it('deploy in two zone, the type of maxReplicas is Integer', async () => {
    const subsets = [zoneSubset('zone-a', 'zone-a', 3), zoneSubset('zone-b', 'zone-b', 3)];
    await createSpread('two-zones', 'two-zones', subsets);
    await kube.create(deployment('two-zones', 6));
    await runReplicas('two-zones', 6);
    assert.deepEqual(await subsetPods('two-zones', 'two-zones', subsets), { 'zone-a': 3, 'zone-b': 3 });
    await assertStatus('two-zones', [[0, 3], [0, 3]]);

    // Scale down to 4, maxReplicas 2/2: Kruise's controller sets the costs with the status; here they follow within a second.
    subsets[0]!.maxReplicas = 2;
    subsets[1]!.maxReplicas = 2;
    await updateSpread('two-zones', { subsets });
    await eventually('one pod of each subset over its max, costed to go first', async () =>
      (await kube.podsOf(NS, 'app=two-zones')).filter((p) => Number(p.metadata.annotations?.[COST]) < 0).length === 2, 30_000, 500);
    await scale('two-zones', 4);
    await runReplicas('two-zones', 4);
    assert.deepEqual(await subsetPods('two-zones', 'two-zones', subsets), { 'zone-a': 2, 'zone-b': 2 });
    await assertStatus('two-zones', [[0, 2], [0, 2]]);

    // Scale up to 8, maxReplicas 4/4.
    subsets[0]!.maxReplicas = 4;
    subsets[1]!.maxReplicas = 4;
    await updateSpread('two-zones', { subsets });
    await scale('two-zones', 8);
    await runReplicas('two-zones', 8);
    assert.deepEqual(await subsetPods('two-zones', 'two-zones', subsets), { 'zone-a': 4, 'zone-b': 4 });
    await assertStatus('two-zones', [[0, 4], [0, 4]]);
  });

  it('elastic deployment, zone-a=2, zone-b=nil', async () => {
    const subsets = [zoneSubset('zone-a', 'zone-a', 2), zoneSubset('zone-b', 'zone-b', null)];
    await createSpread('elastic', 'elastic', subsets);
    await kube.create(deployment('elastic', 2));
    await runReplicas('elastic', 2);
    assert.deepEqual(await subsetPods('elastic', 'elastic', subsets), { 'zone-a': 2, 'zone-b': 0 });
    await assertStatus('elastic', [[0, 2], [-1, 0]]);

    await scale('elastic', 6);
    await runReplicas('elastic', 6);
    assert.deepEqual(await subsetPods('elastic', 'elastic', subsets), { 'zone-a': 2, 'zone-b': 4 });
    await assertStatus('elastic', [[0, 2], [-1, 4]]);

    await scale('elastic', 2);
    await runReplicas('elastic', 2);
    assert.deepEqual(await subsetPods('elastic', 'elastic', subsets), { 'zone-a': 2, 'zone-b': 0 });
    await assertStatus('elastic', [[0, 2], [-1, 0]]);
  });

  it('reschedule subset-a', async () => {
    // Subset-a's term names a zone no node has: its pods are not schedulable, by a wrong configuration.
    const subsets = [zoneSubset('subset-a', 'zone-x', 2), zoneSubset('subset-b', 'zone-b', null)];
    await createSpread('reschedule', 'reschedule', subsets, { type: 'Fixed' });
    await kube.create(deployment('reschedule', 5));
    await runReplicas('reschedule', 3, 5);
    assert.deepEqual(await subsetPods('reschedule', 'reschedule', subsets), { 'subset-a': 2, 'subset-b': 3 });
    const pending = (await kube.podsOf(NS, 'app=reschedule')).filter((p) => JSON.parse(p.metadata.annotations[MATCHED]).subset === 'subset-a');
    assert.ok(pending.every((p) => p.status?.phase !== 'Running'), 'no subset-a pod runs');
    let ws = await assertStatus('reschedule', [[0, 2], [-1, 3]]);
    assert.equal((ws.status.subsetStatuses[0].conditions ?? []).length, 0, 'Fixed: no condition');
    assert.equal((ws.status.subsetStatuses[1].conditions ?? []).length, 0);

    // Adaptive, no simulation: pods Pending in subset-a beyond 5 s are deleted and the subset marked unschedulable.
    await updateSpread('reschedule', { scheduleStrategy: { type: 'Adaptive', adaptive: { disableSimulationSchedule: true, rescheduleCriticalSeconds: 5 } } });
    ws = await eventually('subset-a Schedulable False', async () => {
      const w = await spreadOf('reschedule');
      return (w.status?.subsetStatuses?.[0]?.conditions ?? []).some((c: Obj) => c.type === 'Schedulable' && c.status === 'False') && w;
    }, 6 * 60_000, 1000);
    const marked = ws.status.subsetStatuses[0].conditions.find((c: Obj) => c.type === 'Schedulable');
    assert.equal(marked.reason, 'PodUnschedulable');
    assert.match(marked.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    await runReplicas('reschedule', 5);
    assert.deepEqual(await subsetPods('reschedule', 'reschedule', subsets), { 'subset-a': 0, 'subset-b': 5 });
    for (const p of await kube.podsOf(NS, 'app=reschedule')) {
      const explained = await (await fetch(`${cp.zonekeeper!.admin}/debug/explain?pod=${NS}/${p.metadata.name}`)).json() as Obj;
      assert.doesNotMatch(JSON.stringify(explained), /chosen by the OpenKruise webhook/, `${p.metadata.name}: zonekeeper assigned its subset`);
    }
    for (const p of pending) {
      await eventually(`${p.metadata.name} gone`, async () => (await kube.list('v1', 'Pod', NS)).every((q) => q.metadata.uid !== p.metadata.uid), 30_000, 500);
    }

    // Subset-a schedulable again after the recovery window (Kruise's 5 minutes, here 20 s).
    const turned = Date.parse(marked.lastTransitionTime);
    const recovered = await eventually('subset-a Schedulable True', async () => {
      const w = await spreadOf('reschedule');
      return w.status?.subsetStatuses?.[0]?.conditions?.find((c: Obj) => c.type === 'Schedulable' && c.status === 'True');
    }, 5 * 60_000, 1000);
    assert.equal(recovered.reason, 'Sufficient');
    assert.ok(Date.parse(recovered.lastTransitionTime) - turned >= RECOVERY_SECONDS * 1000, 'not before the window ended');
    const events = await kube.list('v1', 'Event', NS);
    assert.ok(events.some((e) => e.reason === 'RecoverSchedulable' && e.involvedObject?.name === 'reschedule'), 'the RecoverSchedulable Event');
  });
});
