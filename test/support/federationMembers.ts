import { slimNode, slimPod } from '../../src/cluster/convert.js';
import { KARMADA_KINDS, type SlimBinding, type SlimMemberCluster } from '../../src/cluster/karmada.js';
import type { MemberInput } from '../../src/placement/clusterDivision.js';
import { node } from './builders.js';

// Karmada bindings and members for the planner's unit tests: a member's room read from its nodes, one per zone.

/** A binding of `replicas` (1 CPU each) for StatefulSet db/web; Divided and Weighted unless `extra.placement` says otherwise. */
export function binding(replicas: number, clusters: { name: string; replicas: number }[] = [], more: Record<string, unknown> = {}): SlimBinding {
  const { status, ...extra } = more;
  return KARMADA_KINDS.bindings.slim!({
    metadata: { namespace: 'db', name: 'web-statefulset', uid: 'rb-1', generation: 1 }, status,
    spec: { resource: { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'db', name: 'web' }, replicas, clusters, schedulerName: 'zonekeeper',
      replicaRequirements: { resourceRequest: { cpu: '1' } }, ...extra,
      placement: { replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' }, ...(extra.placement as object) } },
  }) as SlimBinding;
}

export interface ClusterShape { ready?: string; taints?: object[]; labels?: Record<string, string>; spec?: Record<string, unknown> }

function cluster(name: string, o: ClusterShape = {}): SlimMemberCluster {
  return KARMADA_KINDS.clusters.slim!({
    metadata: { name, labels: o.labels }, spec: { taints: o.taints, ...o.spec }, status: { conditions: [{ type: 'Ready', status: o.ready ?? 'True' }] },
  }) as SlimMemberCluster;
}

/** A member of three zones, each node with room for `perZone` replicas of 1 CPU (Infinity: 100). */
export function member(name: string, o: ClusterShape & { perZone?: number | number[]; unknown?: boolean; pods?: object[] } = {}): MemberInput {
  const perZone = Array.isArray(o.perZone) ? o.perZone : [0, 1, 2].map(() => (o.perZone as number | undefined) ?? 100);
  const nodes = ['zone-a', 'zone-b', 'zone-c'].map((z, k) => {
    const n = slimNode(node(`${name}-${z}`, z));
    return { ...n, allocatable: { cpuMilli: perZone[k]! * 1000, memory: 1e12, pods: 110 } };
  });
  const workloadPods = (o.pods ?? []).map((p) => slimPod(p as never));
  const used = new Map<string, { cpuMilli: number; memory: number; pods: number }>();
  for (const p of workloadPods) {
    if (p.nodeName) used.set(p.nodeName, { cpuMilli: (used.get(p.nodeName)?.cpuMilli ?? 0) + 1000, memory: 0, pods: (used.get(p.nodeName)?.pods ?? 0) + 1 });
  }
  const nodeUsage = (n: string) => used.get(n) ?? { cpuMilli: 0, memory: 0, pods: 0 };
  return { cluster: cluster(name, o), reading: o.unknown ? undefined : { nodes, nodeUsage, workloadPods } };
}
