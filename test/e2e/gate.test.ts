// End-to-end: the zone gate with the cluster's default kube-scheduler alone, no extender
// configured (docs/design.md#the-zone-gate). zonekeeper decides each gated pod's zone and writes
// it into the pod's spec; the default scheduler, reading only the spec, must honour every pin.
// zonekeeper runs as the gate-only overlay's ServiceAccount, with that overlay's RBAC and the
// ValidatingAdmissionPolicy that limits its writes to the fields it owns.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { kubeApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { addPools, assertIdsOnList, assertOnPins, PRODUCTION_POOLS, preBoundVolume, statefulSet as sharedStatefulSet, tearDown, zoneCounts } from './workloads.js';
import { v1alpha1WorkloadSpreadCrd } from './workloadSpreadCrd.js';

const GATE = { schedulingGates: [{ name: 'zonekeeper.io/zone' }] };
const OVERLAY = new URL('../../manifests/overlays/gate-only', import.meta.url).pathname;
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
// zoneFallback adaptive, short: a pod lifted into a zone where it is not scheduled is evicted after 3 s.
const CONFIG = { placement: { zoneFallback: 'adaptive', fallbackAfterSeconds: 3 }, gate: { intervalSeconds: 1 }, cluster: { crdRecheckSeconds: 2 } };
const ZONE = 'topology.kubernetes.io/zone';
const container = { name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } };

/** A gated StatefulSet for the default scheduler (no schedulerName). */
const statefulSet = (namespace: string, name: string, replicas: number, extra: Obj = {}) =>
  sharedStatefulSet(namespace, name, replicas, { ...GATE, ...extra.podSpec }, extra.spec);

function deployment(namespace: string, name: string, replicas: number, annotations: Record<string, string> = {}, gated = true): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace, annotations },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { ...(gated ? GATE : {}), terminationGracePeriodSeconds: 0, containers: [container] } },
    },
  };
}

for (const k of kubeVersions()) describe(`[${k.version}] the zone gate with the default scheduler and no extender`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const NS = 'gated';

  before(async () => {
    await cp.up([{ name: 'default-scheduler', extender: false }], CONFIG);
    kube = new Kube(cp.api);
    // zonekeeper as the gate-only overlay's ServiceAccount, with that overlay's RBAC and no more.
    const rbac = parseAllDocuments(cp.kubectl(['kustomize', OVERLAY])).map((d) => d.toJS()).filter((o) => RBAC_KINDS.has(o.kind));
    await cp.restartZonekeeperAs(rbac, CONFIG);
    zones = await addPools(kube, PRODUCTION_POOLS);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(() => tearDown(cp));

  const bound = (app: string, count: number) => kube.bound(NS, `app=${app}`, count, zones, 90_000);
  const pods = (app: string) => kube.podsOf(NS, `app=${app}`);

  it("the overlay's RBAC lets zonekeeper watch Cluster Autoscaler's status ConfigMap (resourceNames and the metadata.name field selector), none here", async () => {
    const cache = await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj;
    const status = cache.kinds.find((k: Obj) => k.kind === 'autoscalerstatus');
    assert.deepEqual([status.synced, status.lastErrorStatus, status.off, cache.clusterAutoscaler], [true, 0, undefined, null], JSON.stringify(status));
  });

  it('a gated StatefulSet: every ordinal on its pin (ordinal i in L[i mod 3]), the zone written into its nodeSelector and the gate gone', async () => {
    await kube.create(statefulSet(NS, 'db', 6));
    await assertOnPins(kube, NS, 'db', await bound('db', 6));
  });

  it('a bound volume decides before the pin: every pod with its PV in zone-c lands in zone-c', async () => {
    for (const i of [0, 1, 2]) await kube.create(preBoundVolume(NS, `data-vol-${i}`, 'zone-c'));
    await kube.create(statefulSet(NS, 'vol', 3, {
      podSpec: { containers: [{ ...container, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
      spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } }] },
    }));
    assert.equal(zoneCounts((await bound('vol', 3)).values()), 'zone-c=3');
    for (const p of await pods('vol')) assert.equal(p.spec.nodeSelector?.[ZONE], 'zone-c');
  });

  it('a Deployment with zone preferences: 2/2/2; with instance IDs: each ID in its zone of the list', async () => {
    await kube.create(deployment(NS, 'web', 6, { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) }));
    assert.equal(zoneCounts((await bound('web', 6)).values()), 'zone-a=2 zone-b=2 zone-c=2');
    await kube.create(deployment(NS, 'ids', 6, { 'zonekeeper.io/instance-ids': 'true' }));
    await assertIdsOnList(kube, NS, 'ids', await bound('ids', 6), 6);
  });

  it("a gated Deployment under a WorkloadSpread (zonekeeper's CRD): each pod gets its subset's required term, its preferred terms and Kruise's annotation, and the API server takes them", async () => {
    const crd = v1alpha1WorkloadSpreadCrd();
    await kube.create(crd);
    cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/workloadspreads.apps.kruise.io']);
    const preferred = [{ weight: 10, preference: { matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] } }];
    await kube.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'spread', namespace: NS },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'spread' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] }, preferredNodeSelectorTerms: preferred, maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] } },
        ],
      },
    });
    await eventually('zonekeeper watches the WorkloadSpread', async () => {
      const cache = await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj;
      return cache.kinds.find((c: Obj) => c.kind === 'workloadspreads')?.objects === 1;
    }, 60_000, 500);
    await kube.create(deployment(NS, 'spread', 3));
    assert.equal(zoneCounts((await bound('spread', 3)).values()), 'zone-a=2 zone-b=1');
    for (const p of await pods('spread')) {
      const subset = JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']).subset;
      const prefs = p.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution;
      assert.deepEqual(prefs ?? [], subset === 'a' ? preferred : [], `${p.metadata.name} in subset ${subset}`);
    }
  });

  it('a gated pod no policy covers is lifted unchanged and says so; one no zone may take stays gated with its reason', async () => {
    await kube.create(deployment(NS, 'plain', 1));
    await bound('plain', 1);
    const [plain] = await pods('plain');
    assert.equal(plain!.spec.nodeSelector, undefined);
    const lifted = await eventually('a ZoneGateLifted Event', async () => (await kube.list('v1', 'Event', NS)).find((e) => e.reason === 'ZoneGateLifted' && e.involvedObject.name === plain!.metadata.name));
    assert.match(lifted.message, /without a zone: not managed/);
    // zone-a takes one pod, every other zone none: the second pod waits, gated.
    await kube.create(deployment(NS, 'capped', 2, { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { 'zone-a': { weight: 1, maxReplicas: 1 } } }) }));
    await eventually('one capped pod bound, one gated', async () => {
      const now = await pods('capped');
      return now.length === 2 && now.filter((p) => p.spec.nodeName).length === 1;
    });
    const capped = await pods('capped');
    const gated = capped.filter((p) => p.spec.schedulingGates?.length);
    assert.equal(gated.length, 1, 'one pod still gated');
    assert.equal(capped.filter((p) => p.spec.nodeName).map((p) => zones.get(p.spec.nodeName)).join(), 'zone-a');
    const waiting = await eventually('a ZoneGateWaiting Event', async () => (await kube.list('v1', 'Event', NS)).find((e) => e.reason === 'ZoneGateWaiting' && e.involvedObject.name === gated[0]!.metadata.name));
    assert.match(waiting.message, /every zone is at its limit/);
  });

  it('zoneFallback adaptive: a pod pinned to a listed zone where nothing schedules it is evicted after its time, and its successor goes to the next zone', async () => {
    await kube.create({ ...statefulSet(NS, 'fb', 1), metadata: { name: 'fb', namespace: NS, annotations: { 'zonekeeper.io/zones': 'zone-e,zone-b,zone-a' } } });
    const first = await eventually('fb-0 lifted into zone-e', async () => {
      const [p] = await pods('fb');
      return p?.spec.nodeSelector?.[ZONE] === 'zone-e' && p;
    });
    const placed = await bound('fb', 1);
    assert.equal(placed.get('fb-0'), 'zone-b');
    const [now] = await pods('fb');
    assert.notEqual(now!.metadata.uid, first.metadata.uid, 'a new pod');
    assert.equal(now!.spec.nodeSelector?.[ZONE], 'zone-b');
    const fell = await eventually('a ZoneFallback Event', async () => (await kube.list('v1', 'Event', NS)).find((e) => e.reason === 'ZoneFallback' && e.involvedObject.name === 'fb'));
    assert.match(fell.message, /fb-0 was not scheduled in zone-e within 3s: evicted; its successor skips zone-e/);
  });

  it("zonekeeper's ServiceAccount, as a compromised zonekeeper would use it, may not change a pod's image, toleration or label, nor a workload's spec; its own annotations it may", async () => {
    const asZonekeeper = new Kube(kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: await cp.serviceAccountKubeconfig('zonekeeper-system', 'zonekeeper') })));
    const [pod] = await pods('db');
    const name = pod!.metadata.name;
    const jsonPatch = (kind: string, target: string, ops: Obj[]) => asZonekeeper.call('PATCH', `${kind === 'Pod' ? `/api/v1/namespaces/${NS}/pods` : `/apis/apps/v1/namespaces/${NS}/statefulsets`}/${target}`, ops, 'application/json-patch+json');
    const refused = async (what: string, write: () => Promise<unknown>) =>
      assert.rejects(write, (err: Error) => /: 403 [\s\S]*zonekeeper-write-scope/.test(err.message), what);
    await refused('an image', () => jsonPatch('Pod', name, [{ op: 'replace', path: '/spec/containers/0/image', value: 'attacker/payload' }]));
    await refused('a toleration', () => jsonPatch('Pod', name, [{ op: 'add', path: '/spec/tolerations/-', value: { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' } }]));
    await refused('a label', () => asZonekeeper.patch('v1', 'Pod', NS, name, { metadata: { labels: { role: 'db-client' } } }));
    await refused("another's annotation", () => asZonekeeper.patch('v1', 'Pod', NS, name, { metadata: { annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' } } }));
    await refused("a StatefulSet's template", () => jsonPatch('StatefulSet', 'db', [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'attacker/payload' }]));
    // Its certificate's Secret by name, as a ServiceAccount token (granted create, as the managed overlay grants it).
    const ZK = 'zonekeeper-system';
    await kube.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'e2e-secret-create', namespace: ZK }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['create'] }] });
    await kube.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'e2e-secret-create', namespace: ZK },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-secret-create' }, subjects: [{ kind: 'ServiceAccount', name: 'zonekeeper', namespace: ZK }] });
    const tokenSecret = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token',
      metadata: { name: 'zonekeeper-webhook-tls', namespace: ZK, annotations: { 'kubernetes.io/service-account.name': 'zonekeeper-kube-scheduler' } } };
    const typed = await eventually('the token Secret refused by the policy (once the Role applies)', () => asZonekeeper.create(tokenSecret)
      .then(() => 'created', (err: Error) => (/zonekeeper-write-scope/.test(err.message) ? err.message : undefined)));
    assert.match(typed, /: 403 [\s\S]*denied request: zonekeeper may write its webhook's certificate Secret only/, 'its name and namespace are right: its type is refused');
    const stored = await asZonekeeper.patch('v1', 'Pod', NS, name, { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '7' } } });
    assert.equal(stored.metadata.annotations['controller.kubernetes.io/pod-deletion-cost'], '7');
    assert.equal(stored.spec.containers[0].image, pod!.spec.containers[0].image);
    await asZonekeeper.patch('apps/v1', 'StatefulSet', NS, 'db', { metadata: { annotations: { 'zonekeeper.io/e2e-probe': 'written' } } });
  });
});
