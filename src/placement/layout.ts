import { ANNOTATION, type SlimPod, type WorkloadKind } from '../cluster/objects.js';
import { deletionCosts } from './downscale.js';
import { policyOf } from './filtering.js';
import { placementList } from './fleet.js';
import { optedIn, parseAssignment, serializeAssignment } from './instanceIds.js';
import { planReplicas } from './planner.js';
import { DEFAULT_PREFERENCES, preferencesOf, sequencePreferences, type ZonePreferencesSpec } from './preferences.js';
import type { Snapshot } from '../cluster/store.js';
import type { Reservation, ReservationView } from './reservations.js';
import type { PlacementSettings, PolicyName } from './verdict.js';
import { findWorkloadSpread, subsetOfPod, subsetQuotas, type SubsetQuota } from './workloadSpread.js';
import { workloadKey, workloadPods, type WorkloadRef } from './workload.js';
import { sequenceIndex } from './zonePin.js';
import { seatZone, SEQUENCE_WORK_LIMIT, sequenceCounts, zoneSequence } from './zoneSequence.js';
import { zoneListOf, type ZoneListSource } from './zones.js';

/** Seats of the sequence /debug/workloads lists; pods beyond it still show their own. */
const LAYOUT_SEATS = 10_000;

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
  instanceId?: number;
  pinnedZone?: string;
  inPinnedZone?: boolean;
  subset?: string;
  /** controller.kubernetes.io/pod-deletion-cost as the pod has it, and as zonekeeper wants it. */
  deletionCost?: { current: string | undefined; desired: number | undefined };
}

export interface WorkloadLayout {
  workload: WorkloadRef & { replicas: number; annotations: Record<string, string> };
  policy: PolicyName;
  preferences: { spec: ZonePreferencesSpec; source: 'annotation' | 'default'; error?: string };
  /** The planner's replicas per zone for the workload's replicas (no capacity limits). */
  plan: Record<string, number>;
  /** zonekeeper's own layout for the replicas: the sequence's first `replicas` seats per zone (zone balance aims at it); undefined past the work limit. */
  targets: Record<string, number> | undefined;
  instanceIds?: { assignment: Record<string, string>; error?: string };
  /** Deployments and ReplicaSets: the order scale-down removes pods in, first first. */
  removalOrder?: string[];
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

/** The assignment maps of the workload's ReplicaSets (a Deployment may have several). */
function instanceAssignments(snapshot: Snapshot, ref: WorkloadRef): { assignment: Record<string, string>; error?: string } {
  const owners = ref.kind === 'Deployment' ? [...snapshot.ownedWorkloads('Deployment', ref.namespace, ref.name)] : [snapshot.workload('ReplicaSet', ref.namespace, ref.name)!];
  const assignment: Record<string, string> = {};
  try {
    for (const rs of owners) Object.assign(assignment, JSON.parse(serializeAssignment(parseAssignment(rs.annotations[ANNOTATION.instanceAssignment]))));
    return { assignment };
  } catch (err) {
    return { assignment, error: (err as Error).message };
  }
}

/** What /debug/workloads shows: zone list, sequence, where every pod is, counts, subsets. */
export function workloadLayout(snapshot: Snapshot, kind: WorkloadKind, namespace: string, name: string, deps: LayoutDeps): WorkloadLayout | undefined {
  const w = snapshot.workload(kind, namespace, name);
  if (!w) return undefined;
  const ref: WorkloadRef = { kind, namespace, name };
  const key = workloadKey(ref);
  const list = placementList(zoneListOf(w, snapshot, deps.settings.topologyKey, deps.pendingFreeze(key)), key, deps.settings);
  const ws = findWorkloadSpread(snapshot, ref, kind === 'ReplicaSet' ? name : undefined);
  const parsed = preferencesOf(w);
  const spec = parsed?.ok ? parsed.spec : DEFAULT_PREFERENCES;
  const ids = kind !== 'StatefulSet' && optedIn(w);
  const policy = policyOf(kind, w, ws, deps.settings);
  const pods = [...workloadPods(ref, snapshot)];
  const costs = kind === 'StatefulSet' ? undefined : deletionCosts(ref, w, snapshot, deps.settings);
  const seatOf = (p: SlimPod) => (kind === 'StatefulSet' ? sequenceIndex(p.ordinal, w) : p.instanceId);
  const pinned = kind === 'StatefulSet' || ids;
  const prefs = sequencePreferences(parsed ? spec : undefined);
  // The seats of the workload's replicas, as far as a debug view should go; each pod's own
  // seat is looked up on its own, so a pod with a huge ordinal costs no more than another.
  const shown = Math.min(w.replicas, Math.floor(SEQUENCE_WORK_LIMIT / Math.max(1, list.zones.length)), LAYOUT_SEATS);
  const sequence = pinned ? zoneSequence(list.zones, shown, prefs) : [];

  const countsPerZone: WorkloadLayout['countsPerZone'] = {};
  for (const z of list.zones) countsPerZone[z] = { bound: 0, reserved: 0 };
  const zoneOfNode = (node: string) => (node ? snapshot.node(node)?.labels[list.topologyKey] : undefined);
  const layoutPods = pods.map((p): LayoutPod => {
    const zone = zoneOfNode(p.nodeName);
    if (zone !== undefined) (countsPerZone[zone] ??= { bound: 0, reserved: 0 }).bound++;
    const out: LayoutPod = { name: p.name, node: p.nodeName, zone };
    if (pinned) {
      out.index = seatOf(p);
      if (ids) out.instanceId = p.instanceId;
      out.pinnedZone = out.index >= 0 ? (sequence[out.index] ?? seatZone(list.zones, out.index, prefs).zone) : undefined;
      if (zone !== undefined && out.index >= 0) out.inPinnedZone = zone === out.pinnedZone;
    }
    if (ws) out.subset = subsetOfPod(p, ws, snapshot);
    if (costs) out.deletionCost = { current: p.deletionCost, desired: costs.get(p.name) };
    return out;
  }).sort((a, b) => (a.index ?? 0) - (b.index ?? 0) || a.name.localeCompare(b.name));

  const reservations = deps.reservations.forWorkload(key).filter((r) => !snapshot.podByUid(r.uid)?.nodeName);
  for (const r of reservations) if (r.zone) (countsPerZone[r.zone] ??= { bound: 0, reserved: 0 }).reserved++;

  return {
    workload: { ...ref, replicas: w.replicas, annotations: w.annotations },
    policy, topologyKey: list.topologyKey, zones: { list: list.zones, source: list.source },
    preferences: { spec, source: parsed ? 'annotation' : 'default', ...(parsed && !parsed.ok ? { error: parsed.error } : {}) },
    plan: planReplicas({ replicas: w.replicas, zones: list.zones, preferences: spec, key: `${namespace}/${name}` }).plan,
    targets: sequenceCounts(list.zones, w.replicas, prefs),
    ...(ids ? { instanceIds: instanceAssignments(snapshot, ref) } : {}),
    ...(costs ? { removalOrder: [...costs].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).map(([pod]) => pod) } : {}),
    sequence, countsPerZone, pods: layoutPods,
    workloadSpread: ws && {
      name: ws.name, strategy: ws.strategy,
      subsets: subsetQuotas(ws, ref, w.replicas, snapshot, deps.reservations, '', deps.unschedulableUntil),
    },
    reservations,
  };
}
