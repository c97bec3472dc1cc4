// End-to-end with OpenKruise's kinds: minimal CRDs for CloneSet and Advanced StatefulSet, and
// Kruise's own WorkloadSpread CRD of its master (v1beta1 stored), on a real kube-apiserver, pods created as Kruise's controllers would (owner references, the
// pod-index label, reserved ordinals skipped), placed by the real kube-scheduler through
// zonekeeper. Asserts where the API server says pods are bound and what it holds.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const SCHEDULER = 'zonekeeper';
const ASTS = 'apps.kruise.io/v1beta1';
const CLONESET = 'apps.kruise.io/v1alpha1';

const podSpec = { schedulerName: SCHEDULER, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }] };

function owned(owner: Obj, name: string, labels: Record<string, string>): Obj {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: owner.metadata.namespace, labels: { app: owner.metadata.name, ...labels },
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true,
        blockOwnerDeletion: true }],
    },
    spec: podSpec,
  };
}

/** What Kruise's StatefulSet controller creates: `replicas` ordinals from start, reserved ones skipped. */
function keptOrdinals(replicas: number, reserved: number[], start = 0): number[] {
  const out: number[] = [];
  for (let o = start; out.length < replicas; o++) if (!reserved.includes(o)) out.push(o);
  return out;
}

const astsPod = (sts: Obj, ordinal: number) => owned(sts, `${sts.metadata.name}-${ordinal}`, {
  'apps.kubernetes.io/pod-index': String(ordinal), 'statefulset.kubernetes.io/pod-name': `${sts.metadata.name}-${ordinal}`,
});
const clonePod = (cs: Obj, suffix: string) => owned(cs, `${cs.metadata.name}-${suffix}`, { 'apps.kruise.io/cloneset-instance-id': suffix });
const suffix = () => Math.random().toString(36).slice(2, 7);

const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });
const ordinalOf = (name: string) => Number(/-(\d+)$/.exec(name)![1]);
const count = (placed: Map<string, string>, zone: string) => [...placed.values()].filter((z) => z === zone).length;

for (const k of kubeVersions()) describe(`OpenKruise workloads with kube-scheduler ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const debug = async (path: string) => (await fetch(`${cp.zonekeeper!.admin}${path}`)).json() as Promise<any>;
  const namespace = (name: string) => kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

  before(async () => {
    await cp.up([{ name: SCHEDULER, extender: true }], { deletionCost: { enabled: true, intervalSeconds: 1 } });
    kube = new Kube(cp.api);
    for (const z of ZONES) for (const i of [1, 2]) await kube.addNode(`node-${z.slice(5)}-${i}`, z);
    zones = await kube.nodeZones();
    const crds = [
      ...parseAllDocuments(readFileSync(new URL('./kruise-crds.yaml', import.meta.url), 'utf8')).map((d) => d.toJS()),
      // OpenKruise's own WorkloadSpread CRD as its master ships it (v1beta1 stored, PR #2466); every request here is v1beta1.
      ...parseAllDocuments(readFileSync(new URL('./kruise-workloadspread-crd.yaml', import.meta.url), 'utf8')).map((d) => d.toJS()).filter(Boolean),
    ];
    for (const crd of crds) await kube.create(crd);
    await eventually('zonekeeper watches every OpenKruise kind', async () => {
      const kruise = (await debug('/debug/cache')).openKruise;
      return kruise.clonesets === CLONESET && kruise.advancedstatefulsets === ASTS && kruise.workloadspreads === 'apps.kruise.io/v1beta1';
    });
  });

  after(async () => {
    if (process.env.ZK_E2E_KEEP) console.log(`e2e logs kept in ${cp.dir}`);
    await cp.down(!!process.env.ZK_E2E_KEEP);
  });

  it(`[${k.version}] K1. Advanced StatefulSet: ordinal i in L[i mod 3] with ordinal 1 reserved; reserving 3 later moves no other pod`, async () => {
    await namespace('k1');
    const sts = await kube.create({ apiVersion: ASTS, kind: 'StatefulSet', metadata: { name: 'db', namespace: 'k1' }, spec: { replicas: 5, reserveOrdinals: [1], selector: { matchLabels: { app: 'db' } } } });
    for (const o of keptOrdinals(5, [1])) await kube.create(astsPod(sts, o));
    const placed = await kube.bound('k1', 'app=db', 5, zones);
    assert.deepEqual([...placed.keys()].map(ordinalOf).sort((a, b) => a - b), [0, 2, 3, 4, 5]);
    const list = await kube.frozenZones(ASTS, 'StatefulSet', 'k1', 'db');
    assert.deepEqual([...list].sort(), ZONES);
    for (const [pod, zone] of placed) assert.equal(zone, list[ordinalOf(pod) % 3], `${pod} in L[${ordinalOf(pod)} mod 3]`);
    const frozen = await eventually('a ZoneListFrozen event on the Advanced StatefulSet', async () =>
      (await kube.list('v1', 'Event', 'k1')).find((e) => e.reason === 'ZoneListFrozen' && e.involvedObject?.name === 'db'));
    assert.deepEqual([frozen.involvedObject.apiVersion, frozen.involvedObject.kind], [ASTS, 'StatefulSet']);

    // The user reserves ordinal 3 as well: Kruise deletes db-3 and creates db-6.
    await kube.patch(ASTS, 'StatefulSet', 'k1', 'db', { spec: { reserveOrdinals: [1, 3] } });
    await kube.delete('v1', 'Pod', 'k1', 'db-3', 0);
    await kube.create(astsPod(sts, 6));
    const after = await kube.bound('k1', 'app=db', 5, zones);
    assert.equal(after.get('db-6'), list[0]);
    for (const [pod, zone] of after) if (placed.has(pod)) assert.equal(zone, placed.get(pod), `${pod} kept its zone`);
    // zonekeeper's watch cache may lag the API's answer that the pods are bound: until it shows the same.
    const layout = await eventually('zonekeeper\'s cache: no ordinal missing', async () => {
      const l = await debug('/debug/workloads/k1/asts/db');
      return l.ordinals?.missing?.length === 0 && l;
    });
    assert.deepEqual(layout.ordinals, { start: 0, reserved: ['1', '3'], missing: [] });
    // What the layout page draws, from the watch cache of a real API server.
    const page = await eventually('the layout page: every pod in its pinned zone', async () => {
      const p = await debug('/debug/layouts?namespace=k1');
      return p.workloads?.[0]?.pods?.every((x: Obj) => x.decidedBy === 'pin' && x.zone === x.pinnedZone) && p;
    });
    assert.deepEqual(page.workloads.map((w: Obj) => `${w.workload.kind}/${w.workload.name}`), ['AdvancedStatefulSet/db']);
  });

  it(`[${k.version}] K2. Advanced StatefulSet with ordinals.start 3: ordinals 3, 4, 5 take the three zones in list order`, async () => {
    await namespace('k2');
    const sts = await kube.create({ apiVersion: ASTS, kind: 'StatefulSet', metadata: { name: 'shard', namespace: 'k2' }, spec: { replicas: 3, ordinals: { start: 3 }, selector: { matchLabels: { app: 'shard' } } } });
    for (const o of keptOrdinals(3, [], 3)) await kube.create(astsPod(sts, o));
    const placed = await kube.bound('k2', 'app=shard', 3, zones);
    const list = await kube.frozenZones(ASTS, 'StatefulSet', 'k2', 'shard');
    for (const [pod, zone] of placed) assert.equal(zone, list[(ordinalOf(pod) - 3) % 3], pod);
  });

  it(`[${k.version}] K3. CloneSet with a WorkloadSpread: subset a at 40% holds 2 of 5, then 4 of 10; Kruise's deletion costs on its pods`, async () => {
    await namespace('k3');
    await kube.create({
      apiVersion: 'apps.kruise.io/v1beta1', kind: 'WorkloadSpread', metadata: { name: 'ws', namespace: 'k3' },
      spec: {
        targetRef: { apiVersion: CLONESET, kind: 'CloneSet', name: 'web' }, scheduleStrategy: { type: 'Fixed' },
        subsets: [{ name: 'a', maxReplicas: '40%', requiredNodeSelector: zoneTerm('zone-a') }, { name: 'b', requiredNodeSelector: zoneTerm('zone-b') }],
      },
    });
    const cs = await kube.create({ apiVersion: CLONESET, kind: 'CloneSet', metadata: { name: 'web', namespace: 'k3' }, spec: { replicas: 5, selector: { matchLabels: { app: 'web' } } } });
    await eventually('zonekeeper caches the CloneSet and its WorkloadSpread', async () => (await debug('/debug/workloads/k3/cloneset/web')).policy === 'workloadspread');
    for (let i = 0; i < 5; i++) await kube.create(clonePod(cs, suffix()));
    const five = await kube.bound('k3', 'app=web', 5, zones);
    assert.deepEqual([count(five, 'zone-a'), count(five, 'zone-b'), count(five, 'zone-c')], [2, 3, 0]);

    await kube.patch(CLONESET, 'CloneSet', 'k3', 'web', { spec: { replicas: 10 } });
    await eventually('zonekeeper sees 10 replicas', async () => (await debug('/debug/workloads/k3/cloneset/web')).workload.replicas === 10);
    for (let i = 0; i < 5; i++) await kube.create(clonePod(cs, suffix()));
    const ten = await kube.bound('k3', 'app=web', 10, zones);
    assert.deepEqual([count(ten, 'zone-a'), count(ten, 'zone-b'), count(ten, 'zone-c')], [4, 6, 0]);

    const cost = (p: Obj) => p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'];
    const want = (p: Obj) => (zones.get(p.spec.nodeName) === 'zone-a' ? '200' : '100');
    // Until each pod's cost is its subset's: a pod created Pending (no admission here) is in no subset until it
    // binds, and its cost then (−300) is rewritten on the controller's next pass (CI once read it in between).
    const costs = async () => (await kube.podsOf('k3', 'app=web')).map((p) => `${p.metadata.name} ${cost(p)} want ${want(p)}`);
    await eventually('Kruise\'s deletion costs on the 10 CloneSet pods: 200 in zone-a, 100 in zone-b', async () => {
      const all = await kube.podsOf('k3', 'app=web');
      return all.length === 10 && all.every((p) => cost(p) === want(p));
    }).catch(async (e) => assert.fail(`${e.message}: ${(await costs()).join(', ')}`));
  });

  it(`[${k.version}] K4. CloneSet with instance IDs: 3 pods take IDs 0..2 and the three zones`, async () => {
    await namespace('k4');
    const cs = await kube.create({
      apiVersion: CLONESET, kind: 'CloneSet', metadata: { name: 'ids', namespace: 'k4', annotations: { 'zonekeeper.io/instance-ids': 'true' } },
      spec: { replicas: 3, selector: { matchLabels: { app: 'ids' } } },
    });
    await eventually('zonekeeper caches the CloneSet', async () => (await debug('/debug/workloads/k4/cloneset/ids')).policy === 'zone-pin');
    for (let i = 0; i < 3; i++) await kube.create(clonePod(cs, suffix()));
    const placed = await kube.bound('k4', 'app=ids', 3, zones);
    assert.deepEqual([...placed.values()].sort(), ZONES);
    const pods = await kube.podsOf('k4', 'app=ids');
    assert.deepEqual(pods.map((p) => p.metadata.annotations?.['zonekeeper.io/instance-id']).sort(), ['0', '1', '2']);
    const assignment = JSON.parse((await kube.get(CLONESET, 'CloneSet', 'k4', 'ids')).metadata.annotations['zonekeeper.io/instance-assignment']);
    assert.deepEqual(Object.keys(assignment).sort(), ['0', '1', '2']);
  });

  // A second zonekeeper with only what manifests/base/10-rbac.yaml grants its ServiceAccount.
  // Revoking a rule takes effect when a watch reconnects (every 2 s here); before, the kind's
  // failing watch made the whole cache stale after maxStalenessSeconds: /readyz 503, and every
  // filter answered Error.
  it(`[${k.version}] K5. zonekeeper as the shipped ServiceAccount is ready; with its CloneSet rule revoked it stays ready past its staleness limit (CloneSets forbidden, their objects dropped), and watches them again once the rule is back`, async () => {
    await namespace('k5');
    await kube.create({ apiVersion: CLONESET, kind: 'CloneSet', metadata: { name: 'web', namespace: 'k5' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } } } });
    const rbac = new URL('../../manifests/base/10-rbac.yaml', import.meta.url).pathname;
    await namespace('zonekeeper-system');
    cp.kubectl(['apply', '-f', rbac]);
    const zk = await cp.startReplica('zonekeeper-sa', {
      cluster: { watchTimeoutSeconds: 2, maxStalenessSeconds: 3, crdRecheckSeconds: 4 }, leaderElection: { namespace: 'zonekeeper-system' },
    }, await cp.serviceAccountKubeconfig('zonekeeper-system', 'zonekeeper'));
    try {
      const cache = async () => (await fetch(`${zk.admin}/debug/cache`)).json() as Promise<Obj>;
      const cloneSets = async () => (await cache()).kinds.find((x: Obj) => x.kind === 'clonesets')?.objects ?? 0;
      await eventually('the ServiceAccount zonekeeper watches CloneSets', async () => (await cache()).openKruise.clonesets === CLONESET && (await cloneSets()) >= 1);
      const role = await kube.call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/zonekeeper');
      role.rules = role.rules.map((r: Obj) => (r.resources.includes('clonesets') ? { ...r, resources: r.resources.filter((x: string) => x !== 'clonesets') } : r));
      await kube.call('PUT', '/apis/rbac.authorization.k8s.io/v1/clusterroles/zonekeeper', role);
      await eventually('CloneSets forbidden', async () => (await cache()).openKruise.clonesets === 'forbidden', 30_000);
      // Past maxStalenessSeconds (3 s) from the first refusal.
      await new Promise((r) => setTimeout(r, 4000));
      assert.equal((await fetch(`${zk.admin}/readyz`)).status, 200);
      await eventually("the forbidden kind's objects dropped", async () => (await cloneSets()) === 0, 30_000);
      assert.equal((await fetch(`${zk.admin}/readyz`)).status, 200);
      cp.kubectl(['apply', '-f', rbac]);
      await eventually('CloneSets watched again', async () => (await cache()).openKruise.clonesets === CLONESET && (await cloneSets()) >= 1, 30_000);
      assert.equal((await fetch(`${zk.admin}/readyz`)).status, 200);
    } finally {
      await zk.stop();
    }
  });
});
