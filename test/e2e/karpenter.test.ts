// End-to-end with a real Karpenter (v1.13, kwok provider: a NodeClaim's Node is created by
// Karpenter itself, no machine) beside the control plane and the default scheduler alone. The
// cluster's zones are known from tainted system nodes; zonekeeper reads the NodePools the
// workload's pods are compatible with to know the zones its pool can grow into, so one node of
// the pool in zone-b does not put the whole StatefulSet there (docs/autoscalers.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { boundAndNodes, kubeletOfNewNodes, policySeatsGrown, pooledStatefulSet, systemNodes, ZONE } from './autoscaling.js';
import { ADMISSION_LABEL, admissionConfig, admissionReady, EVICTION_WEBHOOK, EVICTIONS_LABEL, evictionWebhookConfiguration, webhookConfiguration } from './admissionWebhook.js';
import { podUp, sampleDownZones } from './disruptions.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { installKarpenter, KARPENTER_MIN_MINOR, KARPENTER_UNPACK, karpenterUnpacked, nodePool, startKarpenter } from './karpenter.js';
import { eventually, Kube, type Obj } from './kube.js';
import { applySeatPolicy, shippedScope } from './seatPolicy.js';
import { tearDown, zoneCounts, ZONES } from './workloads.js';

const ADMITTED = 'admitted';
const NS = 'grown';

// One run on the newest Kubernetes: Karpenter v1.13's client is 1.35's.
const versions = kubeVersions().filter((k) => k.minor >= KARPENTER_MIN_MINOR);
const unpacked = karpenterUnpacked();
if (!unpacked && process.env.CI) throw new Error(`CI runs the Karpenter e2e: no ${KARPENTER_UNPACK}`);

for (const k of versions) describe(`[${k.version}] a real Karpenter grows the zones its NodePools offer where zonekeeper pinned the pods`, { skip: unpacked ? false : `no ${KARPENTER_UNPACK}` }, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;
  // The policy transport where the API server serves it: the seat table on, the shipped policy applied.
  const policy = k.minor >= 36;

  before(async () => {
    const webhook = await admissionConfig();
    webhook.admission.certificate.evictionWebhookConfiguration = EVICTION_WEBHOOK;
    await cp.up([{ name: 'default-scheduler', extender: false }], { admission: webhook.admission, policy: { seatTable: policy } });
    kube = new Kube(cp.api);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ADMITTED, labels: { [ADMISSION_LABEL]: 'enabled' } } });
    const webhookConfig = webhookConfiguration(webhook.port);
    if (policy) {
      shippedScope(webhookConfig.webhooks[0]);
      applySeatPolicy(cp);
    }
    await kube.create(webhookConfig);
    await kube.create(evictionWebhookConfiguration(webhook.port));
    await systemNodes(kube);
    await installKarpenter(cp, kube);
    await kube.create(nodePool('db', ZONES));
    await kube.create(nodePool('dbab', ['zone-a', 'zone-b']));
    await kube.create(nodePool('dba', ZONES));
    await kube.create(nodePool('seats', ZONES));
    await kube.create(nodePool('quorum', ZONES));
    await startKarpenter(cp);
    stopKubelet = kubeletOfNewNodes(kube);
    // zonekeeper sees both NodePools before any pod is decided.
    await eventually('zonekeeper watches NodePools', async () => {
      const cache = await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj;
      return cache.kinds.find((c: Obj) => c.kind === 'nodepools')?.objects === 5;
    }, 120_000, 500);
    await admissionReady(kube, cp.zonekeeper!.admin);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  it('a NodePool offering zones a, b, c and one node of it already in zone-b: the StatefulSet of 3 gets 1/1/1, each pod on its pin', async () => {
    // The pool's first node, as an earlier pod left it: Karpenter adds it in zone-b for a bare pod.
    await kube.create({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'seed', namespace: NS },
      spec: { nodeSelector: { pool: 'db', [ZONE]: 'zone-b' }, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }] },
    });
    await eventually('the seed pod bound in zone-b', async () => (await kube.get('v1', 'Pod', NS, 'seed')).spec.nodeName, 180_000, 1000);
    await kube.delete('v1', 'Pod', NS, 'seed', 0);
    await eventually('the seed pod gone', async () => (await kube.podsOf(NS, '')).every((p) => p.metadata.name !== 'seed'));
    assert.equal(zoneCounts((await kube.list('v1', 'Node', undefined, 'pool=db')).map((n) => n.metadata.labels[ZONE])), 'zone-b=1');

    await kube.create(pooledStatefulSet(NS, 'db', 'db', 3));
    const { pods, nodes } = await boundAndNodes(kube, NS, 'db', 'db', 3);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', NS, 'db');
    assert.deepEqual([...list].sort(), ZONES, 'the frozen list holds the zones the NodePool offers, not the one zone with a node');
    for (const [pod, zone] of pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
    assert.equal(zoneCounts(pods.values()), 'zone-a=1 zone-b=1 zone-c=1');
    assert.equal(nodes, 'zone-a=1 zone-b=1 zone-c=1');
  });

  it('admission, no gate in the template: a StatefulSet of 3 on a NodePool with no node is written its zones at creation, and Karpenter adds one node per zone', async () => {
    const sts = pooledStatefulSet(ADMITTED, 'dba', 'dba', 3);
    delete sts.spec.template.spec.schedulingGates;
    await kube.create(sts);
    const { pods, nodes } = await boundAndNodes(kube, ADMITTED, 'dba', 'dba', 3);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ADMITTED, 'dba');
    assert.deepEqual([...list].sort(), ZONES, 'the zones the NodePool offers');
    for (const [pod, zone] of pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
    assert.equal(nodes, 'zone-a=1 zone-b=1 zone-c=1');
    for (const p of await kube.podsOf(ADMITTED, 'app=dba')) assert.ok(ZONES.includes(p.spec.nodeSelector?.[ZONE]), `${p.metadata.name}: its zone in its spec`);
  });

  it('the policy (1.36+), no gate in the template: a StatefulSet of 3 with a frozen list on a NodePool with no node is written its zones by kube-apiserver, no admission review, and Karpenter adds one node per pinned zone',
    { skip: policy ? false : 'MutatingAdmissionPolicy is served from Kubernetes 1.36' }, () => policySeatsGrown(kube, cp.zonekeeper!.admin, ADMITTED));

  it('a NodePool offering zones a and b only: the StatefulSet of 3 gets 2/1 over those two, nothing pinned to zone-c', async () => {
    await kube.create(pooledStatefulSet(NS, 'ab', 'dbab', 3));
    const { pods } = await boundAndNodes(kube, NS, 'ab', 'dbab', 3);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', NS, 'ab');
    assert.deepEqual([...list].sort(), ['zone-a', 'zone-b']);
    for (const [pod, zone] of pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 2], pod);
    assert.deepEqual(zoneCounts(pods.values()).split(' ').map((c) => c.split('=')[1]).sort(), ['1', '2']);
  });

  it('a zone listed by hand that the NodePool does not offer: the seat there waits, and Karpenter\'s refusal is reported on the workload', async () => {
    await kube.create({ ...pooledStatefulSet(NS, 'abc', 'dbab', 3), metadata: { name: 'abc', namespace: NS, annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' } } });
    await eventually('the pods pinned to a and b bound', async () => (await kube.podsOf(NS, 'app=abc')).filter((p) => p.spec.nodeName).length === 2, 180_000, 1000);
    const event = await eventually('a CannotGrow Event on abc', async () =>
      (await kube.list('v1', 'Event', NS)).find((e) => e.reason === 'CannotGrow' && e.involvedObject.name === 'abc'), 120_000, 1000);
    assert.match(event.message, /abc-2 in zone-c, karpenter: /);
    console.log(`# CannotGrow: ${event.message}`);
  });

  it('Karpenter disrupting nodes in two zones at once (two NodeClaims deleted together): its evictions go a zone at a time, and both nodes are replaced', async () => {
    const ns = 'quorum';
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [ADMISSION_LABEL]: 'enabled', [EVICTIONS_LABEL]: 'enabled' } } });
    const stopPods = kube.kubelet(ns, 300, 3000);
    try {
      // The members' own PDB lets two go at once: only the zone budget keeps them a zone apart.
      await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: ns }, spec: { maxUnavailable: 2, selector: { matchLabels: { app: 'db' } } } });
      // Three members, one per zone: a quorum that two zones down at once would lose.
      const sts = pooledStatefulSet(ns, 'db', 'quorum', 3);
      delete sts.spec.template.spec.schedulingGates;
      sts.metadata.annotations = { 'zonekeeper.io/zone-disruption-budget': 'zone' };
      await kube.create(sts);
      await boundAndNodes(kube, ns, 'db', 'quorum', 3);
      const list = await kube.frozenZones('apps/v1', 'StatefulSet', ns, 'db');
      await eventually('3 pods Ready', async () => (await kube.podsOf(ns, 'app=db')).filter(podUp).length === 3, 120_000, 1000);
      const nodeOf = async (pod: string) => (await kube.get('v1', 'Pod', ns, pod)).spec.nodeName as string;
      // db-0 and db-1: their seats are in two zones; their NodeClaims go together, as a drift or an expiry would take them.
      const nodes = [await nodeOf('db-0'), await nodeOf('db-1')];
      const claims = (await kube.call('GET', '/apis/karpenter.sh/v1/nodeclaims')).items.filter((c: Obj) => nodes.includes(c.status?.nodeName)).map((c: Obj) => c.metadata.name);
      assert.equal(claims.length, 2, `the NodeClaims of ${nodes.join(', ')}`);
      const started = Date.now();
      cp.kubectl(['delete', 'nodeclaim', ...claims, '--wait=false']);
      const gone = eventually('both nodes gone and 3 pods Ready again', async () => {
        const left = (await kube.list('v1', 'Node')).filter((n) => nodes.includes(n.metadata.name));
        return left.length === 0 && (await kube.podsOf(ns, 'app=db')).filter(podUp).length === 3;
      }, 300_000, 1000);
      const samples = await sampleDownZones(kube, ns, 'db', 3, list, gone);
      await gone;
      const twoDown = samples.filter((x) => x.length > 1);
      const refusals = (await kube.list('v1', 'Event', ns)).filter((e) => /zone disruption budget/.test(e.message ?? ''));
      console.log(`# [${k.version}] Karpenter replaced the nodes of db-0 and db-1 in ${((Date.now() - started) / 1000).toFixed(0)} s; ${samples.length} samples, ${twoDown.length} with two zones down; ${refusals.length} Event(s) quoting the refusal${refusals[0] ? `: ${refusals[0].reason}: ${refusals[0].message}` : ''}`);
      assert.deepEqual(twoDown, [], 'no moment with pods of two zones unavailable');
    } finally {
      await stopPods();
    }
  });
});
