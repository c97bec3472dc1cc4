// End-to-end: admission (docs/design.md#admission). kube-apiserver calls zonekeeper's mutating
// webhook over TLS for every pod CREATE in a labelled namespace; no pod template carries a gate.
// The default scheduler alone places the pods, from what admission wrote into them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { admissionConfig, admissionReady, caBundle, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, freePort, kubeVersions } from './controlPlane.js';
import { eventually, Kube, pathOf, type Obj } from './kube.js';
import { addPools, assertIdsOnList, assertOnPins, preBoundVolume, PRODUCTION_POOLS, statefulSet, tearDown, zoneCounts } from './workloads.js';
import { v1alpha1WorkloadSpreadCrd } from './workloadSpreadCrd.js';

const ZONE = 'topology.kubernetes.io/zone';
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NS = 'admitted';
const SECRET = 'zonekeeper-system/zonekeeper-webhook-tls';
const OVERLAY = new URL('../../manifests/overlays/managed', import.meta.url).pathname;
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
const OTHER = 'elsewhere';
const container = { name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } };

function deployment(name: string, replicas: number, annotations: Record<string, string>): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS, annotations },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 0, containers: [container] } },
    },
  };
}

for (const k of kubeVersions()) describe(`[${k.version}] admission: the zone written into the pod as it is created`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  let config: Obj;
  let admissionPort: number;
  let rbac: Obj[];

  before(async () => {
    const { port, admission } = await admissionConfig(SECRET);
    admissionPort = port;
    config = { admission, gate: { intervalSeconds: 1 }, workloadSpread: { writeStatus: true }, leaderElection: { namespace: 'zonekeeper-system' } };
    await cp.up([{ name: 'default-scheduler', extender: false }], config);
    kube = new Kube(cp.api);
    // zonekeeper as the managed overlay's ServiceAccount, with that overlay's RBAC and no more (the Secret, the caBundle).
    rbac = parseAllDocuments(cp.kubectl(['kustomize', OVERLAY])).map((d) => d.toJS()).filter((o) => RBAC_KINDS.has(o.kind));
    await cp.restartZonekeeperAs(rbac, config);
    zones = await addPools(kube, PRODUCTION_POOLS);
    await kube.create(v1alpha1WorkloadSpreadCrd());
    cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/workloadspreads.apps.kruise.io']);
    await kube.create(webhookConfiguration(port));
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'zonekeeper.io/admission': 'enabled' } } });
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OTHER } });
    // Until it holds the Lease, a replica leaves every decision to the keeper (the gate); the holder writes the caBundle.
    await admissionReady(kube, cp.zonekeeper!.admin);
  });
  after(() => tearDown(cp));

  const secretCa = async () => (await kube.get('v1', 'Secret', 'zonekeeper-system', 'zonekeeper-webhook-tls').catch(() => undefined))?.data['ca.crt'] as string | undefined;
  const bound = (app: string, count: number) => kube.bound(NS, `app=${app}`, count, zones, 90_000);
  const pods = (app: string) => kube.podsOf(NS, `app=${app}`);
  /** Until a replica's cache holds every WorkloadSpread the API server has. */
  const watchingEveryWorkloadSpread = (admin: string) => eventually(`${admin} watches every WorkloadSpread`, async () => {
    const cache = await (await fetch(`${admin}/debug/cache`)).json() as Obj;
    const cached = cache.kinds.find((c: Obj) => c.kind === 'workloadspreads')?.objects;
    return cached === (await kube.list('apps.kruise.io/v1alpha1', 'WorkloadSpread')).length;
  }, 60_000, 500);
  const metric = async (labels: string) => {
    const text = await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('zonekeeper_decisions_total{') && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('a StatefulSet with no gate in its template: each ordinal on its pin, written at creation; the pods never carried a gate', async () => {
    await kube.create(statefulSet(NS, 'db', 6));
    await assertOnPins(kube, NS, 'db', await bound('db', 6));
    assert.ok(await metric('verb="admission",outcome="admitted"') >= 6, 'decided at admission, not by the keeper');
  });

  it('a Deployment with zone preferences (a shared count): the holder decides each pod at creation, 2/2/2, no gate', async () => {
    const [admitted, gated] = [await metric('verb="admission",outcome="admitted"'), await metric('verb="admission",outcome="gate"')];
    await kube.create(deployment('web', 6, { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) }));
    assert.equal(zoneCounts((await bound('web', 6)).values()), 'zone-a=2 zone-b=2 zone-c=2');
    assert.ok(await metric('verb="admission",outcome="admitted"') - admitted >= 6, 'decided at admission');
    assert.equal(await metric('verb="admission",outcome="gate"'), gated, 'none left to the keeper');
    for (const p of await pods('web')) assert.ok(ZONES.includes(p.spec.nodeSelector?.[ZONE]), `${p.metadata.name} carries its zone`);
  });

  it("a WorkloadSpread (zonekeeper's CRD) with a quota and per-subset patches: subsets 2/1, each pod with its subset's labels and CPU limit", async () => {
    const patch = (arch: string, cpu: string) => ({ metadata: { labels: { 'resource.cpu/arch': arch } }, spec: { containers: [{ name: 'c', resources: { limits: { cpu } } }] } });
    await kube.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'arch', namespace: NS },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'arch' },
        subsets: [
          { name: 'x86', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] }, maxReplicas: 2, patch: patch('x86', '500m') },
          { name: 'arm', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] }, patch: patch('arm', '300m') },
        ],
      },
    });
    await watchingEveryWorkloadSpread(cp.zonekeeper!.admin);
    await kube.create(deployment('arch', 3, {}));
    assert.equal(zoneCounts((await bound('arch', 3)).values()), 'zone-a=2 zone-b=1');
    for (const p of await pods('arch')) {
      const subset = JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']).subset as string;
      assert.equal(p.metadata.labels['resource.cpu/arch'], subset, p.metadata.name);
      assert.equal(p.spec.containers[0].resources.limits.cpu, subset === 'x86' ? '500m' : '300m', p.metadata.name);
      assert.equal(p.spec.containers[0].resources.requests.cpu, '10m', 'the template\'s own requests stay');
    }
  });

  it("the managed overlay's ServiceAccount writes that WorkloadSpread's status (workloadSpread.writeStatus): its subsets counted, no write refused", async () => {
    const writes = async (result: string) => {
      const text = await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text();
      return Number(text.split('\n').find((l) => l.startsWith('zonekeeper_actuator_writes_total{') && l.includes('action="workloadspread-status"') && l.includes(`result="${result}"`))?.split(' ').pop() ?? 0);
    };
    // The status counting the pods, not only one written for this generation: a write before they bound matches that too.
    const counted = (st: Obj | undefined) =>
      JSON.stringify(Object.fromEntries((st?.subsetStatuses ?? []).map((x: Obj) => [x.name, [x.replicas, x.missingReplicas]])));
    let last = '';
    await eventually('the status of WorkloadSpread arch, written for its generation, counting its pods', async () => {
      const ws = await kube.get('apps.kruise.io/v1alpha1', 'WorkloadSpread', NS, 'arch');
      last = counted(ws.status);
      return ws.status?.observedGeneration === ws.metadata.generation && last === JSON.stringify({ x86: [2, 0], arm: [1, -1] });
    }, 60_000, 500).catch((e: Error) => assert.fail(`${e.message}: ${last}`));
    // zonekeeper counts its write once the answer is back: the status can show a moment before.
    await eventually('the status write counted', async () => await writes('ok') >= 1, 10_000);
    assert.equal(await writes('error'), 0, 'no status write refused (403 before the managed overlay granted workloadspreads/status)');
  });

  it("a pod the gate decides after its creation (its namespace has no admission): its subset patch's labels and image not written with zonekeeper's rights (admission only), named on the pod, in Events and by zonekeeper audit", async () => {
    const patch = { metadata: { labels: { 'resource.cpu/arch': 'x86' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', resources: { limits: { cpu: '500m' } } }] } };
    await kube.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'gated-arch', namespace: OTHER },
      spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'gated-arch' },
        subsets: [{ name: 'x86', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] }, patch }] },
    });
    await watchingEveryWorkloadSpread(cp.zonekeeper!.admin);
    const d = deployment('gated-arch', 2, {});
    d.metadata.namespace = OTHER;
    d.spec.template.spec.schedulingGates = [{ name: 'zonekeeper.io/zone' }];
    await kube.create(d);
    const placed = await kube.bound(OTHER, 'app=gated-arch', 2, zones, 90_000);
    assert.equal(zoneCounts(placed.values()), 'zone-a=2');
    for (const p of await kube.podsOf(OTHER, 'app=gated-arch')) {
      assert.equal(p.metadata.labels['resource.cpu/arch'], undefined, p.metadata.name);
      assert.equal(p.spec.containers[0].image, d.spec.template.spec.containers[0].image, 'a WorkloadSpread editor cannot change an image through the gate');
      assert.deepEqual(p.spec.containers[0].resources, { requests: { cpu: '10m' } }, 'a stored pod\'s resources do not change');
      assert.equal(p.metadata.annotations['zonekeeper.io/subset-patch-not-applied'], 'metadata.labels, spec.containers', p.metadata.name);
    }
    const warned = (kind: string) => eventually(`a SubsetPatchNotApplied Warning on a ${kind}`, async () =>
      (await kube.list('v1', 'Event', OTHER)).find((e) => e.involvedObject?.kind === kind && e.reason === 'SubsetPatchNotApplied' && e.type === 'Warning'), 30_000);
    assert.match((await warned('Pod')).message, /not applied: metadata\.labels, spec\.containers$/);
    assert.match((await warned('WorkloadSpread')).message, /^subset x86: pods decided by the zone gate after their creation do not get metadata\.labels, spec\.containers/);
    const audit = spawnSync(process.execPath, [new URL('../../dist/cli.js', import.meta.url).pathname, 'audit', '--kubeconfig', cp.kubeconfig, '-n', OTHER],
      { encoding: 'utf8', timeout: 120_000 });
    assert.notEqual(audit.status, 2, audit.stderr);
    assert.match(audit.stdout, /\n {2}elsewhere\/gated-arch subset x86: 2 pods \(gated-arch-[^,]+, …\) without metadata\.labels, spec\.containers$/m);
  });

  it('a Deployment with instance IDs: each pod takes a unique ID in [0, 6) at creation and lands in its zone', async () => {
    await kube.create(deployment('ids', 6, { 'zonekeeper.io/instance-ids': 'true' }));
    await assertIdsOnList(kube, NS, 'ids', await bound('ids', 6), 6);
  });

  it('a bound volume wins at creation: claims bound to volumes in zone-c before the StatefulSet, every pod written into zone-c, none gated', async () => {
    for (const i of [0, 1, 2]) {
      const claim = `data-vol-${i}`;
      await kube.create(preBoundVolume(NS, claim, 'zone-c'));
      await kube.create({
        apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: `${NS}-${claim}`, resources: { requests: { storage: '1Gi' } } },
      });
    }
    await eventually('the claims are bound', async () =>
      (await kube.list('v1', 'PersistentVolumeClaim', NS)).filter((c: Obj) => c.status?.phase === 'Bound').length === 3, 60_000, 250);
    const [admitted, gated] = [await metric('verb="admission",outcome="admitted"'), await metric('verb="admission",outcome="gate"')];
    await kube.create(statefulSet(NS, 'vol', 3, { containers: [{ ...container, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] }, {
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } }],
    }));
    assert.equal(zoneCounts((await bound('vol', 3)).values()), 'zone-c=3', 'ordinals 0 and 1 are pinned elsewhere: the volume wins');
    for (const p of await pods('vol')) assert.equal(p.spec.nodeSelector?.[ZONE], 'zone-c', p.metadata.name);
    assert.ok(await metric('verb="admission",outcome="admitted"') - admitted >= 3, 'decided at admission');
    assert.equal(await metric('verb="admission",outcome="gate"'), gated, 'none left to the keeper');
  });

  it('an Adaptive WorkloadSpread (standalone) is decided at creation as Kruise\'s webhook decides it: a subset no node fits is skipped, both pods in subset b, no gate', async () => {
    const [admitted, gated] = [await metric('verb="admission",outcome="admitted"'), await metric('verb="admission",outcome="gate"')];
    const nowhere = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }, { key: 'e2e.zonekeeper.io/pool', operator: 'In', values: ['none'] }] };
    await kube.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'adaptive', namespace: NS },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'adaptive' },
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 5 } },
        subsets: [
          { name: 'nowhere', requiredNodeSelectorTerm: nowhere, maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] } },
        ],
      },
    });
    await watchingEveryWorkloadSpread(cp.zonekeeper!.admin);
    await kube.create(deployment('adaptive', 2, {}));
    assert.equal(zoneCounts((await bound('adaptive', 2)).values()), 'zone-b=2');
    for (const p of await pods('adaptive')) {
      assert.equal(JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']).subset, 'b', p.metadata.name);
      assert.equal(p.spec.schedulingGates, undefined, `${p.metadata.name}: never gated`);
    }
    // Its status controller, not the keeper, reschedules a subset's unscheduled pods (test/e2e/workloadSpreadStatus.test.ts).
    assert.ok(await metric('verb="admission",outcome="admitted"') - admitted >= 2, 'decided at admission');
    assert.equal(await metric('verb="admission",outcome="gate"'), gated, 'none left to the keeper');
  });

  it('zonekeeper stopped: an opted-in pod is refused, naming zonekeeper, while another namespace creates at once; back: its layout is reached', async () => {
    await cp.zonekeeper!.stop();
    await kube.create(statefulSet(NS, 'late', 3));
    const refusal = await eventually('FailedCreate naming the webhook', async () => {
      const events = await kube.list('v1', 'Event', NS);
      return events.find((e) => e.involvedObject?.name === 'late' && e.reason === 'FailedCreate')?.message as string | undefined;
    }, 30_000);
    assert.match(refusal, /pods\.zonekeeper\.io/);
    assert.equal((await pods('late')).length, 0);
    await kube.create(statefulSet(OTHER, 'free', 1));
    await eventually('a pod in a namespace without the label', async () => (await kube.podsOf(OTHER, 'app=free')).length === 1, 30_000);
    await cp.restartZonekeeperAs(rbac, config);
    const placed = await bound('late', 3);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', NS, 'late');
    for (const [pod, zone] of placed) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
  });

  it("the certificate is zonekeeper's: the caBundle is the Secret's CA; the Secret deleted, a new CA is issued and written, and pods are admitted again", async () => {
    const first = await secretCa();
    assert.ok(first, 'zonekeeper keeps a Secret');
    assert.equal(await caBundle(kube), first, "the webhook trusts the Secret's CA");
    await kube.delete('v1', 'Secret', 'zonekeeper-system', 'zonekeeper-webhook-tls');
    const next = await eventually('a new CA in a new Secret, written into the webhook', async () => {
      const [ca, bundle] = [await secretCa(), await caBundle(kube)];
      return ca && ca !== first && bundle === ca ? ca : undefined;
    }, 60_000, 500);
    assert.notEqual(next, first);
    await kube.create(statefulSet(NS, 'renewed', 3));
    await assertOnPins(kube, NS, 'renewed', await bound('renewed', 3));
  });

  it('two replicas behind a Service that selects the holder: a burst (a WorkloadSpread quota; instance IDs with a zone maximum), the holder SIGKILLed mid-burst: no quota exceeded, IDs unique', async () => {
    const replicas = [{ name: 'zonekeeper', admin: cp.zonekeeper!.admin, port: admissionPort }];
    const bPort = await freePort();
    const b = await cp.startReplica('zonekeeper-b', { ...config, admission: { ...config.admission as Obj, listen: `127.0.0.1:${bPort}` } },
      await cp.serviceAccountKubeconfig('zonekeeper-system', 'zonekeeper'));
    replicas.push({ name: 'zonekeeper-b', admin: b.admin, port: bPort });
    const service = await holderService(replicas);
    try {
      const mwc = await kube.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'zonekeeper');
      mwc.webhooks[0].clientConfig.url = `https://127.0.0.1:${service.port}/admission/pods`;
      await kube.call('PUT', pathOf('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'zonekeeper'), mwc);
      const subset = (name: string, zone: string, maxReplicas?: number) => ({ name, requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] }, maxReplicas });
      await kube.create({
        apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'quota', namespace: NS },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'quota' }, subsets: [subset('a', 'zone-a', 3), subset('b', 'zone-b', 3), subset('c', 'zone-c')] },
      });
      for (const r of replicas) await watchingEveryWorkloadSpread(r.admin);
      const max3 = { weight: 1, maxReplicas: 3 };
      const before = service.decided();
      await kube.create(deployment('quota', 12, {}));
      await kube.create(deployment('capped', 9, { 'zonekeeper.io/instance-ids': 'true', 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { 'zone-a': max3, 'zone-b': max3, 'zone-c': max3 } }) }));
      // Mid-burst: the holder dies without a word; the other replica takes the Lease and the Service's endpoint.
      await eventually('the burst under way', async () => (await pods('quota')).length + (await pods('capped')).length >= 6, 30_000, 100);
      const holder = service.holder();
      assert.ok(holder, 'a holder served the burst');
      await (holder.name === 'zonekeeper' ? cp.zonekeeper! : b).stop('SIGKILL');
      const quota = await bound('quota', 12);
      const capped = await bound('capped', 9);
      const perZone = (m: Map<string, string>) => zoneCounts(m.values());
      const count = (m: Map<string, string>, zone: string) => [...m.values()].filter((z) => z === zone).length;
      assert.ok(count(quota, 'zone-a') <= 3 && count(quota, 'zone-b') <= 3, `WorkloadSpread quota kept: ${perZone(quota)}`);
      for (const zone of ZONES) assert.ok(count(capped, zone) <= 3, `zone maximum kept: ${perZone(capped)}`);
      const ids = (await pods('capped')).map((p) => Number(p.metadata.annotations?.['zonekeeper.io/instance-id']));
      assert.deepEqual([...ids].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'instance IDs unique in [0, 9)');
      const decided = { admitted: service.decided().admitted - before.admitted, gated: service.decided().gated - before.gated };
      console.log(`# two replicas, holder ${holder.name} SIGKILLed mid-burst: quota ${perZone(quota)}, capped ${perZone(capped)}; `
        + `decided at admission (as the metrics last showed) ${decided.admitted}, gated for the keeper ${decided.gated} (${Math.round(100 * decided.admitted / Math.max(1, decided.admitted + decided.gated))}% at admission)`);
    } finally {
      service.close();
    }
  });
});

/**
 * What the webhook's Service does in a cluster (it selects the pod labelled zonekeeper.io/lease-holder):
 * a TCP pass-through to the replica that holds the Lease, by its metrics; none while no one does.
 */
async function holderService(replicas: { name: string; admin: string; port: number }[]) {
  let holder: (typeof replicas)[number] | undefined;
  const last = new Map<string, { admitted: number; gated: number }>();
  const value = (text: string, labels: string) => Number(text.split('\n').find((l) => l.startsWith('zonekeeper_decisions_total{') && l.includes(labels))?.split(' ').pop() ?? 0);
  const poll = setInterval(async () => {
    let now: typeof holder;
    for (const r of replicas) {
      const text = await fetch(`${r.admin}/metrics`).then((res) => res.text(), () => '');
      if (!text) continue;
      last.set(r.name, { admitted: value(text, 'verb="admission",outcome="admitted"'), gated: value(text, 'verb="admission",outcome="gate"') });
      if (/^zonekeeper_leader 1$/m.test(text)) now = r;
    }
    holder = now;
  }, 200);
  const server = net.createServer((client) => {
    const to = holder;
    if (!to) return client.destroy();
    const upstream = net.connect(to.port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await eventually('a holder behind the Service', async () => holder !== undefined, 30_000, 100);
  return {
    port: (server.address() as AddressInfo).port,
    holder: () => holder,
    decided: () => [...last.values()].reduce((a, x) => ({ admitted: a.admitted + x.admitted, gated: a.gated + x.gated }), { admitted: 0, gated: 0 }),
    close: () => {
      clearInterval(poll);
      server.close();
    },
  };
}
