import { pickPods } from '../support/placement.js';
// One deletion-cost recompute for a 5,000-pod workload (issue 11 §3): what the controller does
// on every pod change of a managed Deployment.
import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { parseConfig } from '../../src/common/config.js';
import { costManagedModel, deletionCosts } from '../../src/placement/downscale.js';
import { nodeName, rawNode, rawPod, ZONES } from './cluster.js';
import { target } from './targets.js';
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
      for (const w of store.allWorkloads()) {
        const model = costManagedModel(w, store, settings);
        if (model) count = deletionCosts(model, store).size;
      }
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const median = times[2]!;
    console.log(`${label.padEnd(20)} ${fmt(median, 1).padStart(9)} ms for ${count} pods`);
    target(`deletion costs, ${count} pods: ${label.trim()}`, median, 50, true, ' ms');
  }
  // The pod picker (KEP-3189) asked for every pod of a WorkloadSpread Deployment: its whole
  // removal order, as a scale to 0 asks; Kruise's costs move with every pod removed.
  const store = costCluster({});
  addObject(store, {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'ws', namespace: 'default', uid: 'ws' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      subsets: ZONES.map((zone, i) => ({ name: zone, maxReplicas: i === 2 ? null : PODS / 4, requiredNodeSelectorTerm: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] } })),
    },
  });
  const names = [...store.podsOwnedBy('ReplicaSet', 'default', 'web-rs')].map((p) => p.name);
  const times: number[] = [];
  let chosen = 0;
  for (let round = 0; round < 5; round++) {
    const t = performance.now();
    chosen = pickPods('default', names.length, names, store, settings).chosen_pods.length;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`${'WorkloadSpread picker'.padEnd(20)} ${fmt(times[2]!, 1).padStart(9)} ms for ${chosen} of ${names.length} pods chosen, the whole removal order`);
  target('WorkloadSpread picker: the whole removal order', times[2]!, 50, true, ' ms');
}
