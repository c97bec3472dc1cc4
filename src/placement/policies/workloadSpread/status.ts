import { workloadKindSpec, type WorkloadKind } from '../../../cluster/kinds.js';
import type { SlimPod, SlimWorkloadSpread, SubsetCondition, WorkloadSpreadSubsetStatus } from '../../../cluster/objects.js';
import { workloadSpreadVersionOf } from '../../../cluster/workloadSpreadVersions.js';
import type { Snapshot } from '../../../cluster/store.js';
import { workloadModel, type ZoneListDeps } from '../../model.js';
import { ADMITTED_UID_PREFIX, type ReservationView } from '../../reservations.js';
import type { PlacementSettings } from '../../settings.js';
import { podVolumes } from '../../volumes.js';
import { neverGivenUp, resolveMax, subsetOfPod } from './subsets.js';

export interface WorkloadSpreadStatus {
  observedGeneration: number;
  subsetStatuses: WorkloadSpreadSubsetStatus[];
}

/** A pod Pending in a subset of an Adaptive WorkloadSpread beyond rescheduleCriticalSeconds. */
interface UnscheduledPod {
  subset: string;
  pod: SlimPod;
  /** Its bound volume holds it where it is: never deleted (docs/design.md#workloadspread). */
  heldByVolume: boolean;
}

/** One pass of OpenKruise's WorkloadSpread controller, as plain data (docs/design.md#workloadspread). */
export interface SpreadStatusPass {
  status: WorkloadSpreadStatus;
  /** Kruise deletes these once their subset is marked unschedulable, so that their replacements go to the next subset. */
  unscheduled: UnscheduledPod[];
  /** Subsets whose recovery window ended in this pass: schedulable again (Kruise's RecoverSchedulable Event). */
  recovered: string[];
  /** When the pass would answer differently by time alone (a pod timing out, a window ending), in ms from now. */
  nextCheckMs: number | undefined;
}

/** Times as Kubernetes writes them: RFC 3339, whole seconds. */
export const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Kruise's setWorkloadSpreadSubsetCondition: the same status and reason keep the condition as it
 * is; the same status keeps its lastTransitionTime.
 */
function nextCondition(old: SubsetCondition | undefined, status: 'True' | 'False', reason: string, now: number): SubsetCondition {
  if (old && old.status === status && old.reason === reason) return old;
  return { type: 'Schedulable', status, reason, lastTransitionTime: old?.status === status ? old.lastTransitionTime : rfc3339(now) };
}

/** The pods the target workload holds, its replicas and the key its reservations are kept under; none while it is not cached. */
export function targetPods(ws: SlimWorkloadSpread, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps) {
  const kind = workloadKindSpec(ws.targetRef.kind)?.kind as WorkloadKind | undefined;
  if (!kind) return { pods: [] as readonly SlimPod[], replicas: 0, key: undefined };
  const target = snapshot.workload(kind, ws.namespace, ws.targetRef.name);
  const model = workloadModel({ kind, namespace: ws.namespace, name: ws.targetRef.name }, target, snapshot, settings, lists);
  return { pods: model.pods(), replicas: target?.replicas ?? 0, key: model.key };
}

/**
 * The status OpenKruise's controller writes for a WorkloadSpread, for every WorkloadSpread
 * whether its target is cached or not (docs/design.md#workloadspread): per subset the active
 * pods matched to it (Pending ones included), how many it still misses (−1: unlimited), the
 * pods given a seat there that the cache does not count yet, and, for Adaptive, the
 * `Schedulable` condition: False while a pod of the subset (the last one excepted) has waited
 * unscheduled beyond rescheduleCriticalSeconds, True again `recoverySeconds` after it turned False.
 * `marks` false (workloadSpread.rescheduleDryRun): such pods are reported, no subset is marked False.
 */
export function workloadSpreadStatus(
  ws: SlimWorkloadSpread, snapshot: Snapshot, settings: PlacementSettings, reservations: ReservationView, now: number, lists: ZoneListDeps = {},
  marks = true,
): SpreadStatusPass {
  const { pods, replicas, key } = targetPods(ws, snapshot, settings, lists);
  const members = new Map<string, SlimPod[]>(ws.subsets.map((s) => [s.name, []]));
  const counted = new Set<string>();
  for (const pod of pods) {
    const subset = subsetOfPod(pod, ws, snapshot);
    const list = subset === undefined ? undefined : members.get(subset);
    if (!list) continue;
    list.push(pod);
    counted.add(pod.uid);
  }
  // Kruise's creatingPods: admitted (or reserved by a filter) into a subset, not counted in it yet.
  const creating = new Map<string, Record<string, string>>();
  for (const r of key === undefined ? [] : reservations.forWorkload(key)) {
    if (r.subset === undefined || !members.has(r.subset) || counted.has(r.uid)) continue;
    const name = r.pod.slice(r.pod.indexOf('/') + 1) || r.uid.replace(ADMITTED_UID_PREFIX, '');
    (creating.get(r.subset) ?? creating.set(r.subset, {}).get(r.subset)!)[name] = rfc3339(r.at);
  }

  const criticalMs = ws.strategy === 'Adaptive' ? ws.rescheduleCriticalSeconds * 1000 : 0;
  const recoveryMs = settings.adaptiveUnschedulableSeconds * 1000;
  const unscheduled: UnscheduledPod[] = [];
  const recovered: string[] = [];
  let nextCheckMs: number | undefined;
  const checkIn = (ms: number) => { nextCheckMs = Math.max(1, Math.min(nextCheckMs ?? Infinity, ms)); };

  const subsetStatuses = ws.subsets.map((s): WorkloadSpreadSubsetStatus => {
    const inIt = members.get(s.name)!;
    const max = resolveMax(s.maxReplicas, replicas);
    const creatingPods = creating.get(s.name) ?? {};
    const missingReplicas = max === Infinity ? -1 : Math.max(0, max - inIt.length - Object.keys(creatingPods).length);
    const old = ws.schedulable.get(s.name);
    const conditions: SubsetCondition[] = [];
    if (criticalMs > 0 && neverGivenUp(ws, s)) {
      // Always schedulable.
      conditions.push(nextCondition(old, 'True', 'Sufficient', now));
    } else if (criticalMs > 0) {
      const timedOut = inIt.filter((p) => {
        if (!p.unschedulable) return false;
        const left = p.createdAt + criticalMs - now;
        if (left >= 0) checkIn(left + 1);
        return left < 0;
      });
      for (const pod of timedOut) unscheduled.push({ subset: s.name, pod, heldByVolume: podVolumes(pod, snapshot).constraints.some((c) => c.bound) });
      if (timedOut.length > 0 && marks) conditions.push(nextCondition(old, 'False', 'PodUnschedulable', now));
      else if (old?.status === 'False') {
        const left = Date.parse(old.lastTransitionTime) + recoveryMs - now;
        if (left < 0 || Number.isNaN(left)) {
          recovered.push(s.name);
          conditions.push(nextCondition(old, 'True', 'Sufficient', now));
        } else {
          checkIn(left + 1);
          conditions.push(old);
        }
      } else conditions.push(old ?? nextCondition(undefined, 'True', 'Sufficient', now));
    }
    return { name: s.name, replicas: inIt.length, missingReplicas, creatingPods, deletingPods: {}, conditions };
  });
  return { status: { observedGeneration: ws.generation, subsetStatuses }, unscheduled, recovered, nextCheckMs };
}

/** A v1beta1 subset condition as metav1.Condition serializes it: message always present (Kruise's controller writes ""). */
const metaV1Condition = (c: SubsetCondition) => ({ type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: '' });

/**
 * The status as Kruise's API types serialize it at `apiVersion` (the version it is written at):
 * empty maps and lists left out (omitempty); v1beta1's conditions are metav1.Conditions.
 */
export function kruiseStatusJson(status: WorkloadSpreadStatus, apiVersion = 'apps.kruise.io/v1alpha1'): object {
  const beta = workloadSpreadVersionOf(apiVersion) === 'v1beta1';
  return {
    observedGeneration: status.observedGeneration,
    subsetStatuses: status.subsetStatuses.map((s) => ({
      name: s.name,
      replicas: s.replicas,
      ...(s.conditions.length > 0 ? { conditions: beta ? s.conditions.map(metaV1Condition) : s.conditions } : {}),
      missingReplicas: s.missingReplicas,
      ...(Object.keys(s.creatingPods).length > 0 ? { creatingPods: s.creatingPods } : {}),
      ...(Object.keys(s.deletingPods).length > 0 ? { deletingPods: s.deletingPods } : {}),
    })),
  };
}
