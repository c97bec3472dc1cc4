import type {
  PendingPod, SlimNode, SlimWorkload, SlimWorkloadSpread, WorkloadSpreadSubset,
} from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { ReservationView } from './reservations.js';
import type { WorkloadModel, ZoneListDeps } from './model.js';
import type { WorkloadRef } from './workload.js';

/** The rule that rejected a node; every reason names one. */
export type Rule = 'cache' | 'volume' | 'zone-pin' | 'workloadspread' | 'zone-balance';

export type PolicyName = 'none' | 'zone-pin' | 'workloadspread' | 'zone-balance';

export interface Rejection {
  rule: Rule;
  /** Short: sent once per rejected node, thousands of times in one answer. */
  reason: string;
  /** Hard constraints: the scheduler must not preempt for them (FailedAndUnresolvableNodes). */
  unresolvable: boolean;
  /** The names are only as the request sent them (no node known): the encoder escapes them. */
  unknownNames?: boolean;
}

export interface PlacementSettings {
  topologyKey: string;
  /** Pin StatefulSet ordinals to zones (design §4). */
  manageStatefulSets: boolean;
  /** Write the derived zone list onto the workload on first placement. */
  freezeZones: boolean;
  /** Start a derived list at the zone that starts the fewest frozen lists, not always at the first. */
  fleetBalance: boolean;
  zoneFallback: 'strict' | 'adaptive';
  fallbackAfterSeconds: number;
  /** How long an Adaptive WorkloadSpread skips a subset that had no feasible node. */
  adaptiveUnschedulableSeconds: number;
}

/**
 * The nodes a request names, as parallel arrays (one small object per node was a
 * measurable share of a 5,000-name request).
 */
export interface Candidates {
  names: readonly string[];
  /** `nodes[i]` is `names[i]`'s node: from the request's Node objects, else from the cache; undefined when neither has it. */
  nodes: readonly (SlimNode | undefined)[];
  /** `names[i]`'s slot in the cache (-1: none), when the nodes are the cache's: zone codes are read by it. */
  slots?: Int32Array;
}

/** Candidates from names, with their nodes from the cache. */
export function candidatesNamed(names: readonly string[], snapshot: Pick<Snapshot, 'resolveNodes' | 'nodeAt'>): Candidates {
  const slots = snapshot.resolveNodes(names);
  const nodes = new Array<SlimNode | undefined>(names.length);
  // The result is built before the loop: a literal returned after it kept this function in a
  // deoptimization loop under load (hundreds a second, seen with --trace-deopt).
  const out: Candidates = { names, nodes, slots };
  for (let i = 0; i < names.length; i++) nodes[i] = snapshot.nodeAt(slots[i]!);
  return out;
}

export interface FilterInput extends ZoneListDeps {
  pod: PendingPod;
  candidates: Candidates;
  snapshot: Snapshot;
  reservations: ReservationView;
  settings: PlacementSettings;
  now: number;
  /** First time (ms) this pod's filter passed no node; fallbacks count from it. */
  waitingSince: number | undefined;
  /** A zone list being frozen onto the workload, before the watch shows it. */
  pendingFreeze: (workloadKey: string) => string[] | undefined;
  /** How many frozen (or freezing) lists start at each zone; asked only when a list is derived to be frozen. */
  firstSeats: () => ReadonlyMap<string, number>;
  /** Adaptive WorkloadSpread subsets marked unschedulable, by subsetKey. */
  unschedulableUntil: (subsetKey: string) => number | undefined;
}

/** Side effects a verdict asks for; the extender carries them out. */
export interface Effects {
  reserve?: { zone?: string; subset?: string };
  freeze?: { workload: SlimWorkload; zones: string[] };
  conflict?: { pinnedZone: string; volumeZones: string[]; reason: string };
  markUnschedulable?: { key: string; until: number };
  /** The workload's zone-preferences annotation is invalid: defaults were used. */
  preferencesError?: { workload: string; error: string };
}

/** What one policy decides for the pod. */
export interface PolicyOutcome {
  summary: string;
  /** What the extender must carry out; nothing else in the outcome is an effect. */
  effects: Effects;
  /** Per node: a rejection, or undefined when the node is allowed. Absent: every node is. */
  admits?: (node: SlimNode) => Rejection | undefined;
  /**
   * `admits` when it reads nothing but the node's `topologyKey` label: the filter then asks it
   * once per zone and reads the cache's zone codes, not each node.
   */
  admitsZone?: { topologyKey: string; admits: (zone: string | undefined) => Rejection | undefined };
  /** Every node waits for this reason (the policy cannot decide yet, or nothing has room). */
  waitAll?: Rejection;
  subset?: { ws: SlimWorkloadSpread; subset: WorkloadSpreadSubset };
  zone?: string;
  /**
   * The verdict changes by itself after this long (a wait measured in time, not in cluster
   * events): the pod must be retried then. kube-scheduler parks a pod that no node fits
   * until a cluster event or for up to 5 minutes (1.36), so such a wait is answered as an error.
   */
  retryAfterMs?: number;
}

export interface FilterVerdict {
  managed: boolean;
  policy: PolicyName;
  summary: string;
  workload: WorkloadRef | undefined;
  /** The model the verdict was made on; undefined for a pod without a controller owner. */
  model: WorkloadModel | undefined;
  /** Names of known nodes (or every name, for an unmanaged pod: see `passedUnknown`). */
  passed: readonly string[];
  /** `passed` holds names as the request sent them, not only known nodes. */
  passedUnknown?: boolean;
  /** Rejected node names grouped by their rejection: policies share one object per reason. */
  rejected: Map<Rejection, string[]>;
  effects: Effects;
  /** The subset chosen for a WorkloadSpread pod, for scoring. */
  subset?: { ws: SlimWorkloadSpread; subset: WorkloadSpreadSubset };
  zone?: string;
  retryAfterMs?: number;
}

export function rejectedCount(v: FilterVerdict): number {
  let n = 0;
  for (const names of v.rejected.values()) n += names.length;
  return n;
}

/** The rejection of one node, or undefined when it passed (a scan: for tests and explain). */
export function rejectionOf(v: FilterVerdict, node: string): Rejection | undefined {
  for (const [r, names] of v.rejected) if (names.includes(node)) return r;
  return undefined;
}

/** What a policy needs beyond the pod: the shared inputs of one filter call. */
export interface PolicyContext {
  input: FilterInput;
  snapshot: Snapshot;
  /** Candidates that exist in the cache and that the pod's volumes allow (computed on first call). */
  feasible(): SlimNode[];
  boundVolume: boolean;
}

/**
 * Reasons go out once per rejected node and into the decision log: a reason built from many
 * names (a pod with hundreds of missing claims) is cut, so answers stay within the cluster's size.
 */
export const REASON_MAX = 512;

export function clipReason(text: string, max = REASON_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max - 25)}… (${text.length - max + 25} more)`;
}
