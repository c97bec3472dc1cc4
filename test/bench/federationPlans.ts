// zonekeeper karmada's planning cost, in process (the decision service over an in-memory federation view): a full
// pass over 1,000 bindings across 10 members of 100 nodes, and one tenant's binding with a ~600 KiB node affinity (30,000 hostnames)
// across 20 members of 1,000 nodes, planned first and then again (a pod event re-plans it: the node fit is cached).
import { slimNode } from '../../src/cluster/convert.js';
import type { FederationView } from '../../src/cluster/memberClusters.js';
import { KARMADA_KINDS, type SlimBinding, type SlimMemberCluster } from '../../src/cluster/karmada.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { federationService } from '../../src/decision/bindingDecisions.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { node } from '../support/builders.js';
import { fmt } from './measure.js';
import { target } from './targets.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

function member(name: string): SlimMemberCluster {
  return KARMADA_KINDS.clusters.slim!({ metadata: { name }, spec: { zones: ZONES }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }) as SlimMemberCluster;
}

function binding(i: number, replicas: number, nodeClaim?: object): SlimBinding {
  return KARMADA_KINDS.bindings.slim!({
    metadata: { namespace: 'bench', name: `w${i}-deployment`, uid: `u${i}`, generation: 1, resourceVersion: '1' },
    spec: { schedulerName: 'zonekeeper', replicas, resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'bench', name: `w${i}`, uid: `t${i}` },
      replicaRequirements: { resourceRequest: { cpu: '100m' }, ...(nodeClaim ? { nodeClaim } : {}) },
      placement: { replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted', weightPreference: { dynamicWeight: 'AvailableReplicas' } } } },
  }) as SlimBinding;
}

/** A federation view over fixed members and bindings: every member read, no pods yet. */
function view(members: number, nodesEach: number, bindings: SlimBinding[]): FederationView {
  const clusters = Array.from({ length: members }, (_, m) => member(`m${m}`));
  const nodes = new Map(clusters.map((c) => [c.name, Array.from({ length: nodesEach }, (_, n) => {
    const s = slimNode(node(`${c.name}-n${n}`, ZONES[n % 3]!, { labels: { 'kubernetes.io/hostname': `${c.name}-n${n}` } }));
    return { ...s, allocatable: { cpuMilli: 8000, memory: 32e9, pods: 110 } };
  })]));
  const byKey = new Map(bindings.map((b) => [`${b.namespace}/${b.name}`, b]));
  return {
    ready: () => true, synced: () => true, bindings: () => [...byKey.values()], binding: (k) => byKey.get(k), clusters: () => clusters,
    policy: () => undefined, ordinalOverrides: () => [], members: () => [], onChange: () => {}, start: () => {}, stop: async () => {},
    reading: (c) => ({ nodes: nodes.get(c)!, nodesVersion: 1, nodeUsage: () => ({ cpuMilli: 0, memory: 0, pods: 0 }), workloadPods: [] }),
  };
}

function timed(f: () => void): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

export function federationPlansCase(): void {
  const config = parseConfig({}).karmada;
  const bindings = Array.from({ length: 1000 }, (_, i) => binding(i, 6 + (i % 7)));
  const fleet = federationService(view(10, 100, bindings), config, createMetrics(), fakeClock(0));
  const keys = fleet.keys();
  const passes = [0, 1, 2].map(() => timed(() => { for (const k of keys) fleet.plan(k); }));
  // ~600 KiB: one required term naming 30,000 hostnames, none of them a member's.
  const hostnames = Array.from({ length: 30_000 }, (_, i) => `tenant-host-${String(i).padStart(6, '0')}`);
  const claim = { hardNodeAffinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: hostnames }] }] } };
  const size = JSON.stringify(claim).length;
  const tenant = federationService(view(20, 1000, [binding(0, 9, claim)]), config, createMetrics(), fakeClock(0));
  const first = timed(() => tenant.plan('bench/w0-deployment'));
  const again = [0, 1, 2].map(() => timed(() => tenant.plan('bench/w0-deployment')));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\nzonekeeper karmada, plans in process: 1,000 bindings over 10 members x 100 nodes, a full pass ${passes.map((p) => fmt(p, 0)).join(' / ')} ms (median ${fmt(median(passes), 0)})`);
  console.log(`one binding with a ${fmt(size / 1024, 0)} KiB node affinity over 20 members x 1,000 nodes: first plan ${fmt(first, 0)} ms, again (node fit cached) ${again.map((p) => fmt(p, 1)).join(' / ')} ms`);
  target('karmada: a full pass over 1,000 bindings (10 members)', median(passes), 2000, true, ' ms');
  target('karmada: a 600 KiB affinity re-planned (20 x 1,000 nodes)', median(again), 100, true, ' ms');
}
