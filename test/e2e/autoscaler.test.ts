// End-to-end with a real Cluster Autoscaler (kwok provider: node groups of template Nodes, one per
// zone, all starting empty) beside the control plane. The cluster's zones are known only from
// tainted system nodes; the workload's pool has no node anywhere, and no zonekeeper.io/zones is
// written by hand: zonekeeper finds the zones the pool can grow into, writes each gated pod's
// zone into its spec, and the autoscaler, which never calls an extender, adds nodes there
// (docs/autoscalers.md). A pool whose groups cover two zones of three: the third seat's refusal
// is reported.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { boundAndNodes, CA_UNPACK, CA_UNPACKED, kubeletOfNewNodes, nodeGroupTemplate, policySeatsGrown, pooledStatefulSet, startClusterAutoscaler, systemNodes, ZONE } from './autoscaling.js';
import { ADMISSION_LABEL, admissionConfig, admissionReady, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { applySeatPolicy, DECIDED_BY, metricSum, shippedScope } from './seatPolicy.js';
import { SCHEDULER, tearDown, zoneCounts, ZONES } from './workloads.js';

const NS = 'scaled';
const ADMITTED = 'admitted';

// This autoscaler watches resource.k8s.io/v1, served from Kubernetes 1.34 on.
const versions = kubeVersions().filter((k) => k.minor >= 34);
if (!CA_UNPACKED && process.env.CI) throw new Error(`CI runs the Cluster Autoscaler e2e: no ${CA_UNPACK}`);

for (const k of versions) describe(`[${k.version}] a real Cluster Autoscaler grows empty node groups where zonekeeper pinned the pods`, { skip: CA_UNPACKED ? false : `no ${CA_UNPACK}` }, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;
  // The policy transport where the API server serves it: the seat table on, the shipped policy applied.
  const policy = k.minor >= 36;

  before(async () => {
    const webhook = await admissionConfig();
    await cp.up([{ name: 'default-scheduler', extender: false }, { name: SCHEDULER, extender: true }], { admission: webhook.admission, policy: { seatTable: policy } });
    kube = new Kube(cp.api);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ADMITTED, labels: { [ADMISSION_LABEL]: 'enabled' } } });
    const webhookConfig = webhookConfiguration(webhook.port);
    if (policy) {
      shippedScope(webhookConfig.webhooks[0]);
      applySeatPolicy(cp);
    }
    await kube.create(webhookConfig);
    await systemNodes(kube);
    // Pools db (default scheduler), dbz (zonekeeper's scheduler), dba (admission) and seats (the policy) in every zone; kv in zones a and b only.
    const templates = [...['db', 'dbz', 'dba', 'seats'].flatMap((pool) => ZONES.map((z) => nodeGroupTemplate(pool, z))), nodeGroupTemplate('kv', 'zone-a'), nodeGroupTemplate('kv', 'zone-b')];
    await startClusterAutoscaler(cp, kube, templates, ['--scale-down-enabled=false']);
    stopKubelet = kubeletOfNewNodes(kube);
    await admissionReady(kube, cp.zonekeeper!.admin);
    // Its status ConfigMap is how zonekeeper knows the cluster's zones can grow (placement.growInto: auto).
    await eventually('zonekeeper finds the Cluster Autoscaler', async () =>
      (await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj).clusterAutoscaler === 'kube-system/cluster-autoscaler-status', 120_000, 1000);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  for (const [pool, schedulerName] of [['db', undefined], ['dbz', SCHEDULER]] as const) {
    it(`${schedulerName ? 'zonekeeper\'s scheduler' : 'the default scheduler alone'}: 3 gated pods of an empty pool get one node and one pod per zone, each on its pin; scaled to 6, 2/2/2`, async () => {
      await kube.create(pooledStatefulSet(NS, pool, pool, 3, schedulerName ? { schedulerName } : {}));
      const three = await boundAndNodes(kube, NS, pool, pool, 3);
      const list = await kube.frozenZones('apps/v1', 'StatefulSet', NS, pool);
      assert.deepEqual([...list].sort(), ZONES, 'the frozen list holds every zone the pool can grow into');
      for (const [pod, zone] of three.pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
      assert.equal(three.nodes, 'zone-a=1 zone-b=1 zone-c=1');
      await kube.scale('StatefulSet', NS, pool, 6);
      const six = await boundAndNodes(kube, NS, pool, pool, 6);
      assert.equal(zoneCounts(six.pods.values()), 'zone-a=2 zone-b=2 zone-c=2');
      assert.equal(six.nodes, 'zone-a=2 zone-b=2 zone-c=2');
    });
  }

  it('admission, no gate in the template: 3 pods of an empty pool are written their zones at creation, get one node and one pod per zone, each on its pin; scaled to 6, 2/2/2', async () => {
    const sts = pooledStatefulSet(ADMITTED, 'dba', 'dba', 3);
    delete sts.spec.template.spec.schedulingGates;
    await kube.create(sts);
    const three = await boundAndNodes(kube, ADMITTED, 'dba', 'dba', 3);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ADMITTED, 'dba');
    assert.deepEqual([...list].sort(), ZONES, 'the frozen list holds every zone the pool can grow into');
    for (const [pod, zone] of three.pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
    assert.equal(three.nodes, 'zone-a=1 zone-b=1 zone-c=1');
    await kube.scale('StatefulSet', ADMITTED, 'dba', 6);
    const six = await boundAndNodes(kube, ADMITTED, 'dba', 'dba', 6);
    assert.equal(zoneCounts(six.pods.values()), 'zone-a=2 zone-b=2 zone-c=2');
    assert.equal(six.nodes, 'zone-a=2 zone-b=2 zone-c=2');
    // With the policy (1.36+), the pods created once the list is frozen and published are the policy's.
    const admitted = await metricSum(cp.zonekeeper!.admin, 'zonekeeper_decisions_total', 'verb="admission",outcome="admitted"');
    const marked = (await kube.podsOf(ADMITTED, 'app=dba')).filter((p) => p.metadata.labels?.[DECIDED_BY] === 'policy').length;
    assert.ok(admitted + marked >= 6, `all six decided at creation: ${admitted} at admission, ${marked} by the policy`);
  });

  it('the policy (1.36+), no gate in the template: 3 pods of a frozen list on empty node groups are written their zones by kube-apiserver, no admission review, and the autoscaler adds one node per pinned zone',
    { skip: policy ? false : 'MutatingAdmissionPolicy is served from Kubernetes 1.36' }, () => policySeatsGrown(kube, cp.zonekeeper!.admin, ADMITTED));

  it('a pool whose node groups cover zones a and b only: two pods bound there; the zone-c seat waits, and the autoscaler\'s refusal is reported on the workload, in health and on the layout', async () => {
    await kube.create(pooledStatefulSet(NS, 'kv', 'kv', 3));
    const list = await eventually('kv\'s frozen list', async () => (await kube.frozenZones('apps/v1', 'StatefulSet', NS, 'kv')).length > 0 && kube.frozenZones('apps/v1', 'StatefulSet', NS, 'kv'));
    assert.deepEqual([...list].sort(), ZONES);
    const inC = `kv-${list.indexOf('zone-c')}`;
    await eventually('the two pods pinned to a and b bound', async () => (await kube.podsOf(NS, 'app=kv')).filter((p) => p.spec.nodeName).length === 2, 240_000, 1000);
    const started = Date.now();
    const event = await eventually('a CannotGrow Event on kv', async () =>
      (await kube.list('v1', 'Event', NS)).find((e) => e.reason === 'CannotGrow' && e.involvedObject.name === 'kv'), 120_000, 1000);
    console.log(`# CannotGrow ${Math.round((Date.now() - started) / 1000)} s after the other two bound: ${event.message}`);
    assert.match(event.message, new RegExp(`${inC} in zone-c, cluster-autoscaler: .*scale-up`));
    const health = await (await fetch(`${cp.zonekeeper!.admin}/debug/health`)).json() as Obj;
    const kv = (health.workloads ?? health).find((h: Obj) => h.key === `${NS}/StatefulSet/kv`);
    assert.equal(kv.causes['cannot-grow'], 1);
    assert.match(kv.reason, /cannot-grow: kv-\d in zone-c, cluster-autoscaler/);
    const layouts = await (await fetch(`${cp.zonekeeper!.admin}/debug/layouts?namespace=${NS}`)).json() as Obj;
    const shown = layouts.workloads.find((w: Obj) => w.workload.name === 'kv');
    assert.match(shown.health.reason, /cannot-grow/, 'the layout page shows the reason');
    assert.deepEqual(shown.zones.growing, ['zone-c'], 'the layout names zone-c as a zone with no node yet');
    const [pending] = (await kube.podsOf(NS, 'app=kv')).filter((p) => !p.spec.nodeName);
    assert.equal(pending!.metadata.name, inC);
    assert.equal(pending!.spec.nodeSelector[ZONE], 'zone-c', 'strict: it waits in its zone, saying why');
  });
});
