// The zone gate's decision path at 5,000 nodes and 150,000 pods (docs/design.md#the-zone-gate):
// a burst of 1,000 gated pods (500 StatefulSet seats, 500 Deployment pods under zone
// preferences) decided one after another as the keeper does, each from the cache to its patch.
// The write itself is one PATCH to the API server and is not in these figures.
import { parseConfig } from '../../src/config.js';
import { healthObjects } from './health.js';
import { fmt } from './measure.js';

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
const BURST = 1000;

export async function gateCase(): Promise<void> {
  const { slimPod } = await dist('cluster/convert.js');
  const { addObject, memorySource } = await dist('cluster/source.js');
  const { ClusterStore } = await dist('cluster/store.js');
  const { memoryActuator } = await dist('actuator/actuator.js');
  const { createExtender } = await dist('extender/extender.js');
  const { createMetrics } = await dist('metrics.js');
  const { createLogger } = await dist('logger.js');
  const { gatePatch } = await dist('placement/zoneGate.js');
  const objects = healthObjects();
  const store = new ClusterStore();
  for (const o of objects) addObject(store, o);
  const log = createLogger('silent');
  const metrics = createMetrics();
  const extender = createExtender({ source: memorySource(store, 'bench'), actuator: memoryActuator(store, log, metrics), metrics, log, config: parseConfig({}) });
  // New pods of existing workloads, gated: a seat past each StatefulSet's 30, a pod more of each Deployment.
  const templates = objects.filter((o) => o.kind === 'Pod' && o.metadata.name.endsWith('-0'));
  const sts = templates.filter((p) => p.metadata.ownerReferences[0].kind === 'StatefulSet').slice(0, BURST / 2);
  const rs = templates.filter((p) => p.metadata.ownerReferences[0].kind === 'ReplicaSet').slice(0, BURST / 2);
  const gated = [...sts, ...rs].map((p, i) => {
    const name = p.metadata.name.replace(/-0$/, i < sts.length ? '-30' : `-gated`);
    const raw = {
      ...p, metadata: { ...p.metadata, name, uid: `gated-${i}`, resourceVersion: '1', labels: { ...p.metadata.labels, 'apps.kubernetes.io/pod-index': '30' } },
      spec: { ...p.spec, nodeName: undefined, schedulingGates: [{ name: 'zonekeeper.io/zone' }] },
      status: { phase: 'Pending' },
    };
    addObject(store, raw);
    return raw;
  });
  const perPod: number[] = [];
  const kinds = new Map<string, number>();
  const t0 = performance.now();
  for (const raw of gated) {
    const t = performance.now();
    const d = await extender.decideGate(slimPod(raw));
    if (d.kind !== 'wait') gatePatch(raw, d);
    perPod.push(performance.now() - t);
    kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
  }
  const total = performance.now() - t0;
  const sorted = [...perPod].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!, p99 = sorted[Math.floor(sorted.length * 0.99)]!;
  console.log(`\nzone gate: ${BURST} gated pods decided over ${store.nodeCount()} nodes and ${store.count('pods') - BURST} cached pods (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`per pod, from the cache to its patch: median ${fmt(median, 3)} ms, p99 ${fmt(p99, 3)} ms; the burst at ${fmt(BURST / (total / 1000), 0)} pods/s before the writes`);
}
