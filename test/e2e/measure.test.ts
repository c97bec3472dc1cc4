// Measurement, printed and not asserted as a time: the pods of one StatefulSet over nodes in 3
// zones, through the zonekeeper scheduler, through one that uses only the in-tree
// PodTopologySpread (zone, maxSkew 1), and through zonekeeper's configuration calling a bare
// echo extender instead (scoring nothing, then scoring as zonekeeper does); then the zones left
// after scaling each down to 3.
// 300 pods over 100 nodes on every version; 1,000 pods over 5,000 Node objects (no kubelets)
// on the newest one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoExtender } from '../support/echoExtender.js';
import { processCpuSeconds } from '../support/proc.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

function statefulSet(name: string, schedulerName: string, spread: boolean, PODS: number): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'bench' },
    spec: {
      replicas: PODS, serviceName: name, podManagementPolicy: 'Parallel', selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          schedulerName, terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }],
          ...(spread ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } }] } : {}),
        },
      },
    },
  };
}

const versions = kubeVersions();
const newest = Math.max(...versions.map((k) => k.minor));
// ZK_E2E_SIZES=100 skips the 5,000-node case (it takes a few minutes).
const sizes = (process.env.ZK_E2E_SIZES ?? '100,5000').split(',').map(Number);
const cases = versions.flatMap((k) => [{ k, NODES: 100, PODS: 300 }, ...(k.minor === newest ? [{ k, NODES: 5000, PODS: 1000 }] : [])])
  .filter((c) => sizes.includes(c.NODES));

for (const { k, NODES, PODS } of cases) describe(`throughput at ${NODES} nodes: zonekeeper vs in-tree PodTopologySpread, and zones kept on scale-down on Kubernetes ${k.version}`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const results: Record<string, { seconds: number; podsPerSecond: number; zonesAt3: number }> = {};

  let echo: Awaited<ReturnType<typeof startEchoExtender>>;

  before(async () => {
    echo = await startEchoExtender();
    await cp.up([
      { name: 'zonekeeper', extender: true }, { name: 'spread', extender: false },
      { name: 'echo', extender: true, extenderUrl: `${echo.url.origin}/third` },
      { name: 'echo-scored', extender: true, extenderUrl: `${echo.url.origin}/scored` },
    ], { logLevel: 'info' });
    kube = new Kube(cp.api);
    await cp.diagnosed(`[${k.version}, ${NODES} nodes] setup`, async () => {
      // 50 at a time: one API server and etcd share the machine with everything else.
      for (let i = 0; i < NODES; i += 50) await Promise.all(Array.from({ length: Math.min(50, NODES - i) }, (_, j) => kube.addNode(`node-${i + j}`, ZONES[(i + j) % 3]!)));
      zones = await kube.nodeZones();
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      await eventually('zonekeeper caches the nodes', async () => {
        const cache = await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj;
        return cache.kinds.find((k: Obj) => k.kind === 'nodes').objects === NODES;
      }, 120_000);
    });
  });

  after(async () => {
    echo?.child.kill();
    await cp.down(!!process.env.ZK_E2E_KEEP);
  });

  /**
   * A read for the printed figures (zonekeeper's admin port, a kube-scheduler's metrics). A
   * failed attempt is printed with its cause and the control plane's state (one CI run lost
   * zonekeeper's /metrics once: 'fetch failed', cause unknown), then retried; three failures
   * fail the test.
   */
  async function figures(what: string, read: () => Promise<string>): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (err) {
        const cause = (err as { cause?: Error }).cause?.message ?? '';
        console.log(`# ${what} failed (attempt ${attempt}): ${(err as Error).message} ${cause}\n${cp.diagnosis().replace(/^/gm, '# ')}`);
        if (attempt === 3) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
  const adminText = (path: string) => figures(`GET zonekeeper ${path}`, async () => (await fetch(`${cp.zonekeeper!.admin}${path}`)).text());

  /**
   * kube-scheduler's scheduling_algorithm_duration_seconds (sum, count): it has no metric of its
   * own for extenders (none in 1.36's binary), but this histogram times the filtering and
   * scoring of a pod, the extender's calls included.
   */
  async function algorithmSeconds(scheduler: string): Promise<{ sum: number; count: number }> {
    const text = await figures(`kube-scheduler ${scheduler} /metrics`, () => cp.schedulerMetrics(scheduler));
    const read = (what: string) => Number(new RegExp(`^scheduler_scheduling_algorithm_duration_seconds_${what}(?:\\{\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { sum: read('sum'), count: read('count') };
  }

  /** The control plane's processes and the echo extender's: the floor's own CPU is part of what it costs. */
  const cpuSeconds = (): Record<string, number> => ({ ...cp.cpuSeconds(), 'echo extender': processCpuSeconds(echo.child.pid!) });

  /** One profile's throughput over another's; a profile that failed is named, not a cascade of TypeErrors. */
  function ratio(over: string, under: string): string {
    const [a, b] = [results[over], results[under]];
    if (!a || !b) return `none (the ${a ? under : over} profile failed, above)`;
    return (a.podsPerSecond / b.podsPerSecond).toFixed(2);
  }

  function run(name: string, scheduler: string, spread: boolean): Promise<void> {
    return cp.diagnosed(`[${k.version}, ${NODES} nodes] ${name}`, () => measure(name, scheduler, spread));
  }

  async function measure(name: string, scheduler: string, spread: boolean): Promise<void> {
    const started = Date.now();
    const cpuBefore = cpuSeconds();
    const algorithmBefore = await algorithmSeconds(scheduler);
    await kube.create(statefulSet(name, scheduler, spread, PODS));
    await eventually(`${PODS} pods of ${name} bound`, async () => {
      const pods = await kube.podsOf('bench', `app=${name}`);
      return pods.length === PODS && pods.every((p) => p.spec.nodeName);
    }, 600_000, 100);
    const seconds = (Date.now() - started) / 1000;
    // Where the machine's CPU went meanwhile: everything shares its cores.
    const cpuAfter = cpuSeconds();
    const used = Object.entries(cpuAfter).map(([proc, s]) => [proc, s - (cpuBefore[proc] ?? 0)] as const).filter(([, s]) => s >= 0.05).sort((a, b) => b[1] - a[1]);
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: CPU seconds while binding: ${used.map(([proc, s]) => `${proc} ${s.toFixed(1)}`).join(', ')}`);
    const algorithm = await algorithmSeconds(scheduler);
    const attempts = algorithm.count - algorithmBefore.count;
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: kube-scheduler's scheduling algorithm (filter and score, extender calls included): ${attempts} pods, mean ${(((algorithm.sum - algorithmBefore.sum) / attempts) * 1000).toFixed(2)} ms`);
    await kube.scale('StatefulSet', 'bench', name, 3);
    const left = await eventually(`${name} down to 3`, async () => {
      await kube.reapTerminating('bench');
      const pods = await kube.podsOf('bench', `app=${name}`);
      return pods.length === 3 && pods;
    }, 300_000);
    const zonesAt3 = new Set(left.map((p: Obj) => zones.get(p.spec.nodeName))).size;
    results[name] = { seconds, podsPerSecond: PODS / seconds, zonesAt3 };
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: ${PODS} pods bound in ${seconds.toFixed(1)} s = ${(PODS / seconds).toFixed(1)} pods/s; zones covered after scaling to 3: ${zonesAt3}`);
  }

  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes with the in-tree PodTopologySpread`, async () => {
    await run('spread', 'spread', true);
  });

  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes with zonekeeper, and keeps 3 zones at 3 replicas`, async () => {
    await run('zonekeeper', 'zonekeeper', false);
    assert.equal(results.zonekeeper!.zonesAt3, 3);
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio zonekeeper / PodTopologySpread: ${ratio('zonekeeper', 'spread')} (target >= ${NODES >= 5000 ? '0.9' : '0.8'})`);
    const metrics = await adminText('/metrics');
    for (const verb of ['filter', 'prioritize']) {
      const sum = Number(new RegExp(`zonekeeper_request_duration_seconds_sum\\{verb="${verb}"\\} (\\S+)`).exec(metrics)?.[1]);
      const count = Number(new RegExp(`zonekeeper_request_duration_seconds_count\\{verb="${verb}"\\} (\\S+)`).exec(metrics)?.[1]);
      console.log(`# [${k.version}, ${NODES} nodes] zonekeeper ${verb}: ${count} requests, mean ${((sum / count) * 1000).toFixed(3)} ms inside zonekeeper`);
    }
    const connections = /zonekeeper_http_connections_total\{listener="extender"\} (\S+)/.exec(metrics)?.[1];
    console.log(`# [${k.version}, ${NODES} nodes] kube-scheduler opened ${connections} connections to the extender`);
  });

  // The floor of any extender: the same kube-scheduler configuration calling an extender that
  // passes every third name (as many as zonekeeper passes a pinned pod) and scores nothing.
  // What it costs is kube-scheduler's extender machinery (two HTTP round trips, JSON both
  // ways) plus the bare echo.
  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes through a bare echo extender`, async () => {
    await run('echo', 'echo', false);
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio echo extender / PodTopologySpread: ${ratio('echo', 'spread')}; zonekeeper / echo extender: ${ratio('zonekeeper', 'echo')}`);
  });

  // The same echo, with prioritize answering as zonekeeper does for a pinned pod: what
  // kube-scheduler itself spends on decoding and adding up ~1,500 scores per pod, which no
  // extender that scores nodes escapes.
  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes through an echo extender that scores as zonekeeper does`, async () => {
    await run('echo-scored', 'echo-scored', false);
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio scoring echo / PodTopologySpread: ${ratio('echo-scored', 'spread')}; zonekeeper / scoring echo: ${ratio('zonekeeper', 'echo-scored')}`);
  });
});
