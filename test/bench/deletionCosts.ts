// One deletion-cost recompute for a 5,000-pod workload (issue 11 §3): what the controller does
// on every pod change of a managed Deployment.
import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { parseConfig } from '../../src/config.js';
import { costManagedWorkloads, deletionCosts } from '../../src/placement/downscale.js';
import { nodeName, rawNode, rawPod } from './cluster.js';
import { fmt } from './measure.js';

const PODS = 5000;

function costCluster(annotations: Record<string, string>): ClusterStore {
  const store = new ClusterStore();
  for (let i = 0; i < 5000; i++) addObject(store, rawNode(i));
  addObject(store, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'd-web', annotations }, spec: { replicas: PODS } });
  addObject(store, {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { replicas: PODS },
    metadata: { name: 'web-rs', namespace: 'default', uid: 'rs-web', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-web', controller: true }] },
  });
  for (let i = 0; i < PODS; i++) {
    const p = rawPod(i, { kind: 'ReplicaSet', name: 'web-rs' }, nodeName((i * 7) % 5000));
    p.metadata.namespace = 'default';
    p.metadata.creationTimestamp = new Date(Date.UTC(2026, 10, 21, 7, 0, i % 60)).toISOString();
    delete p.metadata.labels['apps.kubernetes.io/pod-index'];
    addObject(store, p);
  }
  return store;
}

export function deletionCostCase(): void {
  const settings = parseConfig({}).placement;
  console.log(`\ndeletion costs: one recompute of a ${PODS}-pod Deployment (what every pod change triggers), median of 5`);
  for (const [label, annotations] of [
    ['zone preferences', { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' }],
    ['instance IDs', { 'zonekeeper.io/instance-ids': 'true' }],
  ] as const) {
    const store = costCluster(annotations);
    const times: number[] = [];
    let count = 0;
    for (let round = 0; round < 5; round++) {
      const t = performance.now();
      for (const model of costManagedWorkloads(store, settings)) count = deletionCosts(model, store, settings).size;
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const median = times[2]!;
    console.log(`${label.padEnd(20)} ${fmt(median, 1).padStart(9)} ms for ${count} pods (target <= 50 ms: ${median <= 50 ? 'MET' : 'NOT MET'})`);
  }
}
