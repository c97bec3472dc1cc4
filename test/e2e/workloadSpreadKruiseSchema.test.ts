// End-to-end: zonekeeper's WorkloadSpread status against OpenKruise's own v1beta1 CRD (its master
// since PR #2466, kruise-workloadspread-crd.yaml, with its structural schema: a subset condition is
// a metav1.Condition whose reason and message are required). zonekeeper's /convert stands in for
// Kruise's conversion webhook (the same mapping). What zonekeeper writes in standalone mode is
// accepted by Kruise's schema and read at v1alpha1 as Kruise's conversion serves it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { admissionConfig, admissionReady, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { deployment, tearDown } from './workloads.js';
import { conversionReady, WORKLOADSPREAD_CRD } from './workloadSpreadCrd.js';

const NS = 'kruise-schema';
const BETA = 'apps.kruise.io/v1beta1';
const ALPHA = 'apps.kruise.io/v1alpha1';
const ZONE = 'topology.kubernetes.io/zone';
const zoneIn = (zone: string) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] });

/** Kruise's CRD, its conversion webhook called by URL (Kruise's kustomize patch names its own Service). */
function kruiseCrd(port: number): Obj {
  const crd = parseAllDocuments(readFileSync(new URL('./kruise-workloadspread-crd.yaml', import.meta.url), 'utf8')).map((d) => d.toJS()).find(Boolean);
  crd.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { url: `https://127.0.0.1:${port}/convert` } } };
  return crd;
}

for (const k of kubeVersions()) describe(`[${k.version}] zonekeeper's WorkloadSpread status under OpenKruise's v1beta1 CRD`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;

  before(async () => {
    const { port, admission } = await admissionConfig('default/zonekeeper-webhook-tls');
    admission.certificate.conversionCrd = WORKLOADSPREAD_CRD;
    await cp.up([{ name: 'default-scheduler', extender: false }], {
      admission, cluster: { crdRecheckSeconds: 1 }, workloadSpread: { writeStatus: true, statusIntervalSeconds: 1 },
    });
    kube = new Kube(cp.api);
    await kube.addNode('worker-a', 'zone-a');
    await kube.addNode('worker-b', 'zone-b');
    await kube.create(kruiseCrd(port));
    cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${WORKLOADSPREAD_CRD}`]);
    await kube.create(webhookConfiguration(port));
    await conversionReady(kube);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'zonekeeper.io/admission': 'enabled' } } });
    await admissionReady(kube, cp.zonekeeper!.admin);
  });
  after(() => tearDown(cp));

  it('the v1beta1 status zonekeeper writes passes Kruise\'s schema: each subset condition a metav1.Condition; v1alpha1 reads it as Kruise converts it', async () => {
    await kube.create({
      apiVersion: BETA, kind: 'WorkloadSpread', metadata: { name: 'web', namespace: NS },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [{ name: 'a', requiredNodeSelector: zoneIn('zone-a'), maxReplicas: 1 }, { name: 'b', requiredNodeSelector: zoneIn('zone-b') }],
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
      },
    });
    await kube.create(deployment(NS, 'web', 3));
    const status = await eventually('zonekeeper\'s status accepted: 3 pods counted, each subset Schedulable', async () => {
      const ws = await kube.get(BETA, 'WorkloadSpread', NS, 'web');
      const s = ws.status?.subsetStatuses;
      return ws.status?.observedGeneration === ws.metadata.generation && (s?.[0]?.replicas ?? 0) + (s?.[1]?.replicas ?? 0) === 3 && ws.status;
    }, 60_000, 500);
    for (const s of status.subsetStatuses) {
      assert.equal(s.conditions.length, 1, s.name);
      const { lastTransitionTime, ...rest } = s.conditions[0];
      assert.deepEqual(rest, { type: 'Schedulable', status: 'True', reason: 'Sufficient', message: '' }, s.name);
      assert.match(lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    assert.deepEqual(status.subsetStatuses.map((s: Obj) => [s.name, s.replicas, s.missingReplicas]), [['a', 1, 0], ['b', 2, -1]]);
    const alpha = await kube.get(ALPHA, 'WorkloadSpread', NS, 'web');
    assert.deepEqual(alpha.spec.subsets[0].requiredNodeSelectorTerm, zoneIn('zone-a'));
    const { lastTransitionTime: _, ...condition } = alpha.status.subsetStatuses[0].conditions[0];
    assert.deepEqual(condition, { type: 'Schedulable', status: 'True', reason: 'Sufficient' }, 'v1alpha1 leaves the empty message out, as Kruise\'s types serialize it');
  });
});
