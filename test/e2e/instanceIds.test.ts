// End-to-end: instance IDs on Deployments (docs/design.md#instance-ids) with the real
// kube-scheduler, kube-apiserver and the Deployment and ReplicaSet controllers: assignment,
// a freed ID, concurrent writers, a rolling update, and the instance count.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { instanceIdWriter } from '../../src/actuator/instanceIdWriter.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { deployment, tearDown, threeZoneCluster } from './workloads.js';

const idOf = (p: Obj) => {
  const v = p.metadata.annotations?.['zonekeeper.io/instance-id'];
  return v === undefined ? -1 : Number(v);
};
const live = (p: Obj) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

for (const k of kubeVersions()) describe(`instance IDs with kube-scheduler ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const bound = (namespace: string, app: string, count: number, timeoutMs?: number) => kube.bound(namespace, `app=${app}`, count, zones, timeoutMs);
  const namespace = (name: string) => kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const instanceDeployment = (ns: string, name: string, replicas: number) => {
    const d = deployment(ns, name, replicas);
    d.metadata.annotations = { 'zonekeeper.io/instance-ids': 'true' };
    return d;
  };

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp, { deletionCost: { enabled: true, intervalSeconds: 1 }, instanceIds: { intervalSeconds: 1 } }));
  });

  after(() => tearDown(cp));

  it(`[${k.version}] 7. instance IDs: a Deployment of 6 lands 2/2/2 with IDs 0..5; a deleted pod's replacement takes the freed ID`, async () => {
    await namespace('s7');
    await kube.create(instanceDeployment('s7', 'ids', 6));
    const placed = await bound('s7', 'ids', 6);
    const pods = await kube.podsOf('s7', 'app=ids');
    assert.deepEqual(pods.map(idOf).sort(), [0, 1, 2, 3, 4, 5]);
    // The freeze is written beside the placements and may land after the bindings.
    const list = await kube.frozenZones('apps/v1', 'Deployment', 's7', 'ids');
    for (const p of pods) assert.equal(placed.get(p.metadata.name), list[idOf(p) % list.length], `${p.metadata.name} with ID ${idOf(p)}`);
    const owner = await kube.get('apps/v1', 'Deployment', 's7', 'ids');
    const map = JSON.parse(owner.metadata.annotations['zonekeeper.io/instance-assignment']);
    assert.deepEqual(map, Object.fromEntries(pods.map((p) => [String(idOf(p)), p.metadata.name])));

    const victim = pods.find((p) => idOf(p) === 4)!;
    await kube.delete('v1', 'Pod', 's7', victim.metadata.name, 0);
    const after = await eventually('a replacement bound with ID 4', async () => {
      const now = await kube.podsOf('s7', 'app=ids');
      const fresh = now.find((p) => !pods.some((q) => q.metadata.name === p.metadata.name));
      return now.length === 6 && fresh?.spec.nodeName && fresh;
    }, 120_000);
    assert.equal(idOf(after), 4);
    assert.equal(zones.get(after.spec.nodeName), list[4 % list.length]);
  });

  it(`[${k.version}] 9. 50 pods of one ReplicaSet assigned concurrently by two writers: unique IDs 0..49, nothing lost`, async () => {
    await namespace('s9');
    await kube.create({
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'burst', namespace: 's9', annotations: { 'zonekeeper.io/instance-ids': 'true' } },
      spec: {
        replicas: 50, selector: { matchLabels: { app: 'burst' } },
        template: { metadata: { labels: { app: 'burst' } }, spec: { schedulerName: 'nobody', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    const pods = await eventually('50 pods', async () => { const p = await kube.podsOf('s9', 'app=burst'); return p.length === 50 && p; });
    const metrics = createMetrics();
    const writers = [0, 1].map(() => instanceIdWriter(cp.api, silent, metrics, 30_000));
    const ids = await Promise.all(pods.map((p: Obj, i: number) => writers[i % 2]!.assign({
      owner: { kind: 'ReplicaSet', namespace: 's9', name: 'burst' }, pod: p.metadata.name, replicas: 50, live: () => true,
    })));
    assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i));
    const rs = await kube.get('apps/v1', 'ReplicaSet', 's9', 'burst');
    const map = JSON.parse(rs.metadata.annotations['zonekeeper.io/instance-assignment']);
    const annotated = Object.fromEntries((await kube.podsOf('s9', 'app=burst')).map((p) => [p.metadata.annotations['zonekeeper.io/instance-id'], p.metadata.name]));
    assert.equal(Object.keys(map).length, 50);
    assert.deepEqual(map, annotated);
    const conflicts = (await metrics.actuatorWrites.get()).values.find((v) => v.labels.result === 'conflict')?.value ?? 0;
    console.log(`# 50 concurrent assignments by two writers: ${conflicts} optimistic-concurrency conflicts retried`);
  });

  it(`[${k.version}] 18. a rolling update (maxSurge 1, maxUnavailable 0) of a 3-replica instance-ID Deployment completes, no two live pods ever share an ID, every pod ends with an ID in [0, 3)`, async () => {
    await namespace('s18');
    const stopKubelet = kube.kubelet('s18');
    try {
      await kube.create(instanceDeployment('s18', 'roll', 3));
      // Settled as a running Deployment is: available, with IDs and (the leader's) deletion costs.
      await eventually('3 pods with IDs and deletion costs, the Deployment available', async () => {
        const [d, pods] = await Promise.all([kube.get('apps/v1', 'Deployment', 's18', 'roll'), kube.podsOf('s18', 'app=roll')]);
        return d.status?.availableReplicas === 3 && pods.length === 3
          && pods.every((p) => idOf(p) >= 0 && p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] !== undefined);
      }, 120_000);
      const list = await kube.frozenZones('apps/v1', 'Deployment', 's18', 'roll');
      const before = new Set((await kube.podsOf('s18', 'app=roll')).map((p) => p.metadata.name as string));

      let sampling = true;
      let samples = 0;
      const duplicates: string[] = [];
      const sampler = (async () => {
        while (sampling) {
          const held = new Map<number, string>();
          for (const p of (await kube.podsOf('s18', 'app=roll')).filter(live)) {
            const id = idOf(p);
            if (id < 0) continue;
            if (held.has(id)) duplicates.push(`ID ${id}: ${held.get(id)} and ${p.metadata.name}`);
            held.set(id, p.metadata.name);
          }
          samples++;
          // Every 100 ms, more often than the 500 ms asked: the whole rollout takes about 1.5 s here.
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const started = Date.now();
      await kube.patch('apps/v1', 'Deployment', 's18', 'roll', { spec: { template: { metadata: { annotations: { 'example.com/revision': '2' } } } } });
      const done = await eventually('the rollout completes with IDs 0..2', async () => {
        const [d, pods] = await Promise.all([kube.get('apps/v1', 'Deployment', 's18', 'roll'), kube.podsOf('s18', 'app=roll')]);
        const s = d.status ?? {};
        const complete = s.observedGeneration >= d.metadata.generation && s.updatedReplicas === 3 && s.replicas === 3 && s.availableReplicas === 3;
        const ids = pods.map(idOf).sort();
        return complete && pods.length === 3 && ids.join() === '0,1,2' && pods;
      }, 180_000);
      sampling = false;
      await sampler;
      const where = done.map((p: Obj) => `${idOf(p)}:${zones.get(p.spec.nodeName)}`).sort().join(' ');
      console.log(`# [${k.version}] rollout of 3 instance-ID pods: ${((Date.now() - started) / 1000).toFixed(1)} s, ${samples} samples, ${duplicates.length} with a shared ID; ends ${where} (list ${list.join(',')})`);
      assert.deepEqual(duplicates, []);
      assert.ok(samples >= 5, `sampled ${samples} times`);
      assert.deepEqual(done.filter((p: Obj) => before.has(p.metadata.name)).map((p: Obj) => p.metadata.name), [], 'every pod was replaced');
      assert.equal(new Set(done.map((p: Obj) => p.metadata.labels['pod-template-hash'])).size, 1, 'every pod is of the new ReplicaSet');
      // The old pod removed first is the one whose zone the surge pod was placed in, when the
      // ReplicaSet controller honours deletion costs (1.22 and later): every ID stays in its zone.
      if (cp.profile.deletionCost) for (const p of done) assert.equal(zones.get(p.spec.nodeName), list[idOf(p) % list.length], `ID ${idOf(p)}`);
    } finally {
      await stopKubelet();
    }
  });

  it(`[${k.version}] 19. every live pod carries zonekeeper.io/instance-count; scaled 3 -> 5, all say 5 within 15 s`, async () => {
    await namespace('s19');
    await kube.create(instanceDeployment('s19', 'count', 3));
    await bound('s19', 'count', 3);
    const countsOf = async () => (await kube.podsOf('s19', 'app=count')).filter(live).map((p) => p.metadata.annotations?.['zonekeeper.io/instance-count']);
    await eventually('3 pods say 3', async () => (await countsOf()).join() === '3,3,3', 30_000);
    const started = Date.now();
    await kube.patch('apps/v1', 'Deployment', 's19', 'count', { spec: { replicas: 5 } });
    await eventually('5 pods say 5', async () => (await countsOf()).join() === '5,5,5,5,5', 15_000);
    console.log(`# [${k.version}] instance count 3 -> 5 on every pod after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
});
