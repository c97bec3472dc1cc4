// End-to-end: OpenKruise's v1beta1 WorkloadSpread scenarios (openkruise/kruise
// test/e2e/apps/v1beta1/workloadspread.go, PR #2466), each under Kruise's name and with Kruise's
// assertions, on zonekeeper's standalone mode: its CRD (v1beta1 stored, v1alpha1 converted by
// zonekeeper's /convert), admission, status and deletion costs, the default scheduler alone. A
// Deployment stands for Kruise's CloneSet, as in workloadSpreadStatus.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { tearDown, deployment as defaultSchedulerDeployment } from './workloads.js';
import { standaloneWorkloadSpreads } from './workloadSpreadCrd.js';

const ZONE = 'topology.kubernetes.io/zone';
const NS = 'kruise-v1beta1';
const BETA = 'apps.kruise.io/v1beta1';
const ALPHA = 'apps.kruise.io/v1alpha1';
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';

const zoneIn = (zone: string) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] });
/** A v1beta1 subset as Kruise's test builds it: requiredNodeSelector, maxReplicas, a patch naming it. */
const subset = (name: string, maxReplicas: number | null): Obj => ({
  name, requiredNodeSelector: zoneIn(name), ...(maxReplicas === null ? {} : { maxReplicas }), patch: { metadata: { annotations: { subset: name } } },
});

/** A Deployment for the cluster's default scheduler. */
const deployment = (name: string, replicas: number): Obj => defaultSchedulerDeployment(NS, name, replicas, null);

for (const k of kubeVersions()) describe(`[${k.version}] OpenKruise's v1beta1 WorkloadSpread scenarios on zonekeeper's standalone mode`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;

  before(async () => {
    kube = await standaloneWorkloadSpreads(cp, NS);
    // zonekeeper reads WorkloadSpreads at v1beta1 before the first is written.
    await eventually('zonekeeper watches WorkloadSpreads at v1beta1', async () =>
      ((await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json()) as Obj).openKruise.workloadspreads === BETA, 60_000, 500);
    stopKubelet = kube.kubelet(NS);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  const spreadOf = (name: string) => kube.get(BETA, 'WorkloadSpread', NS, name);
  /** Kruise's CreateWorkloadSpread: created (v1beta1), then observed by the controller. */
  async function createSpread(name: string, target: string, subsets: Obj[]): Promise<void> {
    await kube.create({ apiVersion: BETA, kind: 'WorkloadSpread', metadata: { name, namespace: NS }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, subsets } });
    await eventually(`WorkloadSpread ${name} observed`, async () => {
      const ws = await spreadOf(name);
      return ws.status?.observedGeneration === ws.metadata.generation;
    }, 60_000, 500);
  }
  /** Kruise's WaitForCloneSetRunning: `count` pods, all Running (the stand-in kubelet runs bound pods). */
  const running = (app: string, count: number) => eventually(`${count} pods of ${app} running`, async () => {
    await kube.reapTerminating(NS);
    const pods = await kube.podsOf(NS, `app=${app}`);
    return pods.length === count && pods.every((p) => p.status?.phase === 'Running') && pods;
  }, 120_000, 500);

  /** Kruise's loop: per subset, its pods; each carries the subset's term, patch, and (`costs`) Kruise's deletion cost. */
  const subsetPods = (app: string, subsets: Obj[], costs = true) => eventually(`the pods of ${app} as Kruise checks them`, async () => {
    const counts: Record<string, number> = Object.fromEntries(subsets.map((s) => [s.name, 0]));
    for (const pod of await kube.podsOf(NS, `app=${app}`)) {
      const raw = pod.metadata.annotations?.[MATCHED];
      if (!raw) continue;
      const i = subsets.findIndex((s) => s.name === JSON.parse(raw).subset);
      assert.ok(i >= 0, raw);
      counts[subsets[i]!.name]!++;
      assert.deepEqual(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchExpressions,
        subsets[i]!.requiredNodeSelector?.matchExpressions ?? subsets[i]!.requiredNodeSelectorTerm?.matchExpressions, `${pod.metadata.name}: the subset's term`);
      if (costs) assert.equal(pod.metadata.annotations?.[COST], String(100 * (subsets.length - i)), `${pod.metadata.name}: Kruise's deletion cost`);
    }
    return counts;
  }, 30_000, 500);

  it('v1beta1: deploy in two zones, maxReplicas is Integer', async () => {
    const subsets = [subset('zone-a', 3), subset('zone-b', 3)];
    await createSpread('two-zones', 'two-zones', subsets);
    await kube.create(deployment('two-zones', 6));
    await running('two-zones', 6);
    assert.deepEqual(await subsetPods('two-zones', subsets), { 'zone-a': 3, 'zone-b': 3 });
    const ws = await eventually('the v1beta1 status: 3 and 3, none missing', async () => {
      const s = (await spreadOf('two-zones')).status?.subsetStatuses;
      return s?.[0]?.replicas === 3 && s[0].missingReplicas === 0 && s[1]?.replicas === 3 && s[1].missingReplicas === 0 && s;
    }, 30_000, 500);
    assert.deepEqual(ws.map((s: Obj) => s.name), ['zone-a', 'zone-b']);

    // Scale down: replicas 4, maxReplicas 2 per zone.
    await kube.patch(BETA, 'WorkloadSpread', NS, 'two-zones', { spec: { subsets: [subset('zone-a', 2), subset('zone-b', 2)] } });
    // Kruise's controller writes the costs with the status before its test scales; here they follow within a second.
    await eventually('one pod of each subset over its max, costed to go first', async () =>
      (await kube.podsOf(NS, 'app=two-zones')).filter((p) => Number(p.metadata.annotations?.[COST]) < 0).length === 2, 30_000, 500);
    await kube.scale('Deployment', NS, 'two-zones', 4);
    await running('two-zones', 4);
    assert.deepEqual(await subsetPods('two-zones', [subset('zone-a', 2), subset('zone-b', 2)]), { 'zone-a': 2, 'zone-b': 2 });
    await eventually('the v1beta1 status: 2 and 2', async () => {
      const s = (await spreadOf('two-zones')).status?.subsetStatuses;
      return s?.[0]?.replicas === 2 && s[1]?.replicas === 2;
    }, 60_000, 1000);
  });

  it('v1beta1: elastic deployment, zone-a=2, zone-b=nil', async () => {
    const subsets = [subset('zone-a', 2), subset('zone-b', null)];
    await createSpread('elastic', 'elastic', subsets);
    await kube.create(deployment('elastic', 5));
    await running('elastic', 5);
    assert.deepEqual(await subsetPods('elastic', subsets), { 'zone-a': 2, 'zone-b': 3 });
  });

  it('cross-version: v1alpha1 create is visible as v1beta1 with correct field mapping', async () => {
    const alpha = { name: 'zone-a', requiredNodeSelectorTerm: zoneIn('zone-a'), maxReplicas: 3 };
    await kube.create({ apiVersion: ALPHA, kind: 'WorkloadSpread', metadata: { name: 'cross', namespace: NS },
      spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'cross' }, subsets: [alpha, { name: 'zone-b' }] } });
    const beta = await spreadOf('cross');
    assert.deepEqual(beta.spec.subsets[0].requiredNodeSelector, alpha.requiredNodeSelectorTerm, 'RequiredNodeSelector from RequiredNodeSelectorTerm');
    assert.equal(beta.spec.subsets[0].requiredNodeSelector.matchExpressions[0].key, ZONE);
    await kube.create(deployment('cross', 3));
    await running('cross', 3);
    // Kruise: every zone-a pod has its node affinity injected. zone-b has no term: Kruise's check skips it.
    const pods = await kube.podsOf(NS, 'app=cross');
    const inA = pods.filter((p) => JSON.parse(p.metadata.annotations?.[MATCHED] ?? '{}').subset === 'zone-a');
    assert.equal(inA.length, 3, 'zone-a has room for all three');
    for (const p of inA) assert.deepEqual(p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions, zoneIn('zone-a').matchExpressions);
  });
});
