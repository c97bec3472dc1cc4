// End-to-end: repair (docs/design.md#repair) with the real kube-scheduler, kube-apiserver and
// kube-controller-manager (ReplicaSets, StatefulSets and the disruption controller behind the
// PodDisruptionBudget), a kubelet stand-in that makes bound pods Ready and finishes terminating
// ones: an outage leaves an instance-ID Deployment 6/0/0, repair brings it back to 2/2/2 one
// eviction at a time; a flapping zone holds it back; a pod its volume holds is never moved.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions, type Zonekeeper } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { deployment, preBoundVolume, SCHEDULER, tearDown, threeZoneCluster, ZONES } from './workloads.js';

const STABLE_SECONDS = 8;
const cli = new URL('../../dist/cli.js', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CONFIG = {
  placement: { zoneFallback: 'adaptive', fallbackAfterSeconds: 2 },
  rebalance: { enabled: true, zoneStableSeconds: STABLE_SECONDS, evictionsPerMinute: 60, intervalSeconds: 1 },
  health: { settleSeconds: 5 }, instanceIds: { intervalSeconds: 1 },
};

for (const k of kubeVersions()) describe(`repair with kube-scheduler ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const stops: (() => Promise<void>)[] = [];
  const nodesOf = (zone: string) => [...zones].filter(([, z]) => z === zone).map(([n]) => n);
  const cordon = async (zone: string, on: boolean) => {
    for (const n of nodesOf(zone)) await kube.patch('v1', 'Node', undefined, n, { spec: { unschedulable: on || null } });
  };
  const perZone = (pods: Obj[]) => ZONES.map((z) => pods.filter((p) => zones.get(p.spec.nodeName) === z).length);
  const ready = (p: Obj) => (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
  const eventsOf = async (namespace: string, reason: string) => (await kube.list('v1', 'Event', namespace)).filter((e) => e.reason === reason);
  const start = async (namespace: string) => {
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    stops.push(kube.kubelet(namespace));
  };
  /**
   * A rebalancing instance-ID Deployment of 6, behind a PodDisruptionBudget of maxUnavailable 1
   * unless `pdb` is false, placed while zones b and c are cordoned: 6/0/0.
   */
  const fallenBack = async (namespace: string, pdb = true) => {
    await start(namespace);
    if (pdb) await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'ids', namespace }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'ids' } } } });
    await cordon('zone-b', true);
    await cordon('zone-c', true);
    const d = deployment(namespace, 'ids', 6);
    d.metadata.annotations = { 'zonekeeper.io/instance-ids': 'true', 'zonekeeper.io/rebalance': 'true' };
    await kube.create(d);
    const placed = await eventually('6 pods bound and Ready, all in zone-a', async () => {
      const pods = await kube.podsOf(namespace, 'app=ids');
      return pods.length === 6 && pods.every((p) => p.spec.nodeName && ready(p)) && pods;
    }, 180_000);
    assert.deepEqual(perZone(placed), [6, 0, 0]);
  };

  /**
   * Every eviction of a pod of `app` a watch shows, in the API server's order, with the pods of the
   * workload that were not bound and Ready at that moment (or how many replicas had no pod).
   */
  const evictionsWatched = (namespace: string, app: string, replicas: number) => {
    const evictions: { name: string; down: string[] }[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      const rv = (await kube.call('GET', `/api/v1/namespaces/${namespace}/pods?limit=1`)).metadata.resourceVersion;
      const pods = new Map((await kube.list('v1', 'Pod', namespace, `app=${app}`)).map((p) => [p.metadata.uid as string, p]));
      const path = `/api/v1/namespaces/${namespace}/pods?resourceVersion=${rv}&labelSelector=app%3D${app}`;
      try {
        for await (const { type, object: p } of kube.watch(path, abort.signal)) {
          const was = pods.get(p.metadata.uid);
          if (type === 'DELETED') pods.delete(p.metadata.uid);
          else pods.set(p.metadata.uid, p);
          // A pod with no grace period may go at once (DELETED with no terminating state before it).
          if (!(type === 'DELETED' || p.metadata.deletionTimestamp) || was?.metadata.deletionTimestamp) continue;
          const live = [...pods.values()].filter((q) => !q.metadata.deletionTimestamp);
          const down = live.filter((q) => !q.spec.nodeName || !ready(q)).map((q) => `${q.metadata.name} ${q.spec.nodeName ? 'not Ready' : 'Pending'}`);
          if (live.length + 1 < replicas) down.push(`${replicas - live.length - 1} replicas with no pod`);
          evictions.push({ name: p.metadata.name, down });
        }
      } catch { /* aborted */ }
    })();
    return { evictions, stop: async () => { abort.abort(); await watching; } };
  };

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp, CONFIG));
  });

  after(async () => {
    for (const stop of stops) await stop();
    await tearDown(cp);
  });

  it(`[${k.version}] 24. repair: an outage leaves an instance-ID Deployment 6/0/0 (LayoutAtRisk); once zones b and c are back, 2/2/2 one eviction at a time, the PodDisruptionBudget never exceeded, no pod evicted twice, LayoutRestored`, async () => {
    await fallenBack('r1');
    const risk = await eventually('LayoutAtRisk on the Deployment', async () => (await eventsOf('r1', 'LayoutAtRisk')).find((e) => e.involvedObject.kind === 'Deployment'));
    assert.match(risk.message, /1 of 3 zones hold pods/);
    assert.equal((await eventsOf('r1', 'Rebalanced')).length, 0, 'nothing moves while zones b and c are cordoned');

    const uncordoned = Date.now();
    await cordon('zone-b', false);
    await cordon('zone-c', false);
    let worst = 6;
    let samples = 0;
    const done = await eventually('2/2/2, all Ready', async () => {
      const pods = await kube.podsOf('r1', 'app=ids');
      worst = Math.min(worst, pods.filter(ready).length);
      samples++;
      return pods.length === 6 && pods.every(ready) && perZone(pods).join('/') === '2/2/2' && pods;
    }, 180_000, 1000);
    const took = (Date.now() - uncordoned) / 1000;
    const evictions = (await eventsOf('r1', 'Rebalanced')).filter((e) => e.involvedObject.kind === 'Pod');
    const names = evictions.map((e) => e.involvedObject.name);
    console.log(`# [${k.version}] 6/0/0 -> ${perZone(done).join('/')} in ${took.toFixed(0)} s after the zones came back (stable after ${STABLE_SECONDS} s); ${names.length} evictions; fewest Ready pods in ${samples} samples: ${worst}`);
    assert.ok(took >= STABLE_SECONDS, 'nothing before the zones had been stable');
    assert.ok(worst >= 5, `the PodDisruptionBudget's maxUnavailable 1 held (fewest Ready: ${worst})`);
    assert.equal(new Set(names).size, names.length, 'no pod evicted twice');
    assert.equal(names.length, 4, 'four pods moved: two to zone-b, two to zone-c');
    await eventually('LayoutRestored', async () => (await eventsOf('r1', 'LayoutRestored')).length > 0, 30_000);
    const ids = done.map((p) => Number(p.metadata.annotations['zonekeeper.io/instance-id'])).sort();
    assert.deepEqual(ids, [0, 1, 2, 3, 4, 5]);
  });

  it(`[${k.version}] 25. a flapping zone holds repair back: no eviction while zone-b is cordoned and uncordoned every 3 s, then the layout is repaired once it stays up`, async () => {
    await fallenBack('r2');
    await cordon('zone-c', false);
    const flapUntil = Date.now() + 24_000;
    for (let on = false; Date.now() < flapUntil; on = !on) {
      await cordon('zone-b', on);
      await sleep(3000);
    }
    await cordon('zone-b', false);
    assert.equal((await eventsOf('r2', 'Rebalanced')).length, 0, 'no eviction while a zone flapped');
    const repair = await (await fetch(`${cp.zonekeeper!.admin}/debug/repair`)).json() as { workloads: { workload: string; message: string }[] };
    console.log(`# [${k.version}] while flapping: ${repair.workloads.find((w) => w.workload === 'r2/Deployment/ids')?.message}`);
    const done = await eventually('2/2/2 once zone-b stays up', async () => {
      const pods = await kube.podsOf('r2', 'app=ids');
      return pods.length === 6 && pods.every(ready) && perZone(pods).join('/') === '2/2/2' && pods;
    }, 180_000, 1000);
    assert.equal(done.length, 6);
  });

  it(`[${k.version}] 26. a StatefulSet pod its bound volume holds off its pin: reported by audit, the metric and LayoutAtRisk, never evicted`, async () => {
    await start('r3');
    // Ordinals 0 and 1 where the list pins them; ordinal 2's data is in zone-a, its seat in zone-c.
    for (const [i, zone] of [[0, 'zone-a'], [1, 'zone-b'], [2, 'zone-a']] as const) await kube.create(preBoundVolume('r3', `data-db-${i}`, zone));
    await kube.create({
      apiVersion: 'apps/v1', kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'r3', annotations: { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/rebalance': 'true' } },
      spec: {
        replicas: 3, serviceName: 'db', podManagementPolicy: 'Parallel', selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { schedulerName: SCHEDULER, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    const placed = await eventually('3 pods bound and Ready', async () => {
      const pods = await kube.podsOf('r3', 'app=db');
      return pods.length === 3 && pods.every((p) => p.spec.nodeName && ready(p)) && pods;
    }, 120_000);
    const db2 = placed.find((p) => p.metadata.name === 'db-2')!;
    assert.equal(zones.get(db2.spec.nodeName), 'zone-a', 'its volume decides');
    const risk = await eventually('LayoutAtRisk on the StatefulSet', async () => (await eventsOf('r3', 'LayoutAtRisk')).find((e) => e.involvedObject.name === 'db'));
    assert.match(risk.message, /volume 1/);
    const audit = spawnSync(process.execPath, [cli, 'audit', '--kubeconfig', cp.kubeconfig, '-n', 'r3'], { encoding: 'utf8' });
    assert.equal(audit.status, 1, audit.stderr);
    assert.match(audit.stdout, /r3\s+db\s+StatefulSet\s+3\s+2\s+3\s+1\s+yes\s+.*volume 1/);
    // Longer than zoneStableSeconds and many repair rounds: still the same pod.
    await sleep((STABLE_SECONDS + 5) * 1000);
    const after = await kube.get('v1', 'Pod', 'r3', 'db-2');
    assert.equal(after.metadata.uid, db2.metadata.uid, 'never evicted');
    assert.equal((await eventsOf('r3', 'Rebalanced')).length, 0);
    const repair = await (await fetch(`${cp.zonekeeper!.admin}/debug/repair`)).json() as { workloads: { workload: string; message: string }[] };
    assert.match(repair.workloads.find((w) => w.workload === 'r3/StatefulSet/db')!.message, /held there by its bound volume/);
  });

  it(`[${k.version}] 27. a Lease hand-over while a repaired pod's replacement is Pending (issue 65, point 11): the new holder, remembering no eviction, moves nothing until it is bound and Ready`, async () => {
    const second = await cp.startReplica('zonekeeper-2', CONFIG);
    stops.push(() => second.stop());
    // No PodDisruptionBudget: repair's own "one at a time" is all that holds a second eviction back.
    await fallenBack('r4', false);
    // The replacement of the first pod moved stays Pending: no kube-scheduler binds it.
    await cp.stopScheduler(SCHEDULER);
    const watch = evictionsWatched('r4', 'ids', 6);
    await cordon('zone-b', false);
    await cordon('zone-c', false);
    const pending = await eventually('the first eviction, its replacement Pending', async () => {
      const pods = await kube.podsOf('r4', 'app=ids');
      return watch.evictions.length === 1 && pods.length === 6 && pods.find((p) => !p.spec.nodeName)?.metadata.name as string | undefined;
    }, 90_000, 500);
    const first = watch.evictions[0]!.name;
    const leads = async (z: Zonekeeper) => /^zonekeeper_leader 1$/m.test(await (await fetch(`${z.admin}/metrics`)).text());
    const lease = async () => (await kube.get('coordination.k8s.io/v1', 'Lease', 'default', 'zonekeeper-writers')).spec.holderIdentity as string;
    const before = await lease();
    const killed = await leads(cp.zonekeeper!) ? 'zonekeeper' : await leads(second) ? 'zonekeeper-2' : 'neither';
    assert.notEqual(killed, 'neither', 'one replica holds the Lease');
    const handedOver = Date.now();
    if (killed === 'zonekeeper-2') await second.stop('SIGKILL');
    else {
      await cp.zonekeeper!.stop('SIGKILL');
      await cp.startZonekeeper(CONFIG);
    }
    const alive = killed === 'zonekeeper' ? second : cp.zonekeeper!;
    // Either replica may take it: the one left, or the holder started again; neither remembers the eviction.
    const holder = await eventually('a new Lease holder', async () => {
      if ((await lease()) === before) return undefined;
      return await leads(alive) ? alive : killed === 'zonekeeper' && await leads(cp.zonekeeper!) ? cp.zonekeeper! : undefined;
    }, 60_000, 500);
    const judged = async () => ((await (await fetch(`${holder.admin}/debug/repair`)).json()) as { workloads: { workload: string; decision: string; message: string }[] })
      .workloads.find((w) => w.workload === 'r4/Deployment/ids');
    await eventually('the new holder\'s repair has judged the Deployment', judged, 30_000, 500);
    // Many repair rounds (every second) with its zones long stable: still one eviction, and why.
    await sleep(5000);
    assert.deepEqual(watch.evictions.map((e) => e.name), [first], `no second eviction while ${pending} is Pending: ${JSON.stringify(watch.evictions)}`);
    const waited = await judged();
    assert.equal(waited?.decision, 'wait');
    assert.match(waited!.message, new RegExp(`pod ${pending} is Pending`));
    assert.equal((await kube.get('v1', 'Pod', 'r4', pending)).spec.nodeName, undefined, `${pending} was still Pending`);

    await cp.restartScheduler(SCHEDULER);
    const done = await eventually('2/2/2, all Ready', async () => {
      const pods = await kube.podsOf('r4', 'app=ids');
      return pods.length === 6 && pods.every(ready) && perZone(pods).join('/') === '2/2/2' && pods;
    }, 180_000, 1000);
    await watch.stop();
    const took = (Date.now() - handedOver) / 1000;
    console.log(`# [${k.version}] hand-over (${killed} SIGKILLed) while ${pending} was Pending: the new holder waited (${waited!.message}); ${perZone(done).join('/')} ${took.toFixed(0)} s after the kill, ${watch.evictions.length} evictions: ${watch.evictions.map((e) => e.name).join(', ')}`);
    assert.deepEqual(watch.evictions.filter((e) => e.down.length > 0), [], 'no eviction while a pod of the workload was Pending, not Ready or missing');
    assert.equal(watch.evictions.length, 4, 'four pods moved');
  });
});
