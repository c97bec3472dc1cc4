import { podModel, type WorkloadModel } from './model.js';
import { filterNode, preFilter, type FilterState } from './filterState.js';
import { groupedFilter } from './nodeGroups.js';
import { spreadWithinZone } from './nodeSpread.js';
import type { PlacementInput, Rejection } from './policy.js';
import type { FilterVerdict } from './verdict.js';

/** The model filter and prioritize place a pod by (built once per request). */
function modelOf(input: PlacementInput): WorkloadModel | undefined {
  return podModel(input.pod, input.snapshot, input.settings, { pendingFreezes: input.pendingFreezes, forPlacement: true });
}

/**
 * Filter (docs/design.md#which-policy-places-a-pod), in PodTopologySpread's shape: the pod's
 * state computed once (preFilter), then every candidate judged by the per-node filter, or every
 * group of alike candidates at once (groupedFilter), then spreading within the zone. The node set
 * passed is what every applicable rule allows; every rejected node carries the reason of the
 * first rule that rejected it.
 */
export function filterNodes(input: PlacementInput, model: WorkloadModel | undefined = modelOf(input)): FilterVerdict {
  const pre = preFilter(input, model);
  if ('verdict' in pre) return pre.verdict;
  const s = pre.state;
  const { passed, rejected } = groupedFilter(s) ?? filterEachNode(s);
  const spread = spreadWithinZone(s, passed, rejected);
  const { outcome } = s;
  return {
    managed: true, policy: s.policy, summary: outcome.summary, workload: s.model.ref, model: s.model,
    passed: spread, rejected, effects: s.effects, subset: outcome.subset, zone: outcome.zone, retryAfterMs: outcome.retryAfterMs, boundVolume: s.boundVolume,
  };
}

/** Every candidate through the per-node filter: the passed names, the rejected ones by reason. */
function filterEachNode(s: FilterState): { passed: string[]; rejected: Map<Rejection, string[]> } {
  const names = s.input.candidates.names;
  const passed: string[] = [];
  const rejected = new Map<Rejection, string[]>();
  // Rejections come in few distinct objects (one per reason): remember the last one's list.
  let lastRejection: Rejection | undefined;
  let lastNames: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const r = filterNode(s, i);
    if (!r) {
      passed.push(names[i]!);
      continue;
    }
    if (r !== lastRejection) {
      lastRejection = r;
      lastNames = rejected.get(r) ?? rejected.set(r, []).get(r)!;
    }
    lastNames.push(names[i]!);
  }
  return { passed, rejected };
}
