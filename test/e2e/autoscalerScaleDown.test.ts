// End-to-end with a real Cluster Autoscaler scaling down (kwok provider, one node group of at least
// one node per pool and zone) while the zone disruption budget judges its evictions
// (docs/operations.md#the-zone-disruption-budget). Zones a and b each have two nodes with one
// member each; once the fillers that made them are gone, one node per zone is unneeded (its member
// fits beside the other), and the autoscaler drains both at once (--max-drain-parallelism=2). Its
// evictions must still go a zone at a time, whether the first zone's member is back within the
// autoscaler's eviction time or not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { boundAndNodes, CA_UNPACK, CA_UNPACKED, kubeletOfNewNodes, nodeGroupTemplate, pooledStatefulSet, startClusterAutoscaler, systemNodes, ZONE } from './autoscaling.js';
import { ADMISSION_LABEL, admissionConfig, admissionReady, EVICTION_WEBHOOK, EVICTIONS_LABEL, evictionWebhookConfiguration, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { podUp, sampleDownZones } from './disruptions.js';
import { eventually, Kube, type Obj } from './kube.js';
import { metricSum } from './seatPolicy.js';
import { tearDown, zoneCounts, ZONES } from './workloads.js';

/** The taint the autoscaler puts on a node it is about to drain and delete. */
const TO_BE_DELETED = 'ToBeDeletedByClusterAutoscaler';
/** How long the autoscaler retries a refused eviction before it gives the node up (its default is 2 min). */
const EVICTION_SECONDS = 25;
/**
 * How the autoscaler scales down here: soon, two drains at once (its default is 1), nodes under 60%
 * of their CPU requested; a node found unremovable (a filler on it) or given up checked again after
 * 5 s, not 5 min or 3 min.
 */
const SCALE_DOWN = [
  '--scale-down-enabled=true', '--scale-down-unneeded-time=5s', '--scale-down-delay-after-add=0s',
  '--scale-down-utilization-threshold=0.6', '--max-drain-parallelism=2', '--unremovable-node-recheck-timeout=5s',
  `--max-pod-eviction-time=${EVICTION_SECONDS}s`, '--scale-down-delay-after-failure=5s',
];
/** Each case's pool and namespace: its own node groups. */
const POOLS = ['db', 'slow'];

/** A bare pod of `pool` in `zone` asking 2.1 of a node's 4 CPUs: two never share a node, one fits beside a member (1.8). */
const filler = (namespace: string, pool: string, zone: string, i: number): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `filler-${zone.slice(5)}-${i}`, namespace, labels: { app: 'filler' } },
  spec: { nodeSelector: { pool, [ZONE]: zone }, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '2100m' } } }] },
});

// This autoscaler watches resource.k8s.io/v1, served from Kubernetes 1.34 on.
const versions = kubeVersions().filter((k) => k.minor >= 34);
if (!CA_UNPACKED && process.env.CI) throw new Error(`CI runs the Cluster Autoscaler e2e: no ${CA_UNPACK}`);

for (const k of versions) describe(`[${k.version}] a real Cluster Autoscaler scaling down nodes in two zones: its evictions go a zone at a time`, { skip: CA_UNPACKED ? false : `no ${CA_UNPACK}` }, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;
  let autoscaler: string;

  before(async () => {
    const webhook = await admissionConfig();
    webhook.admission.certificate.evictionWebhookConfiguration = EVICTION_WEBHOOK;
    await cp.up([{ name: 'default-scheduler', extender: false }], { admission: webhook.admission });
    kube = new Kube(cp.api);
    await kube.create(webhookConfiguration(webhook.port));
    await kube.create(evictionWebhookConfiguration(webhook.port));
    await systemNodes(kube);
    const groups = POOLS.flatMap((pool) => ZONES.map((z) => nodeGroupTemplate(pool, z, { min: 1, max: 2 })));
    autoscaler = (await startClusterAutoscaler(cp, kube, groups, SCALE_DOWN)).address;
    stopKubelet = kubeletOfNewNodes(kube);
    await admissionReady(kube, cp.zonekeeper!.admin);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  /**
   * Six members of `pool` (namespace of the same name), Ready `readyAfterMs` after binding, laid
   * out as above; the fillers deleted; resolves once a node of zone-a and one of zone-b are gone
   * and every member is Ready on its pin, with what was seen meanwhile.
   */
  const scaleDown = async (pool: string, readyAfterMs: number) => {
    const ns = pool;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [ADMISSION_LABEL]: 'enabled', [EVICTIONS_LABEL]: 'enabled' } } });
    const stopPods = kube.kubelet(ns, 300, readyAfterMs);
    try {
      // Two fillers per zone a and b: the autoscaler adds two nodes in each.
      const fillers = ['zone-a', 'zone-b'].flatMap((z) => [filler(ns, pool, z, 1), filler(ns, pool, z, 2)]);
      for (const f of fillers) await kube.create(f);
      await eventually('4 fillers bound', async () => (await kube.podsOf(ns, 'app=filler')).filter((p) => p.spec.nodeName).length === 4, 240_000, 1000);
      // The members' own PDB lets two go at once: only the zone budget keeps them a zone apart.
      await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: ns }, spec: { maxUnavailable: 2, selector: { matchLabels: { app: 'db' } } } });
      // Six members, 1.8 CPU each: one beside each filler in a and b, two on one new node in c.
      const sts = pooledStatefulSet(ns, 'db', pool, 6, { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1800m' } } }] });
      delete sts.spec.template.spec.schedulingGates;
      sts.metadata.annotations = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': 'zone' };
      await kube.create(sts);
      assert.equal((await boundAndNodes(kube, ns, 'db', pool, 6)).nodes, 'zone-a=2 zone-b=2 zone-c=1');
      await eventually('6 members Ready', async () => (await kube.podsOf(ns, 'app=db')).filter(podUp).length === 6, 120_000, 1000);
      const zoneOf = async () => new Map((await kube.list('v1', 'Node', undefined, `pool=${pool}`)).map((n) => [n.metadata.name as string, n.metadata.labels[ZONE] as string]));
      const first = await zoneOf();
      const members = await kube.podsOf(ns, 'app=db');
      for (const [node, zone] of first) {
        if (zone !== 'zone-c') assert.equal(members.filter((p) => p.spec.nodeName === node).length, 1, `one member on ${node}`);
      }

      const refusedBefore = await metricSum(cp.zonekeeper!.admin, 'zonekeeper_evictions_total', 'outcome="refused"');
      for (const f of fillers) await kube.delete('v1', 'Pod', ns, f.metadata.name, 0);
      const started = Date.now();
      const done = eventually('a node of zone-a and one of zone-b removed, 6 members Ready on their pins', async () => {
        const zones = await zoneOf();
        if (zoneCounts(zones.values()) !== 'zone-a=1 zone-b=1 zone-c=1') return undefined;
        const pods = await kube.podsOf(ns, 'app=db');
        return pods.length === 6 && pods.every((p) => podUp(p) && zones.get(p.spec.nodeName) === ZONES[Number(p.metadata.name.split('-').pop()) % 3]);
      }, 300_000, 1000);
      // Whether, at one moment, a node of zone-a and one of zone-b were both being drained.
      let together = false;
      let finished = false;
      void done.finally(() => { finished = true; }).catch(() => {});
      const draining = (async () => {
        while (!finished) {
          const tainted = (await kube.list('v1', 'Node', undefined, `pool=${pool}`)).filter((n) => (n.spec?.taints ?? []).some((t: Obj) => t.key === TO_BE_DELETED));
          if (new Set(tainted.map((n) => n.metadata.labels[ZONE])).size > 1) together = true;
          await new Promise((r) => setTimeout(r, 500));
        }
      })();
      const samples = await sampleDownZones(kube, ns, 'db', 6, ZONES, done);
      await done;
      await draining;
      const seconds = (Date.now() - started) / 1000;
      const left = await zoneOf();
      // Each eviction the budget judged, per member: when, and its outcome; a refused one shows the autoscaler's retries.
      const attempts: string[] = [];
      for (let i = 0; i < 6; i++) {
        const { decisions } = await (await fetch(`${cp.zonekeeper!.admin}/debug/decisions?pod=${ns}/db-${i}`)).json() as Obj;
        const judged = (decisions as Obj[]).filter((d) => d.verb === 'eviction' && Date.parse(d.at) >= started);
        if (judged.length > 0) attempts.push(`db-${i}: ${judged.map((d) => `${d.outcome} +${((Date.parse(d.at) - started) / 1000).toFixed(1)} s`).join(', ')}`);
      }
      // The autoscaler's own Events here, and how many Events or lines of its log quote the refusal.
      const events = (await kube.list('v1', 'Event', ns)).filter((e) => (e.source?.component ?? e.reportingComponent) === 'cluster-autoscaler');
      const quoting = (text: string) => /zone disruption budget/.test(text);
      const logLines = readFileSync(join(cp.dir, 'cluster-autoscaler.log'), 'utf8').split('\n').filter((l) => quoting(l) && l.includes(ns));
      const reasons = zoneCounts(events.map((e) => `${e.reason}(${e.involvedObject.kind})`));
      const ended = {
        gone: [...first].filter(([n]) => !left.has(n)), together, samples, twoDown: samples.filter((s) => s.length > 1),
        refused: await metricSum(cp.zonekeeper!.admin, 'zonekeeper_evictions_total', 'outcome="refused"') - refusedBefore,
        failed: events.filter((e) => e.reason === 'ScaleDownFailed'),
      };
      console.log(`# [${k.version}] ${pool} (members Ready ${readyAfterMs / 1000} s after binding): the Cluster Autoscaler removed ${ended.gone.map(([n, z]) => `${n} (${z})`).join(', ')} in ${seconds.toFixed(0)} s `
        + `(fillers deleted to members Ready on their pins); drained together: ${together}; ${samples.length} samples, ${ended.twoDown.length} with two zones down; ${ended.refused} refusal(s) by the budget`);
      console.log(`# [${k.version}] ${pool}: evictions judged (the autoscaler's retries): ${attempts.join('; ')}; its Events: ${reasons}; quoting the refusal: ${events.filter((e) => quoting(e.message ?? '')).length} of its Events, ${logLines.length} line(s) of its log${logLines[0] ? ` (${logLines[0].slice(0, 300)})` : ''}; `
        + `its evictions so far: ${await metricSum(autoscaler, 'cluster_autoscaler_evicted_pods_total', 'eviction_result="succeeded"')} succeeded, ${await metricSum(autoscaler, 'cluster_autoscaler_evicted_pods_total', 'eviction_result="failed"')} failed`);
      for (const e of ended.failed) console.log(`# [${k.version}] ${pool}: ${e.reason} on ${e.involvedObject.kind} ${e.involvedObject.name}: ${e.message}`);
      return ended;
    } finally {
      await stopPods();
    }
  };

  /** What every case holds: never two zones down, a node gone in each of zone-a and zone-b, both drained at once, the budget refused. */
  const zoneAtATime = (ended: Awaited<ReturnType<typeof scaleDown>>) => {
    assert.deepEqual(ended.twoDown, [], 'no moment with members of two zones unavailable');
    assert.deepEqual(ended.gone.map(([, z]) => z).sort(), ['zone-a', 'zone-b'], 'one node removed in each of zone-a and zone-b');
    assert.ok(ended.together, 'the autoscaler drained a node of zone-a and one of zone-b at the same time');
    assert.ok(ended.refused > 0, 'the budget refused an eviction: the second zone waited for the first');
  };

  it('two unneeded nodes, in zone-a and zone-b, drained together: never two zones down, both nodes removed, every member Ready on its pin', async () => {
    const ended = await scaleDown(POOLS[0]!, 3000);
    zoneAtATime(ended);
    assert.deepEqual(ended.failed.map((e) => e.message), [], 'the autoscaler\'s retries got through within its eviction time');
  });

  it(`the first zone's member back only after the autoscaler's eviction time (${EVICTION_SECONDS} s): it gives the second zone's node up, keeps it, and removes it on a later try; never two zones down`, async () => {
    const ended = await scaleDown(POOLS[1]!, (EVICTION_SECONDS + 15) * 1000);
    zoneAtATime(ended);
    assert.ok(ended.failed.length > 0, 'the autoscaler gave a node up (ScaleDownFailed) while the budget refused');
  });
});
