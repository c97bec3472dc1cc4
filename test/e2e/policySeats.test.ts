// End-to-end: the seats the policy transport publishes beyond a plain StatefulSet
// (docs/design.md#the-policy), Kubernetes 1.36+ only: a StatefulSet whose claims bind
// WaitForFirstConsumer (the pin of an ordinal with no bound claim is certain, a bound claim
// elsewhere is an exception), and an Advanced StatefulSet (apps.kruise.io; no Kruise controller
// runs: its pods are created as Kruise creates them). The real kube-apiserver applies the shipped
// MutatingAdmissionPolicy; no webhook is configured, so every zone written here is the policy's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, pathOf, type Obj } from './kube.js';
import { statefulSet, tearDown, ZONES, zoneCounts, zoneTerm } from './workloads.js';

const ZONE = 'topology.kubernetes.io/zone';
const NS = 'seated';
const MARK = 'zonekeeper.io/decided-by';
const ASTS = 'apps.kruise.io/v1beta1';
const CLASS = 'local-wffc';
const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };

/** A local PV of the WaitForFirstConsumer class in `zone`; pre-bound to `claim` when given. */
const localVolume = (name: string, zone: string, claim?: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: {
    capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: CLASS, persistentVolumeReclaimPolicy: 'Retain',
    ...(claim ? { claimRef: { namespace: NS, name: claim } } : {}), local: { path: '/mnt/data' },
    nodeAffinity: { required: { nodeSelectorTerms: [zoneTerm(zone)] } },
  },
});

const versions = kubeVersions().filter((k) => k.minor >= 36);
for (const k of versions) describe(`[${k.version}] the policy: seats of WaitForFirstConsumer claims and of Advanced StatefulSets`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;

  before(async () => {
    await cp.up([{ name: 'default-scheduler', extender: false }], { policy: { seatTable: true } });
    kube = new Kube(cp.api);
    for (const z of ZONES) await kube.addNode(`node-${z.slice(5)}-1`, z);
    zones = await kube.nodeZones();
    cp.kubectl(['apply', '-f', new URL('../../manifests/components/policy/policy.yaml', import.meta.url).pathname]);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'zonekeeper.io/admission': 'enabled' } } });
  });
  after(() => tearDown(cp));

  const table = async (): Promise<Record<string, string>> =>
    (await kube.call('GET', pathOf('v1', 'ConfigMap', NS, 'zonekeeper-seats')).catch(() => ({ data: {} }))).data ?? {};
  /** The zone the policy writes into a dry-run create of the owner's pod `ordinal` (with or without the pod-index label); undefined: unmarked. */
  const policyZone = async (owner: Obj, ordinal: number, labelled = true): Promise<string | undefined> => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: `${owner.metadata.name}-${ordinal}`, namespace: NS,
        labels: { 'statefulset.kubernetes.io/pod-name': `${owner.metadata.name}-${ordinal}`, ...(labelled ? { 'apps.kubernetes.io/pod-index': String(ordinal) } : {}) },
        ownerReferences: [{ apiVersion: owner.apiVersion, kind: 'StatefulSet', name: owner.metadata.name, uid: owner.metadata.uid, controller: true }],
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const res = await kube.call('POST', `${pathOf('v1', 'Pod', NS)}?dryRun=All`, pod);
    return res.metadata.labels?.[MARK] === 'policy' ? res.spec.nodeSelector?.[ZONE] : undefined;
  };

  it('claims of the default class, WaitForFirstConsumer: new ordinals get their pins from the policy, bound volumes elsewhere (far past replicas too) their zones, and the pods land there', async () => {
    await kube.create({
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer',
      metadata: { name: CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    });
    // Ordinal 0 pins to zone-a, its volume is in zone-c; ordinal 151 (a claim a scale-down kept) pins to zone-b, its volume is in zone-a.
    await kube.create(localVolume('wf-0', 'zone-c', 'data-wf-0'));
    await kube.create(localVolume('wf-151', 'zone-a', 'data-wf-151'));
    // Free volumes for ordinals 1 and 2, in every zone: the binder takes the one where the pod goes.
    for (const z of ZONES) for (const i of [1, 2]) await kube.create(localVolume(`free-${z.slice(5)}-${i}`, z));
    const sts = await kube.create({
      ...statefulSet(NS, 'wf', 0, { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } }, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] }, {
        // No storageClassName: the claims get the cluster's default class.
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      }),
      metadata: { name: 'wf', namespace: NS, annotations: frozen },
    });
    const uid = sts.metadata.uid as string;
    await eventually('the seat table holds wf as rr with its two exceptions', async () => {
      const t = await table();
      return t[uid] === `rr;${ZONE};0;${ZONES.join(',')}` && t[`${uid}.0`] === 'zone-c' && t[`${uid}.151`] === 'zone-a';
    }, 60_000, 250);
    await eventually('the policy applies wf\'s table', async () => (await policyZone(sts, 1)) === 'zone-b', 60_000, 500);
    assert.deepEqual(await Promise.all([0, 1, 2, 4, 151, 152].map((o) => policyZone(sts, o))), ['zone-c', 'zone-b', 'zone-c', 'zone-b', 'zone-a', 'zone-c']);
    await kube.patch('apps/v1', 'StatefulSet', NS, 'wf', { spec: { replicas: 3 } });
    const placed = await kube.bound(NS, 'app=wf', 3, zones, 90_000);
    assert.deepEqual([0, 1, 2].map((o) => placed.get(`wf-${o}`)), ['zone-c', 'zone-b', 'zone-c']);
    for (const p of await kube.podsOf(NS, 'app=wf')) assert.equal(p.metadata.labels?.[MARK], 'policy', p.metadata.name);
  });

  it('an Advanced StatefulSet with reserved ordinals: its entry published, its pods (pod-index label or not) written on their pins', async () => {
    for (const crd of parseAllDocuments(readFileSync(new URL('./kruise-crds.yaml', import.meta.url), 'utf8')).map((d) => d.toJS())) await kube.create(crd);
    await eventually('zonekeeper watches Advanced StatefulSets', async () =>
      (await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj).openKruise?.advancedstatefulsets === ASTS, 60_000, 500);
    const asts = await kube.create({
      apiVersion: ASTS, kind: 'StatefulSet', metadata: { name: 'adb', namespace: NS, annotations: frozen },
      spec: { replicas: 3, reserveOrdinals: [1], selector: { matchLabels: { app: 'adb' } } },
    });
    await eventually('the seat table holds adb', async () => (await table())[asts.metadata.uid] === `rr;${ZONE};0;${ZONES.join(',')}`, 60_000, 250);
    await eventually('the policy applies adb\'s table', async () => (await policyZone(asts, 0)) === 'zone-a', 60_000, 500);
    // Kruise sets the pod-index label only from 1.7 (PodIndexLabel gate): without it the name says the ordinal.
    assert.deepEqual(await Promise.all([[2, true], [3, false], [4, false], [7, true]].map(([o, l]) => policyZone(asts, o as number, l as boolean))),
      ['zone-c', 'zone-a', 'zone-b', 'zone-b']);
    // Its pods created as Kruise (< 1.7) creates them (the pod-name label, no pod-index): the policy writes their zones, the default scheduler follows.
    for (const o of [0, 2, 3]) {
      await kube.create({
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name: `adb-${o}`, namespace: NS, labels: { app: 'adb', 'statefulset.kubernetes.io/pod-name': `adb-${o}` }, ownerReferences: [{ apiVersion: ASTS, kind: 'StatefulSet', name: 'adb', uid: asts.metadata.uid, controller: true }] },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }] },
      });
    }
    const placed = await kube.bound(NS, 'app=adb', 3, zones, 90_000);
    assert.equal(zoneCounts(placed.values()), 'zone-a=2 zone-c=1');
    assert.deepEqual([0, 2, 3].map((o) => placed.get(`adb-${o}`)), ['zone-a', 'zone-c', 'zone-a']);
    for (const p of await kube.podsOf(NS, 'app=adb')) assert.equal(p.metadata.labels?.[MARK], 'policy', p.metadata.name);
  });
});
