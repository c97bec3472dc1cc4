import type {
  SlimNode, SlimPod, SlimWorkloadSpread, Toleration, WorkloadSpreadSubset,
} from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { matchesTerm, tolerator } from './nodeMatching.js';
import { unboundReservations, type SpreadModel } from './model.js';
import type { ReservationView } from './reservations.js';
import type { PolicyContext, PolicyOutcome } from './verdict.js';
import type { WorkloadRef } from './workload.js';

/** One subset's seats: how many it may hold and how many are taken. */
export interface SubsetQuota {
  name: string;
  /** Infinity when maxReplicas is nil. */
  max: number;
  bound: number;
  reserved: number;
  /** Adaptive only: skipped until this time (ms). */
  unschedulableUntil: number | undefined;
}

export const subsetKey = (ws: SlimWorkloadSpread, subset: string) => `${ws.namespace}/${ws.name}/${subset}`;

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

/** The subset a placed pod occupies: Kruise's annotation first, else where its node is. */
export function subsetOfPod(pod: SlimPod, ws: SlimWorkloadSpread, snapshot: Snapshot): string | undefined {
  if (pod.kruiseMatch?.workloadSpread === ws.name) return pod.kruiseMatch.subset;
  const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
  if (!node) return undefined;
  return ws.subsets.find((s) => !s.requiredNodeSelectorTerm || matchesTerm(s.requiredNodeSelectorTerm, node))?.name;
}

/**
 * Seats per subset: bound pods (not terminating) plus unexpired reservations of pods
 * the watch does not show bound yet. `exclude` is the pod being placed.
 */
export function subsetQuotas(
  model: SpreadModel, replicas: number, snapshot: Snapshot,
  reservations: ReservationView, exclude: string, unschedulable: (key: string) => number | undefined,
): SubsetQuota[] {
  const { ws } = model;
  const quotas = ws.subsets.map((s): SubsetQuota => ({
    name: s.name, max: resolveMax(s.maxReplicas, replicas), bound: 0, reserved: 0,
    unschedulableUntil: unschedulable(subsetKey(ws, s.name)),
  }));
  const byName = new Map(quotas.map((q) => [q.name, q]));
  for (const pod of model.pods()) {
    if (pod.uid === exclude || !pod.nodeName) continue;
    const s = subsetOfPod(pod, ws, snapshot);
    if (s) byName.get(s)!.bound++;
  }
  for (const r of unboundReservations(model, reservations, snapshot, exclude)) {
    const q = r.subset === undefined ? undefined : byName.get(r.subset);
    if (q) q.reserved++;
  }
  return quotas;
}

/** StatefulSet targets: subset i holds ordinals [Σmax<i, Σmax≤i) as Kruise does (int only). */
export function subsetForIndex(ws: SlimWorkloadSpread, index: number, replicas: number): WorkloadSpreadSubset | undefined {
  let end = 0;
  for (const s of ws.subsets) {
    end += resolveMax(s.maxReplicas, replicas);
    if (index < end) return s;
  }
  return undefined;
}

export function describeQuota(q: SubsetQuota): string {
  const max = q.max === Infinity ? 'unlimited' : String(q.max);
  return `${q.name} ${q.bound + q.reserved}/${max}${q.reserved ? ` (${q.reserved} reserved)` : ''}`;
}


/**
 * The subset a pod goes to (design §5): Kruise's own choice when the webhook made one,
 * the ordinal range for StatefulSets, else the first subset in priority order with room.
 * Adaptive skips a subset with no feasible node once the pod has waited
 * rescheduleCriticalSeconds, and marks it unschedulable for everyone.
 */
export function subsetPolicy(ctx: PolicyContext, model: SpreadModel): PolicyOutcome {
  const { input, snapshot } = ctx;
  const { ref, workload, ws } = model;
  const { pod, now } = input;
  const label = `WorkloadSpread ${ws.name}`;
  const wait = (reason: string): PolicyOutcome => ({
    summary: reason, waitAll: { rule: 'workloadspread', reason: `${label}: ${reason}`, unresolvable: false }, effects: {},
  });
  if (!workload && ws.subsets.some((s) => typeof s.maxReplicas === 'string')) {
    return wait(`replicas of ${ref.kind} ${ref.name} unknown, so a percent maxReplicas cannot be resolved`);
  }
  const replicas = workload?.replicas ?? 0;
  const members = new Map<WorkloadSpreadSubset, (node: SlimNode) => boolean>();
  const inSubset = (s: WorkloadSpreadSubset) => members.get(s) ?? members.set(s, subsetMembership(s, pod.tolerations)).get(s)!;
  const outcome = (subset: WorkloadSpreadSubset, why: string): PolicyOutcome => {
    const summary = `${label}: subset ${subset.name} (${why})`;
    const allows = inSubset(subset);
    const rejection = { rule: 'workloadspread' as const, reason: `not in subset ${subset.name} of ${label}`, unresolvable: false };
    return {
      summary, subset: { ws, subset }, effects: { reserve: { subset: subset.name } },
      admits: (node) => (allows(node) ? undefined : rejection),
    };
  };

  const matched = pod.kruiseMatch?.workloadSpread === ws.name ? ws.subsets.find((s) => s.name === pod.kruiseMatch!.subset) : undefined;
  if (matched) return outcome(matched, 'chosen by the OpenKruise webhook');

  if (model.seats === 'ordinal' && workload) {
    const { index } = model.seat(pod);
    const subset = index >= 0 ? subsetForIndex(ws, index, replicas) : undefined;
    if (!subset) return wait(`ordinal ${pod.ordinal} is beyond every subset's range`);
    return outcome(subset, `ordinal ${pod.ordinal} is in its range`);
  }

  const quotas = subsetQuotas(model, replicas, snapshot, input.reservations, pod.uid, input.unschedulableUntil);
  const adaptive = ws.strategy === 'Adaptive';
  const open = ws.subsets
    .map((subset, i) => ({ subset, quota: quotas[i]! }))
    .filter(({ quota }) => quota.bound + quota.reserved < quota.max
      && !(adaptive && quota.unschedulableUntil !== undefined && quota.unschedulableUntil > now));
  const first = open[0];
  if (!first) return wait(`every subset is full or unschedulable (${quotas.map(describeQuota).join(', ')})`);
  if (!adaptive) return outcome(first.subset, describeQuota(first.quota));

  const feasible = (s: WorkloadSpreadSubset) => ctx.feasible().some(inSubset(s));
  if (feasible(first.subset)) return outcome(first.subset, describeQuota(first.quota));
  const waited = input.waitingSince === undefined ? 0 : now - input.waitingSince;
  if (waited < ws.rescheduleCriticalSeconds * 1000) {
    return {
      ...outcome(first.subset, `${describeQuota(first.quota)}; no feasible node, Adaptive waits ${ws.rescheduleCriticalSeconds}s before the next subset`),
      retryAfterMs: ws.rescheduleCriticalSeconds * 1000 - waited,
    };
  }
  const next = open.slice(1).find(({ subset }) => feasible(subset)) ?? open[1];
  const markUnschedulable = { key: subsetKey(ws, first.subset.name), until: now + input.settings.adaptiveUnschedulableSeconds * 1000 };
  const marked = (o: PolicyOutcome): PolicyOutcome => ({ ...o, effects: { ...o.effects, markUnschedulable } });
  if (!next) return marked(wait(`subset ${first.subset.name} has no feasible node and no other subset has room`));
  return marked(outcome(next.subset, `${describeQuota(next.quota)}; ${first.subset.name} had no feasible node for ${ws.rescheduleCriticalSeconds}s`));
}
