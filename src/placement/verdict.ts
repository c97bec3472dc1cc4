import type { Candidates, Effects, Rejection } from './policy.js';
import type { SlimWorkloadSpread, WorkloadSpreadSubset } from '../cluster/objects.js';
import type { WorkloadModel } from './model.js';
import type { PolicyName } from './policies/index.js';
import type { WorkloadRef } from './workload.js';

/** A filter's answer for one pod: which candidates pass, why the others do not, what to carry out. */
export interface FilterVerdict {
  managed: boolean;
  policy: PolicyName | 'none';
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
  /** A bound volume holds the pod in its zone (data does not move: no fallback). */
  boundVolume?: boolean;
}

export function rejectedCount(v: FilterVerdict): number {
  let n = 0;
  for (const names of v.rejected.values()) n += names.length;
  return n;
}

/** The rejection of one node, or undefined when it passed (a scan: for tests). */
export function rejectionOf(v: FilterVerdict, node: string): Rejection | undefined {
  for (const [r, names] of v.rejected) if (names.includes(node)) return r;
  return undefined;
}

/** Every candidate passes: the pod is not managed (no policy covers it). */
export function passAll(candidates: Candidates, summary: string, model?: WorkloadModel): FilterVerdict {
  return {
    managed: false, policy: 'none', summary, workload: model?.ref, model,
    passed: candidates.names, passedUnknown: true, rejected: new Map(), effects: {},
  };
}

/** Every node waits for one reason; the pod is managed. */
export function rejectAll(candidates: Candidates, rejection: Rejection, model?: WorkloadModel, policy: PolicyName | 'none' = 'zone-pin'): FilterVerdict {
  return {
    managed: true, policy, summary: rejection.reason, workload: model?.ref, model,
    passed: [], rejected: new Map([[{ ...rejection, unknownNames: true }, [...candidates.names]]]), effects: {},
  };
}
