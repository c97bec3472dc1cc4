import type { WorkloadKind } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { Reservation, ReservationView } from './reservations.js';
import type { PlacementSettings } from './verdict.js';
import { findWorkloadSpread, subsetOfPod, subsetQuotas, type SubsetQuota } from './workloadSpread.js';
import { workloadKey, workloadPods, type WorkloadRef } from './workload.js';
import { sequenceIndex } from './zonePin.js';
import { zoneSequence } from './zoneSequence.js';
import { zoneListOf, type ZoneListSource } from './zones.js';

const KIND_ALIASES: Record<string, WorkloadKind> = {
  statefulset: 'StatefulSet', statefulsets: 'StatefulSet', sts: 'StatefulSet',
  deployment: 'Deployment', deployments: 'Deployment', deploy: 'Deployment',
  replicaset: 'ReplicaSet', replicasets: 'ReplicaSet', rs: 'ReplicaSet',
};

export function workloadKindOf(s: string): WorkloadKind | undefined {
  return KIND_ALIASES[s.toLowerCase()];
}

export interface LayoutPod {
  name: string;
  node: string;
  zone: string | undefined;
  index?: number;
  pinnedZone?: string;
  inPinnedZone?: boolean;
  subset?: string;
}

export interface WorkloadLayout {
  workload: WorkloadRef & { replicas: number; annotations: Record<string, string> };
  policy: 'zone-pin' | 'workloadspread' | 'none';
  topologyKey: string;
  zones: { list: string[]; source: ZoneListSource };
  sequence: string[];
  countsPerZone: Record<string, { bound: number; reserved: number }>;
  pods: LayoutPod[];
  workloadSpread?: { name: string; strategy: string; subsets: SubsetQuota[] };
  reservations: Reservation[];
}

export interface LayoutDeps {
  settings: PlacementSettings;
  reservations: ReservationView;
  pendingFreeze: (key: string) => string[] | undefined;
  unschedulableUntil: (key: string) => number | undefined;
}

/** What /debug/workloads shows: zone list, sequence, where every pod is, counts, subsets. */
export function workloadLayout(snapshot: Snapshot, kind: WorkloadKind, namespace: string, name: string, deps: LayoutDeps): WorkloadLayout | undefined {
  const w = snapshot.workload(kind, namespace, name);
  if (!w) return undefined;
  const ref: WorkloadRef = { kind, namespace, name };
  const key = workloadKey(ref);
  const list = zoneListOf(w, snapshot, deps.settings.topologyKey, deps.pendingFreeze(key));
  const ws = findWorkloadSpread(snapshot, ref, kind === 'ReplicaSet' ? name : undefined);
  const policy = ws ? 'workloadspread' : kind === 'StatefulSet' && deps.settings.manageStatefulSets ? 'zone-pin' : 'none';
  const pods = [...workloadPods(ref, snapshot)];
  const maxIndex = Math.max(w.replicas - 1, ...pods.map((p) => sequenceIndex(p.ordinal, w)));
  const sequence = kind === 'StatefulSet' ? zoneSequence(list.zones, maxIndex + 1) : [];

  const countsPerZone: WorkloadLayout['countsPerZone'] = {};
  for (const z of list.zones) countsPerZone[z] = { bound: 0, reserved: 0 };
  const zoneOfNode = (node: string) => (node ? snapshot.node(node)?.labels[list.topologyKey] : undefined);
  const layoutPods = pods.map((p): LayoutPod => {
    const zone = zoneOfNode(p.nodeName);
    if (zone !== undefined) (countsPerZone[zone] ??= { bound: 0, reserved: 0 }).bound++;
    const out: LayoutPod = { name: p.name, node: p.nodeName, zone };
    if (kind === 'StatefulSet') {
      out.index = sequenceIndex(p.ordinal, w);
      out.pinnedZone = sequence[out.index];
      if (zone !== undefined) out.inPinnedZone = zone === out.pinnedZone;
    }
    if (ws) out.subset = subsetOfPod(p, ws, snapshot);
    return out;
  }).sort((a, b) => (a.index ?? 0) - (b.index ?? 0) || a.name.localeCompare(b.name));

  const reservations = deps.reservations.forWorkload(key).filter((r) => !snapshot.podByUid(r.uid)?.nodeName);
  for (const r of reservations) if (r.zone) (countsPerZone[r.zone] ??= { bound: 0, reserved: 0 }).reserved++;

  return {
    workload: { ...ref, replicas: w.replicas, annotations: w.annotations },
    policy, topologyKey: list.topologyKey, zones: { list: list.zones, source: list.source },
    sequence, countsPerZone, pods: layoutPods,
    workloadSpread: ws && {
      name: ws.name, strategy: ws.strategy,
      subsets: subsetQuotas(ws, ref, w.replicas, snapshot, deps.reservations, '', deps.unschedulableUntil),
    },
    reservations,
  };
}
