// End-to-end: a zone-by-zone rollout (docs/design.md#zone-by-zone-rollouts) with the real
// kube-apiserver, kube-scheduler and kube-controller-manager (the StatefulSet controller makes
// the replacements), and a kubelet stand-in that makes a bound pod Ready READY_AFTER_MS after it
// sees it bound (a container's start) and finishes terminating ones. Two StatefulSets of 30
// pinned round-robin over three zones are updated together: one OnDelete, rolled a zone at a
// time by zonekeeper; one RollingUpdate, one pod at a time by its controller. Case 63 runs under
// the eviction webhook as shipped, with neither a client CA nor trustNetwork (issue 71, item 6).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { admissionConfig, EVICTION_WEBHOOK, EVICTIONS_LABEL, evictionWebhookConfiguration, managedRbac } from './admissionWebhook.js';
import { ControlPlane, kubeVersions, type Zonekeeper } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { SCHEDULER, statefulSet, tearDown, threeZoneCluster } from './workloads.js';

const REPLICAS = 30;
const CONFIG = { zoneRollout: { intervalSeconds: 1 }, health: { settleSeconds: 5, intervalSeconds: 2 } };
/** A pod is Ready this long after it is bound: what one restart costs, for both StatefulSets alike. */
const READY_AFTER_MS = 3_000;

for (const k of kubeVersions()) describe(`zone-by-zone rollouts with kube-controller-manager ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const stops: (() => Promise<void>)[] = [];
  const ready = (p: Obj) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp, CONFIG));
  });

  after(async () => {
    for (const stop of stops) await stop();
    await tearDown(cp);
  });

  /** Sampled every second until stopped: the zones with a seat down (a pod not Ready, terminating, or missing). */
  const zonesDown = (namespace: string, list: string[], replicas: number) => {
    let sampling = true;
    const samples: string[][] = [];
    const loop = (async () => {
      while (sampling) {
        const pods = new Map((await kube.list('v1', 'Pod', namespace, 'app=db')).map((p) => [p.metadata.name as string, p]));
        const down = new Set<string>();
        for (let i = 0; i < replicas; i++) {
          const p = pods.get(`db-${i}`);
          if (!p || !ready(p)) down.add(list[i % 3]!);
        }
        samples.push([...down]);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    return { stop: async () => { sampling = false; await loop; return samples; } };
  };

  /** Every pod deletion a watch of the namespace shows, in order, with the revision the pod was on, until stopped. */
  const podDeletions = (namespace: string) => {
    const deleted: { name: string; uid: string; revision: string }[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      const rv = (await kube.call('GET', `/api/v1/namespaces/${namespace}/pods?limit=1`)).metadata.resourceVersion;
      const seen = new Set<string>();
      try {
        for await (const { type, object: p } of kube.watch(`/api/v1/namespaces/${namespace}/pods?resourceVersion=${rv}`, abort.signal)) {
          if ((type === 'DELETED' || p?.metadata?.deletionTimestamp) && !seen.has(p.metadata.uid)) {
            seen.add(p.metadata.uid);
            deleted.push({ name: p.metadata.name, uid: p.metadata.uid, revision: p.metadata.labels?.['controller-revision-hash'] });
          }
        }
      } catch { /* aborted */ }
    })();
    return { deleted, stop: async () => { abort.abort(); await watching; } };
  };

  /** Every pod on the StatefulSet's update revision and Ready, `replicas` of them. */
  const rolled = async (namespace: string, replicas = REPLICAS) => {
    const sts = await kube.get('apps/v1', 'StatefulSet', namespace, 'db');
    const revision = sts.status?.updateRevision;
    if (sts.status?.observedGeneration !== sts.metadata.generation || !revision) return false;
    const pods = (await kube.list('v1', 'Pod', namespace, 'app=db')).filter((p) => !p.metadata.deletionTimestamp);
    return pods.length === replicas && pods.every((p) => ready(p) && p.metadata.labels['controller-revision-hash'] === revision);
  };

  it(`[${k.version}] 60. a 30-pod StatefulSet rolled a zone at a time against RollingUpdate one pod at a time, updated together: ≥ 5× faster, never two zones with a pod unavailable`, async () => {
    for (const namespace of ['zr-zone', 'zr-rolling']) {
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      stops.push(kube.kubelet(namespace, 300, READY_AFTER_MS));
    }
    const zoneRolled = statefulSet('zr-zone', 'db', REPLICAS, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'OnDelete' } });
    // Whole zones at once (maxUnavailable "zone"), in fixed batches: three steps for three zones.
    zoneRolled.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true', 'zonekeeper.io/zone-rollout-batch-growth': '0' };
    await kube.create(zoneRolled);
    await kube.create(statefulSet('zr-rolling', 'db', REPLICAS, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'RollingUpdate' } }));
    await eventually('60 pods Ready', async () => (await rolled('zr-zone')) && (await rolled('zr-rolling')), 240_000, 1000);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', 'zr-zone', 'db');
    const placed = await kube.list('v1', 'Pod', 'zr-zone', 'app=db');
    for (const p of placed) assert.equal(zones.get(p.spec.nodeName), list[Number(p.metadata.name.split('-')[1]) % 3], `${p.metadata.name} in its seat's zone`);

    const sampler = zonesDown('zr-zone', list, REPLICAS);
    const template = { spec: { template: { metadata: { annotations: { 'e2e/restartedAt': new Date().toISOString() } } } } };
    const started = Date.now();
    await Promise.all(['zr-zone', 'zr-rolling'].map((ns) => kube.patch('apps/v1', 'StatefulSet', ns, 'db', template)));
    const took: Record<string, number> = {};
    let midway: Obj | undefined;
    await eventually('both rolled', async () => {
      for (const ns of ['zr-zone', 'zr-rolling']) if (took[ns] === undefined && await rolled(ns)) took[ns] = (Date.now() - started) / 1000;
      if (took['zr-zone'] === undefined && !midway) {
        const health = await (await fetch(`${cp.zonekeeper!.admin}/debug/health?namespace=zr-zone`)).json() as { workloads: Obj[] };
        if (health.workloads[0]?.rollout?.zone) midway = health.workloads[0].rollout;
      }
      return took['zr-zone'] !== undefined && took['zr-rolling'] !== undefined;
    }, 600_000, 1000);
    const samples = await sampler.stop();

    const twoZones = samples.filter((z) => z.length > 1);
    const steps = (await kube.list('v1', 'Event', 'zr-zone')).filter((e) => e.reason === 'ZoneRolloutStep').map((e) => e.message as string);
    const ratio = took['zr-rolling']! / took['zr-zone']!;
    console.log(`# [${k.version}] ${REPLICAS} pods, Ready ${READY_AFTER_MS / 1000} s after binding: zone by zone ${took['zr-zone']!.toFixed(1)} s (${steps.length} batches), RollingUpdate one at a time ${took['zr-rolling']!.toFixed(1)} s: ${ratio.toFixed(1)}x; ${samples.length} samples, ${twoZones.length} with two zones down; health midway: ${JSON.stringify(midway)}`);
    assert.equal(twoZones.length, 0, `never two zones with a pod unavailable: ${JSON.stringify(twoZones.slice(0, 3))}`);
    assert.ok(samples.some((z) => z.length === 1), 'the sampler saw the rollout take a zone down');
    assert.ok(ratio >= 5, `at least 5× faster: ${ratio.toFixed(1)}x`);
    assert.deepEqual(steps.map((m) => m.split(',')[0]).reverse().filter((z, i, a) => a.indexOf(z) === i).sort(), [...list].sort(), 'a batch in each zone');
    assert.equal(steps.length, 3, `one batch per zone: ${steps.join(' | ')}`);
    assert.ok(midway && list.includes(midway.zone), 'health showed the zone being rolled');
    const rollouts = await (await fetch(`${cp.zonekeeper!.admin}/debug/rollouts`)).json() as { workloads: Obj[] };
    assert.equal(rollouts.workloads.find((w) => w.workload === 'zr-zone/StatefulSet/db')?.lastStep?.decision, 'done');
    const metrics = await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text();
    assert.match(metrics, /zonekeeper_rollout_pods_replaced_total 30/);
  });

  it(`[${k.version}] 62. a rollback during another zone's outage: a crash-looping revision in the first zone waits by default; under AlwaysAllow its pods are replaced while the other zone is still down, and only they`, async () => {
    const ns = 'zr-outage';
    const replicas = 6;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    /** Pods of the bad template never start; `lost` stands for a node lost in another zone. */
    const lost = new Set<string>();
    stops.push(kube.kubelet(ns, 300, 1000, (p) => p.metadata.annotations?.['e2e/crash'] !== 'true' && !lost.has(p.metadata.name)));
    const sts = statefulSet(ns, 'db', replicas, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'OnDelete' } });
    // Whole zones at once (batch growth 0): the bad revision reaches all of the first zone, then stops.
    sts.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true', 'zonekeeper.io/zone-rollout-batch-growth': '0' };
    await kube.create(sts);
    await eventually('6 pods Ready', () => rolled(ns, replicas), 180_000, 1000);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ns, 'db');
    const good = (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).status.updateRevision as string;
    const inZone = (z: string) => Array.from({ length: replicas }, (_, i) => `db-${i}`).filter((_, i) => list[i % 3] === z);
    const revisions = async () => new Map((await kube.podsOf(ns, 'app=db')).map((p) => [p.metadata.name as string, { revision: p.metadata.labels['controller-revision-hash'], ready: ready(p), uid: p.metadata.uid }]));

    // The bad revision: the first zone's pods are replaced and never become Ready; the rollout goes no further.
    const template = (crash: boolean) => ({ spec: { template: { metadata: { annotations: { 'e2e/crash': crash ? 'true' : null } } } } });
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', template(true));
    await eventually(`${list[0]}'s pods on the bad revision`, async () => {
      const r = await revisions();
      return inZone(list[0]!).every((n) => r.get(n) && r.get(n)!.revision !== good && !r.get(n)!.ready);
    }, 120_000, 500);
    // The outage: a pod of the second zone goes down (its node lost), then the rollback.
    const victim = inZone(list[1]!)[0]!;
    lost.add(victim);
    await kube.call('PATCH', `/api/v1/namespaces/${ns}/pods/${victim}/status`, { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }] } },
      'application/merge-patch+json');
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', template(false));
    await eventually('the rollback\'s update revision is the good one', async () => (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).status?.updateRevision === good, 30_000);
    const stepOf = async () => ((await (await fetch(`${cp.zonekeeper!.admin}/debug/rollouts`)).json()) as { workloads: Obj[] })
      .workloads.find((w) => w.workload === `${ns}/StatefulSet/db`)?.lastStep as Obj | undefined;
    const waiting = await eventually('the rollout waits for the lost pod', async () => {
      const st = await stepOf();
      return st?.decision === 'wait' && st.view?.revision === good && JSON.stringify(st.view.waitsFor).includes(victim) && st;
    }, 60_000, 500);
    const badUids = new Map([...(await revisions())].filter(([n]) => inZone(list[0]!).includes(n)).map(([n, v]) => [n, v.uid]));

    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { metadata: { annotations: { 'zonekeeper.io/unhealthy-pod-eviction-policy': 'AlwaysAllow' } } });
    await eventually(`${list[0]} back on the good revision and Ready while ${victim} is still down`, async () => {
      const r = await revisions();
      return inZone(list[0]!).every((n) => r.get(n)?.revision === good && r.get(n)!.ready) && r.get(victim)?.ready === false;
    }, 120_000, 500);
    const after = await revisions();
    for (const [n, uid] of badUids) assert.notEqual(after.get(n)!.uid, uid, `${n} was replaced`);
    const untouched = [...list.slice(1)].flatMap(inZone);
    assert.ok(untouched.every((n) => after.get(n)?.revision === good), 'the other zones were never on the bad revision');
    console.log(`# [${k.version}] rollback during an outage: waited (${waiting.message}); under AlwaysAllow ${list[0]} replaced while ${victim} (${list[1]}) was down`);
    lost.delete(victim);
  });

  it(`[${k.version}] 64. another zone's pod down past the progress deadline pauses the rollout on that pod; the pod Ready again resumes it by itself, and it completes, never two zones down`, async () => {
    const ns = 'zr-resume';
    const replicas = 6;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    /** `lost` stands for a node lost in another zone: its pod never turns Ready while there. */
    const lost = new Set<string>();
    stops.push(kube.kubelet(ns, 300, 1000, (p) => !lost.has(p.metadata.name)));
    const sts = statefulSet(ns, 'db', replicas, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'OnDelete' } });
    sts.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true', 'zonekeeper.io/zone-rollout-progress-deadline-seconds': '10' };
    await kube.create(sts);
    await eventually('6 pods Ready', () => rolled(ns, replicas), 180_000, 500);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ns, 'db');
    const inZone = (z: string) => Array.from({ length: replicas }, (_, i) => `db-${i}`).filter((_, i) => list[i % 3] === z);
    // The outage: the second zone's first pod goes down, then a new template.
    const victim = inZone(list[1]!)[0]!;
    lost.add(victim);
    await kube.call('PATCH', `/api/v1/namespaces/${ns}/pods/${victim}/status`, { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }] } },
      'application/merge-patch+json');
    const watch = podDeletions(ns);
    const sampler = zonesDown(ns, list, replicas);
    const started = Date.now();
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { spec: { template: { metadata: { annotations: { 'e2e/revision': '2' } } } } });
    const pause = await eventually(`the rollout paused on ${victim}`, async () => {
      const raw = (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).metadata.annotations?.['zonekeeper.io/zone-rollout-paused'];
      return raw && JSON.parse(raw) as { revision: string; why: string; waitsOn?: string };
    }, 90_000, 500);
    const pausedAt = (Date.now() - started) / 1000;
    assert.equal(pause.waitsOn, victim, pause.why);
    assert.equal(watch.deleted.length, 0, 'nothing evicted while another zone is down');
    // The node is back: the pod turns Ready, and the rollout goes on with no one touching the annotation.
    lost.delete(victim);
    const back = Date.now();
    await eventually('the pause removed by zonekeeper', async () => (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).metadata.annotations?.['zonekeeper.io/zone-rollout-paused'] === undefined, 60_000, 500);
    const resumedAfter = (Date.now() - back) / 1000;
    await eventually('every pod on revision 2 and Ready', () => rolled(ns, replicas), 120_000, 500);
    const took = (Date.now() - started) / 1000;
    const samples = await sampler.stop();
    await watch.stop();
    const twoZones = samples.filter((z) => z.length > 1);
    const resumed = (await kube.list('v1', 'Event', ns)).find((e) => e.reason === 'ZoneRolloutResumed');
    console.log(`# [${k.version}] outage pause: paused at ${pausedAt.toFixed(1)} s on ${victim}; resumed ${resumedAfter.toFixed(1)} s after it was back; done by ${took.toFixed(1)} s, evicting ${watch.deleted.map((d) => d.name).join(', ')}; ${samples.length} samples, ${twoZones.length} with two zones down`);
    assert.match(resumed?.message ?? '', new RegExp(`pod ${victim}, which the rollout paused on, is available again`));
    assert.deepEqual(watch.deleted.map((d) => d.name).sort(), Array.from({ length: replicas }, (_, i) => `db-${i}`).sort(), 'every pod replaced once');
    assert.equal(twoZones.length, 0, `never two zones down: ${JSON.stringify(twoZones.slice(0, 3))}`);
  });

  it(`[${k.version}] 63. a rollback behind its own bad pod (issue 65, point 3): revision 2 rolls its first zone, a pod of the second never turns Ready and the rollout pauses; rolled back, that pod goes first, and the rollback completes, never two zones down; under the eviction webhook with neither client CA nor trustNetwork, zonekeeper's own evictions skip it and are judged in process, another's is refused`, async (t) => {
    const ns = 'zr-rollback';
    const replicas = 6;
    // zonekeeper as its ServiceAccount, the webhook as the component declares it; no admission.trustNetwork, no client CA.
    const { port, admission } = await admissionConfig('zonekeeper-system/zonekeeper-webhook-tls');
    delete admission.trustNetwork;
    admission.certificate.evictionWebhookConfiguration = EVICTION_WEBHOOK;
    await cp.restartZonekeeperAs(managedRbac(cp, 'zone-disruption'), { ...CONFIG, admission });
    // Pass or fail, zonekeeper back as before for the cases that follow (the webhook covered only this namespace).
    t.after(async () => {
      await kube.delete('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, EVICTION_WEBHOOK).catch(() => {});
      await cp.zonekeeper!.stop();
      await cp.startZonekeeper(CONFIG);
    });
    await kube.create(evictionWebhookConfiguration(port));
    await eventually('zonekeeper wrote the eviction webhook\'s caBundle', async () =>
      !!(await kube.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, EVICTION_WEBHOOK)).webhooks[0].clientConfig.caBundle, 60_000);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [EVICTIONS_LABEL]: 'enabled' } } });
    let good = '';
    // db-4 (the second zone's first batch) never starts on any revision but the first.
    stops.push(kube.kubelet(ns, 300, 1000, (p) => p.metadata.name !== 'db-4' || !good || p.metadata.labels?.['controller-revision-hash'] === good));
    const sts = statefulSet(ns, 'db', replicas, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'OnDelete' } });
    // Batches of 1 then 2 in each zone of 2; a pod of the rollout not Ready 15 s after its creation pauses it. Opted in to the gate too.
    sts.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true', 'zonekeeper.io/zone-rollout-progress-deadline-seconds': '15', 'zonekeeper.io/zone-disruption-budget': 'zone' };
    await kube.create(sts);
    await eventually('6 pods Ready', () => rolled(ns, replicas), 180_000, 500);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ns, 'db');
    good = (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).status.updateRevision as string;
    const inZone = (z: string) => Array.from({ length: replicas }, (_, i) => `db-${i}`).filter((_, i) => list[i % 3] === z);
    assert.deepEqual(inZone(list[1]!), ['db-1', 'db-4']);
    const watch = podDeletions(ns);
    const sampler = zonesDown(ns, list, replicas);
    const started = Date.now();

    // Revision 2: the first zone rolled, then db-4 replaced and never Ready: the rollout pauses with db-4 named.
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { spec: { template: { metadata: { annotations: { 'e2e/revision': '2' } } } } });
    const bad = await eventually('revision 2', async () => {
      const s = await kube.get('apps/v1', 'StatefulSet', ns, 'db');
      return s.status?.observedGeneration === s.metadata.generation && s.status.updateRevision !== good && s.status.updateRevision as string;
    }, 30_000);
    const pause = await eventually('the rollout paused on db-4', async () => {
      const raw = (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).metadata.annotations?.['zonekeeper.io/zone-rollout-paused'];
      return raw && JSON.parse(raw) as { revision: string; why: string };
    }, 90_000, 500);
    const pausedAt = (Date.now() - started) / 1000;
    assert.equal(pause.revision, bad);
    assert.match(pause.why, /db-4/);
    const forward = watch.deleted.map((d) => d.name);
    assert.deepEqual(forward, [...inZone(list[0]!).reverse(), 'db-4'], 'the first zone, highest ordinal first, then the second zone\'s first batch');
    assert.ok((await kube.list('v1', 'Event', ns)).some((e) => e.reason === 'ZoneRolloutPaused'), 'a ZoneRolloutPaused Event');

    // Back to revision 1 exactly: the StatefulSet controller gives it its old hash; db-4, down, goes first.
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { spec: { template: { metadata: { annotations: { 'e2e/revision': null } } } } });
    await eventually('the rollback\'s update revision is revision 1', async () => (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).status?.updateRevision === good, 30_000);
    await eventually('every pod on revision 1 and Ready', () => rolled(ns, replicas), 60_000, 500);
    const took = (Date.now() - started) / 1000;
    const samples = await sampler.stop();
    await watch.stop();
    const back = watch.deleted.slice(forward.length);
    const twoZones = samples.filter((z) => z.length > 1);
    const annotations = (await kube.get('apps/v1', 'StatefulSet', ns, 'db')).metadata.annotations ?? {};
    console.log(`# [${k.version}] rollback behind its own bad pod: paused at ${pausedAt.toFixed(1)} s (${pause.why}); rolled back by ${took.toFixed(1)} s, evicting ${back.map((d) => d.name).join(', ')}; ${samples.length} samples, ${twoZones.length} with two zones down`);
    assert.equal(back[0]?.name, 'db-4', 'its own down pod first');
    assert.deepEqual(back.map((d) => d.name).slice(1).sort(), inZone(list[0]!).sort(), 'then the first zone\'s pods, each once');
    assert.ok(back.every((d) => d.revision === bad), 'only pods of revision 2 evicted');
    assert.equal(annotations['zonekeeper.io/zone-rollout-paused'], undefined, 'the pause record of revision 2 removed');
    assert.equal(twoZones.length, 0, `never two zones down: ${JSON.stringify(twoZones.slice(0, 3))}`);

    // Its own evictions were judged in process and never reached the webhook (which could not have authenticated them).
    const metrics = (await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text()).split('\n');
    const counted = (prefix: string) => metrics.filter((l) => l.startsWith(`zonekeeper_evictions_total{${prefix}`)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    assert.ok(counted('asker="zonekeeper",outcome="allowed"') >= watch.deleted.length, `every eviction judged in process: ${metrics.filter((l) => l.startsWith('zonekeeper_evictions_total{')).join('; ')}`);
    assert.equal(counted('asker="api"'), 0, 'the webhook judged none of them');
    // Another identity's eviction (the admin's, as kubectl drain) still goes to the webhook and is refused.
    const db0 = await kube.get('v1', 'Pod', ns, 'db-0');
    const theirs = await cp.api.request('POST', `/api/v1/namespaces/${ns}/pods/db-0/eviction`, {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'db-0', namespace: ns } }), contentType: 'application/json', timeoutMs: 10_000,
    });
    console.log(`# [${k.version}] neither client CA nor trustNetwork: ${watch.deleted.length} of zonekeeper's evictions judged in process (${counted('asker="zonekeeper",outcome="allowed"')} allowed), 0 by the webhook; the admin's eviction of db-0: ${theirs.status}`);
    assert.equal(theirs.status, 429, theirs.body);
    assert.match(JSON.parse(theirs.body).message, /admission webhook "evictions\.zonekeeper\.io" denied the request: zonekeeper: the caller is not known to be kube-apiserver/);
    const still = await kube.get('v1', 'Pod', ns, 'db-0');
    assert.ok(still.metadata.uid === db0.metadata.uid && !still.metadata.deletionTimestamp, 'db-0 stays');
  });

  it(`[${k.version}] 61. the Lease holder killed mid-rollout: another replica goes on from the cluster; no pod of the new revision is ever evicted (no step twice), every old one is (none lost), never two zones down`, async () => {
    const ns = 'zr-handover';
    const replicas = 12;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    stops.push(kube.kubelet(ns, 300, READY_AFTER_MS));
    const second = await cp.startReplica('zonekeeper-2', CONFIG);
    stops.push(() => second.stop());
    const sts = statefulSet(ns, 'db', replicas, { schedulerName: SCHEDULER }, { updateStrategy: { type: 'OnDelete' } });
    // Batches of 1, 2, 1 in each zone of 4: nine steps to hand over in the middle of.
    sts.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true' };
    await kube.create(sts);
    await eventually('12 pods Ready', () => rolled(ns, replicas), 180_000, 1000);
    const list = await kube.frozenZones('apps/v1', 'StatefulSet', ns, 'db');
    const holder = async () => (await kube.get('coordination.k8s.io/v1', 'Lease', 'default', 'zonekeeper-writers')).spec.holderIdentity as string;
    const before = await holder();

    const watch = podDeletions(ns);
    const { deleted } = watch;
    const sampler = zonesDown(ns, list, replicas);
    await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { spec: { template: { metadata: { annotations: { 'e2e/restartedAt': new Date().toISOString() } } } } });
    const revision = await eventually('the new update revision', async () => {
      const s = await kube.get('apps/v1', 'StatefulSet', ns, 'db');
      return s.status?.observedGeneration === s.metadata.generation && s.status.updateRevision;
    }, 30_000);
    // Mid-rollout: once zone-b's first batch is gone, the holder is killed (its Events may be lost with it; the watch is not).
    await eventually('four pods evicted', async () => deleted.length >= 4, 120_000, 200);
    const killedAt = deleted.length;
    const leads = async (z: Zonekeeper) => /^zonekeeper_leader 1$/m.test(await (await fetch(`${z.admin}/metrics`)).text());
    const killed = await leads(cp.zonekeeper!) ? 'zonekeeper' : await leads(second) ? 'zonekeeper-2' : 'neither';
    assert.notEqual(killed, 'neither', 'one replica holds the Lease');
    if (killed === 'zonekeeper-2') await second.stop('SIGKILL');
    else {
      await cp.zonekeeper!.stop('SIGKILL');
      // The scheduler's extender comes back at once; the Lease goes to whichever replica takes it first.
      await cp.startZonekeeper(CONFIG);
    }
    await eventually('all 12 rolled', () => rolled(ns, replicas), 300_000, 1000);
    const after = await holder();
    const samples = await sampler.stop();
    await watch.stop();
    const twoZones = samples.filter((z) => z.length > 1);
    console.log(`# [${k.version}] holder ${killed} (${before}) SIGKILLed after ${killedAt} evictions; finished under ${after}; ${deleted.length} pods deleted, ${samples.length} samples, ${twoZones.length} with two zones down`);
    // Each replica's own account of its batches (the revision it planned for, the pods): where a step twice came from.
    const batches = [cp.zonekeeper!.log, second.log].flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.includes('zone rollout batch evicted') || l.includes('leading')))
      .map((l) => l.slice(0, 300));
    assert.equal(deleted.filter((d) => d.revision === revision).length, 0,
      `no pod of the new revision evicted: ${JSON.stringify(deleted.filter((d) => d.revision === revision))}; deleted in order ${JSON.stringify(deleted)}; revision ${revision}; the replicas said:\n${batches.join('\n')}`);
    assert.deepEqual(deleted.map((d) => d.name).sort(), Array.from({ length: replicas }, (_, i) => `db-${i}`).sort(), 'each old pod deleted once');
    assert.equal(twoZones.length, 0);
    assert.ok(killedAt < replicas, 'the holder was killed before the rollout ended');
  });
});
