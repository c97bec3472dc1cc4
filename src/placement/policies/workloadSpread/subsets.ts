import type {
  SlimNode, SlimPod, SlimWorkloadSpread, Toleration, WorkloadSpreadSubset,
} from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { SUBSET_FIELDS } from '../../../cluster/workloadSpreadVersions.js';
import { matchesTerm, tolerator } from '../../nodeMatching.js';
import { unboundReservations } from '../../occupancy.js';
import type { ReservationView } from '../../reservations.js';
import type { PolicyModelOf } from '../../policy.js';
import type { WorkloadFacts } from '../../workloadFacts.js';
import type { WorkloadRef } from '../../workload.js';
import { podVersion } from './versions.js';

// OpenKruise WorkloadSpread subsets (docs/design.md#workloadspread): which subset a node and a
// pod are in, and each subset's quota.

/** The model of a workload a WorkloadSpread covers. */
export type SpreadModel = PolicyModelOf<'workloadspread', { ws: SlimWorkloadSpread }>;

/** One subset's seats: how many it may hold and how many are taken. */
export interface SubsetQuota {
  name: string;
  /** Infinity when maxReplicas is nil. */
  max: number;
  bound: number;
  reserved: number;
  /** Adaptive only: skipped until this time (ms); Infinity while the status marks it unschedulable. */
  unschedulableUntil: number | undefined;
}

export const subsetKey = (ws: SlimWorkloadSpread, subset: string) => `${ws.namespace}/${ws.name}/${subset}`;

/**
 * Adaptive never gives up the last subset, as Kruise's controller never reschedules away from it:
 * never marked unschedulable, no fallback from it, its pod waits for it rather than going beyond every subset.
 */
export const neverGivenUp = (ws: SlimWorkloadSpread, subset: WorkloadSpreadSubset) => subset === ws.subsets.at(-1);

export function findWorkloadSpread(snapshot: Snapshot, ref: WorkloadRef, replicaSet: string | undefined): SlimWorkloadSpread | undefined {
  for (const ws of snapshot.workloadSpreads(ref.namespace)) {
    const t = ws.targetRef;
    if (t.kind === ref.kind && t.name === ref.name) return ws;
    if (replicaSet && t.kind === 'ReplicaSet' && t.name === replicaSet) return ws;
  }
  return undefined;
}

/** maxReplicas as a count: percents of the workload's replicas are rounded up. */
export function resolveMax(max: number | string | null, replicas: number): number {
  if (max === null) return Infinity;
  if (typeof max === 'number') return max;
  return Math.ceil((Number.parseInt(max, 10) * replicas) / 100);
}

/** Whether a node is in a subset: it matches the required term and its taints are tolerated. Built once per pod and subset. */
export function subsetMembership(subset: WorkloadSpreadSubset, podTolerations: readonly Toleration[]): (node: SlimNode) => boolean {
  const tolerates = tolerator([...podTolerations, ...subset.tolerations]);
  const term = subset.requiredNodeSelectorTerm;
  return (node) => (!term || matchesTerm(term, node)) && tolerates(node);
}

/** The subset a placed pod occupies: Kruise's annotation first, else the subset its node is in (nodeSubset). */
export function subsetOfPod(pod: SlimPod, ws: SlimWorkloadSpread, snapshot: Snapshot): string | undefined {
  if (pod.kruiseMatch?.workloadSpread === ws.name) return pod.kruiseMatch.subset;
  const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
  return node && nodeSubset(pod, node, ws)?.name;
}

/** The weight of a subset's preferred terms that `node` matches, as kube-scheduler's NodeAffinity scores them. */
function preferredWeight(subset: WorkloadSpreadSubset, node: SlimNode): number {
  let sum = 0;
  for (const p of subset.preferredNodeSelectorTerms) if (matchesTerm(p.preference, node)) sum += p.weight;
  return sum;
}

/**
 * The subset Kruise's controller files a pod without its annotation under (a pod created before
 * its WorkloadSpread): of the subsets whose required term takes its node, one whose tolerations
 * take it too, then the one whose preferred terms weigh most there, then one with room left
 * (`hasRoom`), then the first. Where Kruise files a pod under none: when no such subset tolerates
 * the node's taints. The pod runs there, so a taint the node gained since (an outage's
 * unreachable taint) must not free its seat and let the subset overfill.
 */
export function nodeSubset(pod: SlimPod, node: SlimNode, ws: SlimWorkloadSpread, hasRoom?: (subset: string) => boolean): WorkloadSpreadSubset | undefined {
  let best: WorkloadSpreadSubset | undefined;
  let bestScore = -1;
  for (const s of ws.subsets) {
    if (s.requiredNodeSelectorTerm && !matchesTerm(s.requiredNodeSelectorTerm, node)) continue;
    const tolerated = node.taints.length === 0 || tolerator([...pod.tolerations, ...s.tolerations])(node);
    const score = (tolerated ? 1_000_000 : 0) + preferredWeight(s, node) * 100 + (hasRoom?.(s.name) ? 1 : 0);
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Seats per subset: bound pods (not terminating), unexpired reservations of pods the watch
 * does not show bound yet, and unbound pods marked with their subset. `exclude` is the pod being placed.
 * `version`: only the pods of that version count (the pod being placed is a Deployment's: Kruise's webhook
 * reads the subset statuses of its pod template's version alone).
 */
export function subsetQuotas(
  model: WorkloadFacts & { ws: SlimWorkloadSpread }, replicas: number, snapshot: Snapshot,
  reservations: ReservationView, exclude: string, unschedulable: (key: string) => number | undefined, version = '',
): SubsetQuota[] {
  const counts = (pod: SlimPod) => version === '' || podVersion(pod) === version;
  const { ws } = model;
  // Marked here (the filter waited) or in the status (the controller rescheduled its pods: until it says Schedulable again).
  const quotas = ws.subsets.map((s): SubsetQuota => ({
    name: s.name, max: resolveMax(s.maxReplicas, replicas), bound: 0, reserved: 0,
    unschedulableUntil: unschedulable(subsetKey(ws, s.name)) ?? (ws.schedulable.get(s.name)?.status === 'False' ? Infinity : undefined),
  }));
  const byName = new Map(quotas.map((q) => [q.name, q]));
  for (const pod of model.pods()) {
    if (pod.uid === exclude || !pod.nodeName || !counts(pod)) continue;
    const s = subsetOfPod(pod, ws, snapshot);
    if (s) byName.get(s)!.bound++;
  }
  const reserved = new Set<string>();
  for (const r of unboundReservations(model, reservations, snapshot, exclude)) {
    reserved.add(r.uid);
    // A reservation names its pod (`namespace/name`), and a ReplicaSet names its pods `<ReplicaSet>-<suffix>`.
    if (version !== '' && !r.pod.startsWith(`${version}-`, r.pod.indexOf('/') + 1)) continue;
    const q = r.subset === undefined ? undefined : byName.get(r.subset);
    if (q) q.reserved++;
  }
  // An unbound pod marked with its subset (by admission, the gate or Kruise's webhook) holds that seat until it binds.
  for (const pod of model.pods()) {
    if (pod.nodeName || pod.uid === exclude || reserved.has(pod.uid) || pod.kruiseMatch?.workloadSpread !== ws.name || !counts(pod)) continue;
    const q = byName.get(pod.kruiseMatch.subset);
    if (q) q.reserved++;
  }
  return quotas;
}

/**
 * StatefulSet targets: subset i holds ordinals [Σmax<i, Σmax≤i) as Kruise does (int only); the
 * subsets `skip` names (marked unschedulable) hold none, so the later ones take their ordinals.
 */
export function subsetForIndex(
  ws: SlimWorkloadSpread, index: number, replicas: number, skip: (subset: string) => boolean = () => false,
): WorkloadSpreadSubset | undefined {
  let end = 0;
  for (const s of ws.subsets) {
    if (skip(s.name)) continue;
    end += resolveMax(s.maxReplicas, replicas);
    if (index < end) return s;
  }
  return undefined;
}

/** Which nodes a subset's required term takes, the field named as the user's version names it. */
export function termNote(ws: Pick<SlimWorkloadSpread, 'userVersion'>, subset: WorkloadSpreadSubset): string {
  return subset.requiredNodeSelectorTerm ? ` (the nodes its ${SUBSET_FIELDS[ws.userVersion].required} takes)` : '';
}

export function describeQuota(q: SubsetQuota): string {
  const max = q.max === Infinity ? 'unlimited' : String(q.max);
  return `${q.name} ${q.bound + q.reserved}/${max}${q.reserved ? ` (${q.reserved} reserved)` : ''}`;
}

/**
 * Where the workload's pending pods go, as the filter would send them one after another: each
 * pod without a subset yet (no Kruise choice, no reservation) to the first subset in order with
 * room left (for the layout page; /debug/explain decides one pod for real).
 */
export function pendingSubsets(model: SpreadModel, quotas: readonly SubsetQuota[], snapshot: Snapshot, reserved: readonly string[]): Record<string, string> {
  const room = quotas.map((q) => (q.unschedulableUntil !== undefined ? 0 : q.max - q.bound - q.reserved));
  const held = new Set(reserved);
  const out: Record<string, string> = {};
  for (const pod of model.pods()) {
    if (pod.nodeName || held.has(pod.uid) || subsetOfPod(pod, model.ws, snapshot) !== undefined) continue;
    const i = room.findIndex((r) => r > 0);
    if (i < 0) break;
    room[i]!--;
    out[pod.name] = quotas[i]!.name;
  }
  return out;
}

/** The zone of each subset whose required term names exactly one value of the topology key. */
export function subsetZones(ws: SlimWorkloadSpread, topologyKey: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of ws.subsets) {
    const zones = (s.requiredNodeSelectorTerm?.matchExpressions ?? []).filter((e) => e.key === topologyKey && e.operator === 'In').map((e) => e.values);
    if (zones.length === 1 && zones[0]!.length === 1) out[s.name] = zones[0]![0]!;
  }
  return out;
}
