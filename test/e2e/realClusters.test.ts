// End-to-end on a production-shaped cluster (docs/design.md#the-zones-a-workload-can-use):
// general nodes in zones a, b, c; a tainted database pool in a and b only; a tainted
// control-plane node in zone-d; a zone-f of tainted GPU nodes only; no autoscaler, and
// zonekeeper's default configuration. Every workload must bind fully, in the zones it can use.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { addPools, deployment, PRODUCTION_POOLS, SCHEDULER, type NodePool, statefulSet as sharedStatefulSet, tearDown, zoneCounts, zoneTerm } from './workloads.js';
import { v1alpha1WorkloadSpreadCrd } from './workloadSpreadCrd.js';

const cli = new URL('../../dist/cli.js', import.meta.url).pathname;
/** A zone whose every node carries a taint the workloads here do not tolerate (not a control plane). */
const GPU_POOL: NodePool = { name: 'gpu', perZone: { 'zone-f': 1 }, labels: { accelerator: 'gpu' }, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] };
const DB_POOL = { nodeSelector: { pool: 'db' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] };

/** A StatefulSet of zonekeeper's scheduler, its pod template asking `podSpec` of a node. */
const statefulSet = (namespace: string, name: string, replicas: number, podSpec: Obj = {}) => sharedStatefulSet(namespace, name, replicas,
  { schedulerName: SCHEDULER, ...podSpec });

for (const k of kubeVersions()) describe(`[${k.version}] a cluster shaped like production: pools in some zones, tainted zones, affinity`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;

  before(async () => {
    // Static pools and no autoscaler, the default configuration: the zones a pod can use are those of its nodes (docs/autoscalers.md).
    await cp.up([{ name: SCHEDULER, extender: true }]);
    kube = new Kube(cp.api);
    zones = await addPools(kube, [...PRODUCTION_POOLS, GPU_POOL]);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });
  });
  after(() => tearDown(cp));

  const bound = (app: string, count: number) => kube.bound('prod', `app=${app}`, count, zones, 90_000);
  const explain = async (pod: string) => (await fetch(`${cp.zonekeeper!.admin}/debug/explain?pod=prod/${pod}`)).json() as Promise<Obj>;

  it("a StatefulSet without constraints: 6 bound 2/2/2 in a, b, c; the control plane's zone-d and the GPU zone-f are not in its list", async () => {
    await kube.create(statefulSet('prod', 'plain', 6));
    assert.equal(zoneCounts((await bound('plain', 6)).values()), 'zone-a=2 zone-b=2 zone-c=2');
    assert.deepEqual((await kube.frozenZones('apps/v1', 'StatefulSet', 'prod', 'plain')).sort(), ['zone-a', 'zone-b', 'zone-c']);
    const e = await explain('plain-0');
    assert.deepEqual(e.zones.excluded, ['zone-d', 'zone-f']);
    assert.deepEqual(e.zones.growing, []);
    assert.equal(e.failed['control-plane-d-1'], 'taint: node has a taint the pod does not tolerate');
  });

  it('a StatefulSet on the tainted db pool (node selector + toleration): 4 bound 2/2 in a and b', async () => {
    await kube.create(statefulSet('prod', 'pooled', 4, DB_POOL));
    const placed = await bound('pooled', 4);
    assert.equal(zoneCounts(placed.values()), 'zone-a=2 zone-b=2');
    assert.deepEqual((await kube.frozenZones('apps/v1', 'StatefulSet', 'prod', 'pooled')).sort(), ['zone-a', 'zone-b']);
    const nodes = new Set((await kube.podsOf('prod', 'app=pooled')).map((p) => p.spec.nodeName));
    assert.deepEqual([...nodes].sort(), ['db-a-1', 'db-b-1']);
  });

  it('a StatefulSet restricted by required node affinity to zones a and b: 4 bound 2/2', async () => {
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ ...zoneTerm('zone-a').matchExpressions[0], values: ['zone-a', 'zone-b'] }] }] } } };
    await kube.create(statefulSet('prod', 'affine', 4, { affinity }));
    assert.equal(zoneCounts((await bound('affine', 4)).values()), 'zone-a=2 zone-b=2');
  });

  // The StatefulSet's default OrderedReady creation (the test stands in for the kubelets): with
  // Parallel, a pod pinned to the zone that would run a moment over maxSkew waits in
  // kube-scheduler's queue until the others bind; on 1.30 that wait once outlasted 90 s.
  it('a StatefulSet with its own zone spread constraint (nodeTaintsPolicy Honor): 6 bound 2/2/2, then 6 → 4 → 7 all bound', async () => {
    const topologySpreadConstraints = [{
      maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule',
      nodeTaintsPolicy: 'Honor', labelSelector: { matchLabels: { app: 'spread' } },
    }];
    const sts = statefulSet('prod', 'spread', 6, { topologySpreadConstraints });
    sts.spec.podManagementPolicy = 'OrderedReady';
    const stopKubelet = kube.kubelet('prod');
    try {
      await kube.create(sts);
      assert.equal(zoneCounts((await bound('spread', 6)).values()), 'zone-a=2 zone-b=2 zone-c=2');
      await kube.scale('StatefulSet', 'prod', 'spread', 4);
      await bound('spread', 4);
      await kube.scale('StatefulSet', 'prod', 'spread', 7);
      await bound('spread', 7);
    } finally {
      await stopKubelet();
    }
    const placed = await bound('spread', 7);
    // Every ordinal on its pin: ordinal i in L[i mod 3], so the list's first zone holds the seventh.
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', 'prod', 'spread');
    assert.equal(list.length, 3);
    for (const [pod, zone] of placed) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
  });

  it('a Deployment with preferences {"*": weight 1}: 2/2/2, and `zonekeeper audit` finds nothing at risk', async () => {
    const web = deployment('prod', 'web', 6);
    web.metadata.annotations = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) };
    await kube.create(web);
    assert.equal(zoneCounts((await bound('web', 6)).values()), 'zone-a=2 zone-b=2 zone-c=2');
    // Judged by zonekeeper's own (default) configuration: no zone is wanted that nothing can fill, the db pool's list of a and b leaves nothing out.
    const audit = spawnSync(process.execPath, [cli, 'audit', '--kubeconfig', cp.kubeconfig, '-n', 'prod', '-o', 'json', '--config', join(cp.dir, 'zonekeeper.yaml')], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
    const health = JSON.parse(audit.stdout).workloads as Obj[];
    assert.equal(health.length, 5);
    for (const h of health) assert.equal(h.atRisk, false, `${h.key}: ${h.reason}`);
    const webHealth = health.find((h) => h.key === 'prod/Deployment/web')!;
    assert.deepEqual([webHealth.zones, webHealth.wanted], [3, 3]);
  });

  it('a listed zone no node fits (zone-e, a node group scaled to zero): the pinned pod waits with a reason that says so, and an Event names the zone', async () => {
    await kube.create({ ...statefulSet('prod', 'listed', 4), metadata: { name: 'listed', namespace: 'prod', annotations: { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c,zone-e' } } });
    await eventually('three of listed bound', async () => (await kube.podsOf('prod', 'app=listed')).filter((p) => p.spec.nodeName).length === 3);
    const placed = new Map((await kube.podsOf('prod', 'app=listed')).map((p) => [p.metadata.name as string, p.spec.nodeName as string | undefined]));
    assert.equal(placed.get('listed-3'), undefined, 'listed-3 is pinned to zone-e');
    assert.equal([...placed.values()].filter(Boolean).length, 3);
    const e = await explain('listed-3');
    assert.match(e.summary, /^pinned: ordinal 3 → zone-e \(4 zones\): no node in zone-e fits/);
    assert.deepEqual(e.zones.unusable, ['zone-e']);
    const warned = await eventually('a NoEligibleNode Event on listed', async () =>
      (await kube.list('v1', 'Event', 'prod')).find((ev) => ev.reason === 'NoEligibleNode' && ev.involvedObject.name === 'listed'));
    assert.match(warned.message, /no node in zone-e fits/);
    // What `kubectl describe pod` shows: kube-scheduler's FailedScheduling, zonekeeper's reason counted in it.
    const failed = await eventually('a FailedScheduling Event on listed-3', async () =>
      (await kube.list('v1', 'Event', 'prod')).find((ev) => ev.reason === 'FailedScheduling' && ev.involvedObject.name === 'listed-3'));
    assert.match(failed.message, /6 pinned to zone-e: no node in zone-e fits the pod's node selector, affinity and tolerations/);
    console.log(`# FailedScheduling of listed-3: ${failed.message}`);
  });

  // Last: it replaces the zonekeeper the scheduler calls. An upgrade applied without its RBAC:
  // the shipped ClusterRole less its jobs rule.
  it('as the shipped ServiceAccount without the jobs rule: ready, pins work, a pod of a Job a WorkloadSpread targets waits naming the permission', async () => {
    const crd = v1alpha1WorkloadSpreadCrd();
    await kube.create(crd);
    const rbac = parseAllDocuments(readFileSync(new URL('../../manifests/base/10-rbac.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
    const role = rbac.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'zonekeeper');
    role.rules = role.rules.filter((r: Obj) => !r.resources.includes('jobs'));
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'zonekeeper-system' } });
    const zk = await cp.restartZonekeeperAs(rbac);
    const cache = await (await fetch(`${zk.admin}/debug/cache`)).json() as Obj;
    assert.match(cache.kinds.find((k: Obj) => k.kind === 'jobs').off, /^WorkloadSpreads that target Jobs are off: zonekeeper may not list batch\/jobs/);
    assert.match(await (await fetch(`${zk.admin}/metrics`)).text(), /zonekeeper_features_off\{kind="jobs"\} 1/);
    await kube.create(statefulSet('prod', 'after', 3));
    assert.equal(zoneCounts((await bound('after', 3)).values()), 'zone-a=1 zone-b=1 zone-c=1');
    await kube.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'batch', namespace: 'prod' },
      spec: { targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'batch' }, subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('zone-a'), maxReplicas: 1 }] },
    });
    const job = await kube.create({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch', namespace: 'prod' },
      spec: { parallelism: 1, template: { metadata: { labels: { app: 'batch' } }, spec: { schedulerName: SCHEDULER, restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    // No Job controller runs here: its pod, as that controller would create it.
    const pod = await kube.create({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'batch-x', namespace: 'prod', labels: { app: 'batch' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'batch', uid: job.metadata.uid, controller: true }] },
      spec: { schedulerName: SCHEDULER, restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const explained = await eventually('explain names the permission', async () => {
      const e = await (await fetch(`${zk.admin}/debug/explain?pod=prod/${pod.metadata.name}`)).json() as Obj;
      return /may not list batch\/jobs/.test(e.summary ?? '') && e;
    });
    assert.match(explained.summary, /Job prod\/batch is not in the cache yet: WorkloadSpreads that target Jobs are off: zonekeeper may not list batch\/jobs \(grant list and watch/);
    assert.equal((await kube.podsOf('prod', 'app=batch'))[0]!.spec.nodeName, undefined, 'it waits');
  });
});
