import { ANNOTATION } from '../cluster/annotations.js';
import { workloadKindSpec, type WorkloadKind } from '../cluster/kinds.js';
import { zoneOf, type SlimPod, type SlimWorkload, type SlimWorkloadSpread, type WorkloadSpreadSubset } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { ZonePreferencesSpec } from '../cluster/zonePreferences.js';
import { deletionCosts } from './downscale.js';
import { parseAssignment, serializeAssignment } from './instanceAssignment.js';
import type { OffPinCause, WorkloadHealth } from './healthRecord.js';
import { podOffPinCause } from './health.js';
import { managedModels, policyOf, workloadModel, type CachedModel } from './model.js';
import { unboundReservations, zoneOccupancy } from './occupancy.js';
import { planReplicas } from './planner.js';
import type { PolicyName } from './policies/index.js';
import type { SubsetQuota } from './policies/workloadSpread/subsets.js';
import type { DecidedBy, DecisionState } from './policy.js';
import type { Reservation } from './reservations.js';
import { podVolumes, volumeZones } from './volumes.js';
import { expectedOrdinals, type WorkloadRef } from './workload.js';
import { seatZone, SEQUENCE_WORK_LIMIT, sequenceCounts, zoneSequence } from './zoneSequence.js';
import { zonesShown, type ZoneListSource } from './zones.js';

/** Seats of the sequence /debug/workloads lists, and pods: the ones beyond are counted, not listed. */
const LAYOUT_SEATS = 10_000;

/**
 * Pods one answer lists: /debug/workloads, one workload; /debug/layouts, all its workloads
 * together (the page draws a cell per pod and asks every 3 s). The rest are counted: the
 * layouts run on the event loop the extender shares (the bench's layouts case).
 */
const LAYOUT_PODS_PER_WORKLOAD = LAYOUT_SEATS;
export const LAYOUT_PODS_PER_ANSWER = 2_000;

interface LayoutPod {
  name: string;
  node: string;
  zone: string | undefined;
  index?: number;
  instanceId?: number;
  pinnedZone?: string;
  inPinnedZone?: boolean;
  /** Bound outside its pinned zone: why, as health counts it (docs/design.md#health). */
  offPinCause?: OffPinCause;
  subset?: string;
  /** controller.kubernetes.io/pod-deletion-cost as the pod has it, and as zonekeeper wants it. */
  deletionCost?: { current: string | undefined; desired: number | undefined };
  /** Zones its volumes allow, when it has volumes that constrain it. */
  volumeZones?: string[];
  /** Its volumes exclude its pinned zone: the volume decides (docs/design.md#which-policy-places-a-pod). */
  volumeWins?: boolean;
  /** Not bound yet, with a reservation: the zone it was filtered into. */
  reservedZone?: string;
  /** What decides (or decided) its zone: a volume, its seat's pin, a subset quota, zone balance, or nothing. */
  decidedBy: DecidedBy;
  /**
   * Which transport wrote its zone, when not zonekeeper itself: `policy`, kube-apiserver's
   * MutatingAdmissionPolicy from the seat table (`zonekeeper.io/decided-by: policy`).
   */
  transport?: 'policy';
  /** Not bound: when it was created (ISO), so the page shows how long it has waited. */
  pendingSince?: string;
}

export interface WorkloadLayout {
  workload: WorkloadRef & { replicas: number; annotations: Record<string, string> };
  policy: PolicyName | 'none';
  preferences: { spec: ZonePreferencesSpec; source: 'annotation' | 'default'; error?: string };
  /**
   * For comparison only: the Federated ReplicaSet planner's replicas per zone (`zonekeeper plan`'s
   * `plan` column, no capacity limits). Absent for a WorkloadSpread, whose subsets decide.
   */
  federatedPlan?: Record<string, number>;
  /**
   * What zonekeeper places by: the sequence's first `replicas` seats per zone (pins fill them,
   * zone balance aims at them); undefined past the work limit. Absent for a WorkloadSpread.
   */
  targets?: Record<string, number> | undefined;
  instanceIds?: { assignment: Record<string, string>; error?: string };
  /** Ordinal workloads: ordinals reserved (Advanced StatefulSet), and the ones kept but without a live pod yet. */
  ordinals?: { start: number; reserved: string[]; missing: number[] };
  /** Deployments and ReplicaSets: the order scale-down removes pods in, first first (as many as `pods` may list). */
  removalOrder?: string[];
  topologyKey: string;
  /**
   * `unusable`: zones of the list where no node fits the pods; `excluded`: zones of other nodes
   * the pod template cannot use (node selector, affinity, taints), left out of a derived list.
   */
  zones: { list: string[]; source: ZoneListSource; unusable: string[]; excluded: string[] };
  sequence: string[];
  countsPerZone: Record<string, { bound: number; reserved: number }>;
  /** The first pods by seat (then name), as many as the answer's budget allows. */
  pods: LayoutPod[];
  /** Pods of the workload past that budget: counted in countsPerZone, not listed. */
  podsOmitted: number;
  /**
   * `pending`: the subset each pending pod without one would go to, in order; `subsetZones`: a subset's one zone;
   * `subsetZoneLists`: every zone a subset's term admits by the topology key.
   */
  workloadSpread?: {
    name: string; strategy: string; subsets: SubsetQuota[]; pending: Record<string, string>;
    subsetZones: Record<string, string>; subsetZoneLists: Record<string, string[]>;
  };
  reservations: Reservation[];
  /** Its health as last computed (docs/design.md#health), when health is kept. */
  health?: WorkloadHealth;
}

/** What a layout reads beside the cluster: the decisions' remembered state. */
export type LayoutDeps = DecisionState;

/** The workload's assignment map, over any its ReplicaSets kept before the map moved to the workload. */
function instanceAssignments(snapshot: Snapshot, ref: WorkloadRef): { assignment: Record<string, string>; error?: string } {
  const via = workloadKindSpec(ref.kind)?.podsOwnedVia;
  const self = snapshot.workload(ref.kind as WorkloadKind, ref.namespace, ref.name)!;
  const owners = via ? [...snapshot.ownedWorkloads(ref.kind, ref.namespace, ref.name), self] : [self];
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
  return w && layoutOf(workloadModel({ kind, namespace, name }, w, snapshot, deps.settings, deps), w, snapshot, deps, LAYOUT_PODS_PER_WORKLOAD);
}

function layoutOf(
  model: CachedModel, w: SlimWorkload, snapshot: Snapshot, deps: LayoutDeps, podBudget: number, pods: readonly SlimPod[] = [...model.pods()],
): WorkloadLayout {
  const { ref, preferences } = model;
  const list = model.zones();
  const policy = policyOf(model);
  const costs = workloadKindSpec(ref.kind)?.deletionCost ? deletionCosts(model, snapshot) : undefined;
  const pinned = model.seats !== 'none';
  const prefs = preferences.sequence;
  // The seats of the workload's replicas, as far as a debug view should go; each pod's own
  // seat is looked up on its own, so a pod with a huge ordinal costs no more than another.
  const shown = Math.min(w.replicas, Math.floor(SEQUENCE_WORK_LIMIT / Math.max(1, list.zones.length)), LAYOUT_SEATS, Math.max(0, podBudget));
  const sequence = pinned ? zoneSequence(list.zones, shown, prefs) : [];

  const countsPerZone: WorkloadLayout['countsPerZone'] = {};
  for (const z of list.zones) countsPerZone[z] = { bound: 0, reserved: 0 };
  for (const [z, o] of zoneOccupancy(model, list.topologyKey, snapshot, deps.reservations)) countsPerZone[z] = o;
  const waiting = unboundReservations(model, deps.reservations, snapshot);
  const reservedZones = new Map(waiting.map((r) => [r.uid, r.zone]));
  const decidedBy: DecidedBy = policy?.decidedBy(model) ?? (pinned ? 'pin' : 'none');
  // Every pod's seat, for the order and the missing ordinals; the details only for the listed.
  const seated = pods.map((p) => ({ p, index: pinned ? model.seat(p).index : undefined }))
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0) || a.p.name.localeCompare(b.p.name));
  const listed = seated.slice(0, Math.max(0, podBudget));
  const layoutPods = listed.map(({ p, index }): LayoutPod => {
    const node = p.nodeName ? snapshot.node(p.nodeName) : undefined;
    const zone = node && zoneOf(node, list.topologyKey);
    const out: LayoutPod = { name: p.name, node: p.nodeName, zone, decidedBy };
    if (p.decidedByPolicy) out.transport = 'policy';
    if (!p.nodeName && p.createdAt > 0) out.pendingSince = new Date(p.createdAt).toISOString();
    const reserved = p.nodeName ? undefined : reservedZones.get(p.uid);
    if (reserved) out.reservedZone = reserved;
    if (p.claims.length > 0) {
      const { constraints } = podVolumes(p, snapshot);
      if (constraints.length > 0) out.volumeZones = [...volumeZones(constraints, snapshot, list.topologyKey)];
    }
    if (index !== undefined) {
      out.index = index;
      if (model.seats === 'instance-id') out.instanceId = p.instanceId;
      out.pinnedZone = index >= 0 ? (sequence[index] ?? seatZone(list.zones, index, prefs).zone) : undefined;
      if (zone !== undefined && index >= 0) out.inPinnedZone = zone === out.pinnedZone;
      if (out.inPinnedZone === false) out.offPinCause = podOffPinCause(p, out.pinnedZone, w, snapshot, list, deps.settings);
      if (out.pinnedZone !== undefined && out.volumeZones && !out.volumeZones.includes(out.pinnedZone)) {
        out.volumeWins = true;
        out.decidedBy = 'volume';
      }
    }
    if (policy?.podLayout) Object.assign(out, policy.podLayout(model, p, snapshot));
    if (costs) out.deletionCost = { current: p.deletionCost, desired: costs.get(p.name) };
    return out;
  });

  const present = new Set(seated.map((s) => s.index));
  const ordinals = model.seats === 'ordinal' ? {
    start: w.ordinalsStart,
    reserved: [...[...w.reservedOrdinals.singles].sort((a, b) => a - b).map(String), ...w.reservedOrdinals.ranges.map(([lo, hi]) => `${lo}-${hi}`)],
    missing: expectedOrdinals(w, LAYOUT_SEATS).filter((o) => !present.has(o - w.ordinalsStart)),
  } : undefined;

  return {
    workload: { ...ref, replicas: w.replicas, annotations: w.annotations },
    ...(ordinals ? { ordinals } : {}),
    policy: model.policy,
    topologyKey: list.topologyKey, zones: { ...zonesShown(list, snapshot), source: list.source },
    preferences: {
      spec: preferences.spec, source: preferences.parsed ? 'annotation' : 'default',
      ...(preferences.parsed && !preferences.parsed.ok ? { error: preferences.parsed.error } : {}),
    },
    ...(model.policy === 'workloadspread' ? {} : {
      federatedPlan: planReplicas({ replicas: w.replicas, zones: list.zones, preferences: preferences.spec, key: `${ref.namespace}/${ref.name}` }).plan,
      targets: sequenceCounts(list.zones, w.replicas, prefs),
    }),
    ...(model.seats === 'instance-id' ? { instanceIds: instanceAssignments(snapshot, ref) } : {}),
    ...(costs ? { removalOrder: [...costs].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).slice(0, Math.max(0, podBudget)).map(([pod]) => pod) } : {}),
    sequence, countsPerZone, pods: layoutPods, podsOmitted: seated.length - listed.length,
    workloadSpread: undefined,
    ...withSubsetZones(policy?.layout?.(model, snapshot, deps), model, list.zones, list.topologyKey),
    reservations: waiting,
  };
}

/**
 * A WorkloadSpread layout gains `subsetZoneLists`: the zones each subset's required term admits by
 * the topology key alone (In, NotIn, Exists; no expression on the key: every zone), over the
 * workload's zones and those the subsets name. The page draws what each subset covers from it.
 */
function withSubsetZones(own: Record<string, unknown> | undefined, model: CachedModel, zones: readonly string[], topologyKey: string): Record<string, unknown> {
  const spread = own?.workloadSpread as Record<string, unknown> | undefined;
  if (!spread || !('ws' in model) || !model.ws) return own ?? {};
  const subsets = (model.ws as SlimWorkloadSpread).subsets;
  const onKey = (s: WorkloadSpreadSubset) => (s.requiredNodeSelectorTerm?.matchExpressions ?? []).filter((e) => e.key === topologyKey);
  const named = subsets.flatMap((s) => onKey(s).filter((e) => e.operator === 'In').flatMap((e) => e.values ?? []));
  const all = [...new Set([...zones, ...named])];
  const admits = (e: { operator: string; values?: string[] }, z: string) =>
    (e.operator === 'In' ? (e.values ?? []).includes(z) : e.operator === 'NotIn' ? !(e.values ?? []).includes(z) : e.operator !== 'DoesNotExist');
  const subsetZoneLists = Object.fromEntries(subsets.map((s) => [s.name, all.filter((z) => onKey(s).every((e) => admits(e, z)))]));
  return { ...own, workloadSpread: { ...spread, subsetZoneLists } };
}

/** Layouts one answer of /debug/layouts builds at most; the rest are counted, not built. */
const LAYOUTS_PER_ANSWER = 100;

/**
 * How many of its pods each workload lists when they share `budget`: the small ones all of
 * theirs, the others alike, so every workload on the page shows its first seats.
 */
function podShares(sizes: readonly number[], budget: number): number[] {
  const shares = sizes.map(() => 0);
  const smallestFirst = sizes.map((_, i) => i).sort((a, b) => sizes[a]! - sizes[b]!);
  let left = Math.max(0, budget);
  smallestFirst.forEach((i, k) => {
    shares[i] = Math.min(sizes[i]!, Math.floor(left / (smallestFirst.length - k)));
    left -= shares[i]!;
  });
  return shares;
}

/**
 * Every managed workload (a policy covers it; a Deployment's ReplicaSets are its own),
 * ordered by namespace, kind, name: the layout page's list. Only `limit` layouts are built,
 * and they list `podBudget` pods between them (podShares).
 */
export function managedLayouts(
  snapshot: Snapshot, deps: LayoutDeps, namespace: string | undefined, limit = LAYOUTS_PER_ANSWER, podBudget = LAYOUT_PODS_PER_ANSWER,
  healthOf?: (key: string) => WorkloadHealth | undefined,
): { layouts: WorkloadLayout[]; more: number } {
  const managed = managedModels(snapshot, deps, namespace);
  // At-risk workloads first (a stable sort keeps the name order within each group).
  if (healthOf) managed.sort((a, b) => Number(healthOf(b.model.key)?.atRisk ?? false) - Number(healthOf(a.model.key)?.atRisk ?? false));
  const built = managed.slice(0, limit).map((m) => ({ ...m, pods: [...m.model.pods()] }));
  const shares = podShares(built.map(({ pods }) => pods.length), podBudget);
  const layouts = built.map(({ w, model, pods }, i) => {
    const layout = layoutOf(model, w, snapshot, deps, shares[i]!, pods);
    const health = healthOf?.(model.key);
    return health ? { ...layout, health } : layout;
  });
  return { layouts, more: Math.max(0, managed.length - limit) };
}
