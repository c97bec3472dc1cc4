// The zone gate at 5,000 nodes and 150,000 pods (docs/design.md#the-zone-gate): a burst of
// 1,000 gated pods (500 StatefulSet seats, 500 Deployment pods under zone preferences) decided
// one after another as the keeper does, each from the cache to its patch; then the keeper's
// whole path, bursts of 1,000 arriving in the cache until each PATCH is answered by an API
// server on 127.0.0.1 (the test's fake: what a real one costs is in docs/performance.md).
import { parseConfig } from '../../src/common/config.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { healthObjects } from './health.js';
import { fmt } from './measure.js';

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const BURST = 1000;

export async function gateCase(): Promise<void> {
  const { slimPod } = await dist('cluster/convert.js');
  const { addObject, memorySource } = await dist('cluster/source.js');
  const { ClusterStore } = await dist('cluster/store.js');
  const { memoryActuator } = await dist('actuator/actuator.js');
  const { decisionService } = await dist('decision/service.js');
  const { decideGate } = await dist('controllers/specDecisionOf.js');
  const { createMetrics } = await dist('metrics/metrics.js');
  const { createLogger } = await dist('common/logger.js');
  const { gatePatch } = await dist('placement/zoneGate.js');
  const objects = healthObjects();
  const store = new ClusterStore();
  for (const o of objects) addObject(store, o);
  const log = createLogger('silent');
  const metrics = createMetrics();
  const service = decisionService({ source: memorySource(store, 'bench'), actuator: memoryActuator(store, log, metrics), metrics, log, config: parseConfig({}) });
  // New pods of existing workloads, gated: a seat past each StatefulSet's 30, a pod more of each Deployment.
  const templates = objects.filter((o) => o.kind === 'Pod' && o.metadata.name.endsWith('-0'));
  const sts = templates.filter((p) => p.metadata.ownerReferences[0].kind === 'StatefulSet').slice(0, BURST / 2);
  const rs = templates.filter((p) => p.metadata.ownerReferences[0].kind === 'ReplicaSet').slice(0, BURST / 2);
  /** The burst's pods: seat `ordinal` of each StatefulSet, one more pod of each Deployment. */
  const burst = (ordinal: number) => [...sts, ...rs].map((p, i) => {
    const name = p.metadata.name.replace(/-0$/, i < sts.length ? `-${ordinal}` : `-gated-${ordinal}`);
    return {
      ...p, metadata: { ...p.metadata, name, uid: `gated-${ordinal}-${i}`, resourceVersion: '1', labels: { ...p.metadata.labels, 'apps.kubernetes.io/pod-index': String(ordinal) } },
      spec: { ...p.spec, nodeName: undefined, schedulingGates: [{ name: 'zonekeeper.io/zone' }] },
      status: { phase: 'Pending' },
    };
  });
  const gated = burst(30);
  for (const raw of gated) addObject(store, raw);
  const perPod: number[] = [];
  const kinds = new Map<string, number>();
  const t0 = performance.now();
  for (const raw of gated) {
    const t = performance.now();
    const d = await decideGate(service, slimPod(raw));
    if (d.kind !== 'wait') gatePatch(raw, d);
    perPod.push(performance.now() - t);
    kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
  }
  const total = performance.now() - t0;
  const sorted = [...perPod].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!, p99 = sorted[Math.floor(sorted.length * 0.99)]!;
  console.log(`\nzone gate: ${BURST} gated pods decided over ${store.nodeCount()} nodes and ${store.count('pods') - BURST} cached pods (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`per pod, from the cache to its patch: median ${fmt(median, 3)} ms, p99 ${fmt(p99, 3)} ms; the burst at ${fmt(BURST / (total / 1000), 0)} pods/s before the writes`);

  const { zoneGateKeeper } = await dist('controllers/zoneGateKeeper.js');
  const api = await new FakeApiServer().start();
  const answered = new Map<string, number>();
  const record = api.patches.push.bind(api.patches);
  api.patches.push = (...sent) => {
    for (const p of sent) answered.set(p.path.slice(p.path.lastIndexOf('/') + 1), performance.now());
    return record(...sent);
  };
  const shipped = parseConfig({}).gate.patchesPerSecond;
  const keeperAt = (patchesPerSecond: number) => zoneGateKeeper({
    api: api.client(), source: memorySource(store, 'bench'), decide: (pod: unknown) => decideGate(service, pod), skipForSuccessor() {}, events: { record() {} },
    opts: { intervalSeconds: 5, patchesPerSecond, fallbackEvictionsPerMinute: 0, fallbackDryRun: true }, log, metrics,
  });
  let ordinal = 31;
  for (const [label, patchesPerSecond] of [[`paced as shipped (gate.patchesPerSecond ${shipped})`, shipped], ['unpaced', 1e9]] as const) {
    const keeper = keeperAt(patchesPerSecond);
    keeper.start();
    const pods = burst(ordinal++);
    const created = performance.now();
    for (const raw of pods) {
      api.put(raw, { silently: true });
      addObject(store, api.get('Pod', raw.metadata.namespace, raw.metadata.name));
    }
    while (pods.some((p) => !answered.has(p.metadata.name))) await new Promise((r) => setTimeout(r, 5));
    await keeper.stop();
    const waited = pods.map((p) => answered.get(p.metadata.name)! - created).sort((a, b) => a - b);
    const last = waited.at(-1)!;
    console.log(`the keeper, ${label}: ${BURST} pods arrived at once, each until its PATCH was answered: median ${fmt(waited[Math.floor(BURST / 2)]!, 1)} ms, p99 ${fmt(waited[Math.floor(BURST * 0.99)]!, 1)} ms; ${fmt(BURST / (last / 1000), 0)} pods/s`);
  }

  // A rollout's shape: pods arrive a few at a time while writes are in flight (a pass takes them
  // as they come), 8 bursts' worth at ~1,000 pods/s; the keeper's CPU is what grows with the wait.
  const keeper = keeperAt(1e9);
  keeper.start();
  const trickle = Array.from({ length: 8 }, () => burst(ordinal++)).flat();
  const cpu0 = process.cpuUsage(), started = performance.now();
  for (let i = 0; i < trickle.length; i += 2) {
    for (const raw of trickle.slice(i, i + 2)) {
      api.put(raw, { silently: true });
      addObject(store, api.get('Pod', raw.metadata.namespace, raw.metadata.name));
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  while (trickle.some((p) => !answered.has(p.metadata.name))) await new Promise((r) => setTimeout(r, 5));
  await keeper.stop();
  const cpu = process.cpuUsage(cpu0);
  const lag = trickle.map((p) => answered.get(p.metadata.name)! - started);
  console.log(`the keeper, unpaced, ${trickle.length} pods arriving 2 every 2 ms: all answered after ${fmt(Math.max(...lag), 0)} ms; the process's CPU ${fmt((cpu.user + cpu.system) / 1000 / trickle.length, 3)} ms per pod (decisions, the keeper, the test's API server)`);
  await api.stop();
}
