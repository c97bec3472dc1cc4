import { ORDINALS_OWNER_LABEL, ordinalsPolicyName, type SlimBinding, type SlimMemberCluster, type SlimOrdinalOverride, type TargetCluster } from '../cluster/karmada.js';
import type { SlimNode, SlimPod } from '../cluster/objects.js';
import type { NodeUsage } from '../cluster/snapshot.js';
import { evictionAt, untoleratedTaint } from './clusterMatching.js';
import { misfitOf } from './nodeFit.js';

// A federated workload's replicas per member cluster (docs/design.md#across-clusters): the one planner
// (planner.ts) over the members, each member's capacity read from zonekeeper's own view of it.

/** zonekeeper's own read of a member, for one workload. */
interface MemberReading {
  nodes: readonly SlimNode[];
  /** Whether a node takes the workload's replicas (its affinity and tolerations), when cached per node set; else judged here. */
  fits?: (node: SlimNode) => boolean;
  /** What the pods bound there take from a node, by its name (the member store's derived usage). */
  nodeUsage: (node: string) => NodeUsage;
  /** The workload's own pods in that member. */
  workloadPods: readonly SlimPod[];
}

/** undefined reading: zonekeeper cannot see the member now (its capacity is unknown). */
export interface MemberInput { cluster: SlimMemberCluster; reading: MemberReading | undefined }

export interface DivisionSettings {
  /** Pods of the workload unscheduled this long in a member count against its capacity (seed 002's Y minutes). */
  pendingMs: number;
  /** Of those, how many stay waiting there so that the member can show it has room again. */
  keepWaiting: number;
  /** A StatefulSet's ordinal range per member: no member may hold more (undefined for other kinds). */
  stride: number | undefined;
}

/** Why a member gets what it gets. */
export type MemberState = 'ready' | 'full' | 'pending' | 'unknown' | 'not-ready' | 'no-execute' | 'no-schedule' | 'deleting' | 'evicting' | 'not-allowed'
  | 'untolerated' | 'no-field' | 'not-selected';

export interface MemberShare {
  cluster: string;
  replicas: number;
  /** What it had before this plan. */
  assigned: number;
  state: MemberState;
  /** How many replicas it can hold (undefined: unlimited or unknown). */
  capacity: number | undefined;
  bound: number;
  pending: number;
  /** The oldest of its unscheduled pods (ms since the epoch), when it has one. */
  pendingSince: number | undefined;
  zones: readonly string[];
  why: string;
}

/** Karmada's Scheduled reasons for a binding that could not be planned, and zonekeeper's own for a bad annotation. */
export type PlanFailure = 'BadPreferences' | 'NoClusterFit' | 'Unschedulable' | 'SchedulerError';

export type BindingPlan =
  | { ok: true; clusters: TargetCluster[]; members: MemberShare[]; unplaced: number; rebalance: boolean; affinityName: string }
  /** `clear`: nothing the placement allows runs it any more: spec.clusters is emptied, as Karmada does on NoClusterFit. */
  | { ok: false; reason: PlanFailure; message: string; members: MemberShare[]; affinityName: string; clear: boolean };

export const stateWhy: Record<MemberState, string> = {
  ready: 'ready', full: 'no more room in its zones', pending: 'pods left unscheduled too long', unknown: 'zonekeeper cannot read it: keeps what it has, gets none added',
  'not-ready': 'not Ready in Karmada', 'no-execute': 'a NoExecute taint', 'no-schedule': 'a tolerated NoSchedule taint: keeps what it has', deleting: 'being deleted',
  evicting: 'a graceful eviction moves the workload away', 'not-allowed': 'outside the placement\'s cluster affinity',
  untolerated: 'a NoSchedule taint the placement does not tolerate', 'no-field': 'lacks the field a spread constraint groups by',
  'not-selected': 'not chosen by the spread constraints',
};
/** Free replica slots per zone of a member for one replica's needs, the workload's bound pods included. */
function zoneSlots(binding: SlimBinding, reading: MemberReading): Map<string, number> {
  const misfit = reading.fits ? undefined : misfitOf(binding.needs);
  const fits = reading.fits ?? ((n: SlimNode) => !misfit!(n));
  const { cpuMilli, memory } = binding.request;
  const slots = new Map<string, number>();
  const zoneOf = new Map<string, string>();
  for (const n of reading.nodes) {
    if (!n.zone || !n.ready || n.unschedulable || !fits(n)) continue;
    zoneOf.set(n.name, n.zone);
    const u = reading.nodeUsage(n.name);
    const free = Math.max(0, Math.min(
      cpuMilli > 0 ? Math.floor((n.allocatable.cpuMilli - u.cpuMilli) / cpuMilli) : Infinity,
      memory > 0 ? Math.floor((n.allocatable.memory - u.memory) / memory) : Infinity,
      n.allocatable.pods - u.pods,
    ));
    slots.set(n.zone, (slots.get(n.zone) ?? 0) + free);
  }
  for (const p of reading.workloadPods) {
    const zone = p.nodeName ? zoneOf.get(p.nodeName) : undefined;
    if (zone && !p.terminating && !p.finished) slots.set(zone, slots.get(zone)! + 1);
  }
  return slots;
}

/**
 * How many replicas fit when they rotate over the zones as zonekeeper pins them in the member: the
 * k-th zone of Z takes ordinals k, k+Z, …, so n fit while n ≤ slots_k·Z + k for every k.
 */
export function rotationCapacity(slotsInListOrder: readonly number[]): number {
  const z = slotsInListOrder.length;
  return z === 0 ? 0 : Math.min(...slotsInListOrder.map((s, k) => (s === Infinity ? Infinity : s * z + k)));
}

/** A member's state and room for one binding, before any affinity term or spread constraint is applied. */
export function memberShare(binding: SlimBinding, m: MemberInput, s: DivisionSettings, now: number): Omit<MemberShare, 'replicas' | 'why'> {
  const c = m.cluster;
  const assigned = binding.clusters.find((t) => t.name === c.name)?.replicas ?? 0;
  const listed = binding.clusters.some((t) => t.name === c.name);
  const base = { cluster: c.name, assigned, bound: 0, pending: 0, pendingSince: undefined, zones: [] as string[] };
  const tolerations = binding.placement.tolerations;
  const offline: MemberState | undefined = c.deleting ? 'deleting' : binding.evictingFrom.includes(c.name) ? 'evicting'
    : c.ready !== 'True' ? 'not-ready' : (evictionAt(tolerations, c.taints) ?? Infinity) <= now ? 'no-execute'
      : !listed && untoleratedTaint(tolerations, c.taints) ? 'untolerated' : undefined;
  if (offline) return { ...base, state: offline, capacity: 0 };
  if (!m.reading) return { ...base, state: 'unknown', capacity: assigned };
  const live = m.reading.workloadPods.filter((p) => !p.terminating && !p.finished);
  const waiting = live.filter((p) => !p.nodeName);
  const bound = live.length - waiting.length;
  const pendingSince = waiting.length ? Math.min(...waiting.map((p) => p.createdAt)) : undefined;
  const slots = zoneSlots(binding, m.reading);
  const zones = [...slots.keys()].sort();
  const shared = { ...base, bound, pending: waiting.length, pendingSince, zones };
  if (pendingSince !== undefined && now - pendingSince >= s.pendingMs) {
    return { ...shared, state: 'pending', capacity: bound + Math.min(waiting.length, s.keepWaiting) };
  }
  // A forecast caps growth only: a member loses replicas on evidence (pods left waiting), never on an estimate.
  const fit = Math.max(assigned, rotationCapacity(zones.map((z) => slots.get(z)!)));
  if (untoleratedTaint(tolerations, c.taints)) return { ...shared, state: 'no-schedule', capacity: assigned };
  return { ...shared, state: fit <= assigned ? 'full' : 'ready', capacity: fit };
}

/**
 * Each member's first ordinal: a range of `stride` per member, kept for as long as the
 * OverridePolicy lives (so a member that leaves and comes back finds its claims); a member
 * about to get replicas for the first time takes the lowest free range.
 */
export function ordinalStarts(current: Readonly<Record<string, number>>, clusters: readonly TargetCluster[], stride: number): Record<string, number> {
  const starts = { ...current };
  const taken = new Set(Object.values(starts).map((v) => Math.floor(v / stride)));
  for (const c of [...clusters].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (c.replicas === 0 || c.name in starts) continue;
    let slot = 0;
    while (taken.has(slot)) slot++;
    taken.add(slot);
    starts[c.name] = slot * stride;
  }
  return starts;
}

export type OrdinalRanges =
  | { ok: true; starts: Record<string, number>; write: { resourceVersion: string | undefined } | undefined }
  | { ok: false; why: string };

/**
 * A StatefulSet's ordinal ranges, trusted only from the OverridePolicy zonekeeper names for it and labels
 * as its own, checked disjoint before any member's share grows; refused, the object named, when its name
 * is squatted, its ranges overlap, or another policy sets the same spec.ordinals (docs/security.md#across-clusters).
 */
export function ordinalRanges(
  sts: { namespace: string; name: string }, policies: readonly SlimOrdinalOverride[], clusters: readonly TargetCluster[], stride: number,
): OrdinalRanges {
  const own = policies.find((p) => p.name === ordinalsPolicyName(sts.name));
  const ref = (p: SlimOrdinalOverride) => `OverridePolicy ${p.namespace}/${p.name}`;
  if (own && own.owner !== sts.name) {
    return { ok: false, why: `${ref(own)} bears zonekeeper's name for ${sts.name}'s ordinal ranges but not its label (${ORDINALS_OWNER_LABEL}: ${sts.name}); delete it` };
  }
  const other = policies.find((p) => p !== own && (p.owner === sts.name || p.setsOrdinalsOf.includes(sts.name) || p.setsOrdinalsOf.includes('*')));
  if (other) return { ok: false, why: `${ref(other)} also sets StatefulSet ${sts.name}'s spec.ordinals (or claims them): only zonekeeper's ${ordinalsPolicyName(sts.name)} may` };
  const seen = own?.starts ?? {};
  const ranges = Object.entries(seen).sort(([, a], [, b]) => a - b);
  for (let i = 1; i < ranges.length; i++) {
    const [a, s] = ranges[i - 1]!, [b, t] = ranges[i]!;
    if (t < s + stride) return { ok: false, why: `${ref(own!)}: ${a} from ${s} and ${b} from ${t} overlap (karmada.ordinalStride ${stride}); no member's share grows until they are disjoint` };
  }
  const starts = ordinalStarts(seen, clusters, stride);
  const missing = clusters.some((c) => c.replicas > 0 && !(c.name in seen));
  return { ok: true, starts, write: missing ? { resourceVersion: own?.resourceVersion } : undefined };
}

/** The same plan in a binding's words: unchanged spec.clusters are not rewritten. */
export function sameClusters(a: readonly TargetCluster[], b: readonly TargetCluster[]): boolean {
  const key = (l: readonly TargetCluster[]) => l.filter((c) => c.replicas > 0).map((c) => `${c.name}=${c.replicas}`).sort().join(',');
  return key(a) === key(b);
}
