// End-to-end: a cluster whose WorkloadSpreads were stored as v1alpha1 (zonekeeper's CRD before
// v1beta1) upgraded to the shipped CRD (v1beta1 stored, v1alpha1 served, converted by zonekeeper's
// /convert, as OpenKruise's since PR #2466) loses nothing: read back at either version, and again
// after the objects are rewritten as v1beta1; zonekeeper then watches v1beta1. A v1beta1
// WorkloadSpread written as Kruise's documentation writes it (its fields renamed) is decided on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admissionConfig, admissionReady, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { deployment, tearDown } from './workloads.js';
import { conversionReady, v1alpha1WorkloadSpreadCrd, WORKLOADSPREAD_CRD, workloadSpreadCrd } from './workloadSpreadCrd.js';

const NS = 'ws-upgrade';
const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';
const ZONE = 'topology.kubernetes.io/zone';
const zoneIn = (zone: string) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] });

/** Every field v1alpha1 has, as a user (or Kruise's controller, for the status) writes it. */
const spec: Obj = {
  targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
  targetFilter: { selector: { matchLabels: { app: 'web' } }, replicasPathList: ['spec.replicas'] },
  scheduleStrategy: { type: 'Adaptive', adaptive: { disableSimulationSchedule: true, rescheduleCriticalSeconds: 20 } },
  subsets: [
    { name: 'a', requiredNodeSelectorTerm: zoneIn('zone-a'), preferredNodeSelectorTerms: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }], maxReplicas: 1, patch: { metadata: { labels: { subset: 'a' } } } },
    { name: 'b', requiredNodeSelectorTerm: zoneIn('zone-b'), maxReplicas: '50%' },
  ],
};
const status: Obj = {
  observedGeneration: 1,
  subsetStatuses: [
    { name: 'a', replicas: 1, missingReplicas: 0, creatingPods: { 'web-x': '2026-06-01T10:00:00Z' },
      conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', message: 'waited', lastTransitionTime: '2026-06-01T09:00:00Z' }] },
    // A condition without reason or message: v1beta1's metav1.Condition needs both.
    { name: 'b', replicas: 0, missingReplicas: -1, conditions: [{ type: 'Schedulable', status: 'True', lastTransitionTime: '2026-06-01T09:00:00Z' }] },
  ],
};

/** What a user wrote and what conversion must keep: labels, annotations, spec, status. */
const kept = (o: Obj) => ({ labels: o.metadata.labels, annotations: o.metadata.annotations, spec: o.spec, status: o.status });

for (const k of kubeVersions()) describe(`[${k.version}] WorkloadSpread v1alpha1 -> v1beta1: the CRD upgraded, nothing lost`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let port: number;

  before(async () => {
    const webhook = await admissionConfig('default/zonekeeper-webhook-tls');
    port = webhook.port;
    webhook.admission.certificate.conversionCrd = WORKLOADSPREAD_CRD;
    await cp.up([{ name: 'default-scheduler', extender: false }], { admission: webhook.admission, cluster: { crdRecheckSeconds: 1 } });
    kube = new Kube(cp.api);
    await kube.addNode('worker-a', 'zone-a');
    await kube.addNode('worker-b', 'zone-b');
    await kube.create(webhookConfiguration(port));
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'zonekeeper.io/admission': 'enabled' } } });
    await admissionReady(kube, cp.zonekeeper!.admin);
  });
  after(() => tearDown(cp));

  it('stored as v1alpha1, the CRD upgraded: read back at v1alpha1 exactly, at v1beta1 renamed; rewritten as v1beta1, exactly again', async () => {
    await kube.create(v1alpha1WorkloadSpreadCrd());
    cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${WORKLOADSPREAD_CRD}`]);
    await kube.create({ apiVersion: ALPHA, kind: 'WorkloadSpread', metadata: { name: 'old', namespace: NS, labels: { team: 'x' }, annotations: { note: 'y' } }, spec });
    await kube.patch(ALPHA, 'WorkloadSpread', NS, 'old', { status }, '/status');
    const before = kept(await kube.get(ALPHA, 'WorkloadSpread', NS, 'old'));
    assert.deepEqual(before.spec, spec, 'the old CRD keeps every field');
    assert.deepEqual(before.status, status);

    // The upgrade: the shipped CRD replaces the old one (kubectl apply would do the same).
    const old = await kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, WORKLOADSPREAD_CRD);
    const crd = workloadSpreadCrd(port);
    await kube.call('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${WORKLOADSPREAD_CRD}`, { ...crd, metadata: { ...crd.metadata, resourceVersion: old.metadata.resourceVersion } });
    await conversionReady(kube);

    const beta = await eventually('the object served at v1beta1', async () => kube.get(BETA, 'WorkloadSpread', NS, 'old').catch(() => undefined), 60_000, 500);
    assert.deepEqual(beta.spec.subsets[0].requiredNodeSelector, spec.subsets[0].requiredNodeSelectorTerm);
    assert.deepEqual(beta.spec.subsets[0].preferredNodeSelector, spec.subsets[0].preferredNodeSelectorTerms);
    assert.equal(beta.spec.subsets[0].requiredNodeSelectorTerm, undefined);
    assert.deepEqual(beta.spec.targetFilter, spec.targetFilter);
    assert.deepEqual(beta.status.subsetStatuses[1].conditions, [{ type: 'Schedulable', status: 'True', reason: 'Unknown', message: '', lastTransitionTime: '2026-06-01T09:00:00Z' }],
      'a metav1.Condition, as Kruise\'s conversion makes it');
    assert.deepEqual(kept(await kube.get(ALPHA, 'WorkloadSpread', NS, 'old')), before, 'v1alpha1 reads what was written');

    // A storage migration (what kube-storage-version-migrator does): each object rewritten as it is read, now stored as v1beta1.
    await kube.call('PUT', `/apis/${BETA}/namespaces/${NS}/workloadspreads/old`, beta);
    const migrated = await kube.get(BETA, 'WorkloadSpread', NS, 'old');
    assert.deepEqual(migrated.spec, beta.spec);
    assert.deepEqual(kept(await kube.get(ALPHA, 'WorkloadSpread', NS, 'old')), before, 'stored as v1beta1, v1alpha1 still reads what was written');
  });

  it('zonekeeper watches v1beta1 once served; a v1beta1 WorkloadSpread as Kruise documents it, renamed, places the pods', async () => {
    const cache = async () => (await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json()) as Obj;
    const spreads = async () => (await cache()).kinds.find((x: Obj) => x.kind === 'workloadspreads');
    await eventually('zonekeeper watches WorkloadSpreads at v1beta1', async () => (await cache()).openKruise.workloadspreads === BETA, 60_000, 500);
    // Kruise's documented WorkloadSpread (openkruise.io, WorkloadSpread), written at v1beta1.
    await kube.create({
      apiVersion: BETA, kind: 'WorkloadSpread', metadata: { name: 'workloadspread-demo', namespace: NS },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' },
        subsets: [
          { name: 'subset-a', requiredNodeSelector: zoneIn('zone-a'), preferredNodeSelector: [{ weight: 1, preference: { matchExpressions: [{ key: 'another-node-label-key', operator: 'In', values: ['another-node-label-value'] }] } }],
            maxReplicas: 3, tolerations: [], patch: { metadata: { labels: { 'xxx-specific-label': 'xxx' } } } },
          { name: 'subset-b', requiredNodeSelector: zoneIn('zone-b') },
        ],
        // The documentation's `Adaptive | Fixed`: Fixed, decided at admission (Adaptive waits for the gate without --workloadspread-status).
        scheduleStrategy: { type: 'Fixed' },
      },
    });
    await eventually('zonekeeper has both WorkloadSpreads, read at v1beta1', async () => (await spreads())?.objects === 2, 30_000, 250);
    await kube.create(deployment(NS, 'demo', 5));
    const pods = await eventually('5 pods of demo, each given a subset at admission', async () => {
      const all = await kube.podsOf(NS, 'app=demo');
      return all.length === 5 && all.every((p) => p.metadata.annotations?.['apps.kruise.io/matched-workloadspread']) && all;
    }, 60_000, 500);
    const subsets = pods.map((p) => JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']));
    assert.deepEqual(subsets.map((s) => s.name), Array(5).fill('workloadspread-demo'));
    assert.deepEqual(subsets.map((s) => s.subset).sort(), ['subset-a', 'subset-a', 'subset-a', 'subset-b', 'subset-b'], 'subset-a holds its maxReplicas of 3, subset-b the rest');
    for (const p of pods) {
      const term = p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0];
      const subset = JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']).subset;
      assert.deepEqual(term.matchExpressions, zoneIn(subset === 'subset-a' ? 'zone-a' : 'zone-b').matchExpressions, p.metadata.name);
    }
  });
});
