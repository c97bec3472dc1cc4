import type { SlimNode, SlimWorkload, SlimWorkloadSpread } from '../cluster/objects.js';
import { clipReason } from './verdict.js';
import type {
  Candidate, FilterInput, FilterVerdict, PlacementSettings, PolicyContext, PolicyName, PolicyOutcome, Rejection,
} from './verdict.js';
import { optedIn } from './instanceIds.js';
import { DEFAULT_PREFERENCES, preferencesOf } from './preferences.js';
import { podVolumes } from './volumes.js';
import { findWorkloadSpread, subsetPolicy } from './workloadSpread.js';
import { optedOut, resolveWorkload, workloadKey, type WorkloadRef } from './workload.js';
import { zoneBalance } from './zoneBalance.js';
import { instanceSeat, ordinalSeat, zonePin } from './zonePin.js';

// The node's name is the key it is reported under, so one reason serves every such node.
const NOT_CACHED: Rejection = { rule: 'cache', reason: "node not in zonekeeper's cache yet", unresolvable: false };

function passAll(candidates: Candidate[], summary: string, workload?: WorkloadRef): FilterVerdict {
  return {
    managed: false, policy: 'none', summary, workload,
    passed: candidates.map((c) => c.name), rejected: new Map(), effects: {},
  };
}

/** Every node waits for one reason; the pod is managed. */
export function rejectAll(candidates: Candidate[], rejection: Rejection, workload?: WorkloadRef, policy: PolicyName = 'zone-pin'): FilterVerdict {
  return {
    managed: true, policy, summary: rejection.reason, workload,
    passed: [], rejected: new Map([[rejection, candidates.map((c) => c.name)]]), effects: {},
  };
}

/**
 * Which policy covers a workload. Precedence (DESIGN §3): a WorkloadSpread decides when one
 * targets the workload; else ordinals or instance IDs pin a zone; else zone preferences
 * balance the zones.
 */
export function policyOf(kind: string, workload: SlimWorkload | undefined, ws: SlimWorkloadSpread | undefined, settings: PlacementSettings): PolicyName {
  if (ws) return 'workloadspread';
  if (kind === 'StatefulSet') return settings.manageStatefulSets ? 'zone-pin' : 'none';
  if (kind !== 'Deployment' && kind !== 'ReplicaSet') return 'none';
  if (optedIn(workload)) return 'zone-pin';
  return preferencesOf(workload) ? 'zone-balance' : 'none';
}

/**
 * Filter (DESIGN §3): volumes first (hard, they always win), then the zone pin or the
 * WorkloadSpread subset. The node set passed is what every applicable rule allows;
 * every rejected node carries the reason of the first rule that rejected it.
 */
export function filterNodes(input: FilterInput): FilterVerdict {
  const { pod, snapshot, candidates, settings } = input;
  const resolved = resolveWorkload(pod, snapshot);
  if (!resolved) return passAll(candidates, 'not managed: the pod has no controller owner');
  const ref = resolved.ref;
  if (optedOut(pod, resolved.object)) return passAll(candidates, 'not managed: zonekeeper.io/ignore is "true"', ref);

  const replicaSet = pod.owner?.kind === 'ReplicaSet' ? pod.owner.name : undefined;
  const ws = findWorkloadSpread(snapshot, ref, replicaSet);
  const workload = resolved.object;
  const parsed = preferencesOf(workload);
  const preferences = parsed === undefined ? undefined : parsed.ok ? parsed.spec : DEFAULT_PREFERENCES;
  const policy = policyOf(ref.kind, workload, ws, settings);

  if (resolved.missing) {
    // The policy may live on the workload we cannot see yet: wait rather than guess.
    return rejectAll(candidates, { rule: 'cache', reason: resolved.missing, unresolvable: false }, ref, policy);
  }
  if (policy === 'none') return passAll(candidates, `not managed: no policy covers ${ref.kind} ${ref.namespace}/${ref.name}`, ref);

  const volumes = podVolumes(pod, snapshot);
  if (volumes.missing.length > 0) {
    return rejectAll(candidates, { rule: 'cache', reason: clipReason(volumes.missing.join('; ')), unresolvable: false }, ref, policy);
  }
  const volumeRejections = volumes.constraints.map((c): Rejection => ({ rule: 'volume', reason: c.describe, unresolvable: true }));
  const volumeRejection = (node: SlimNode): Rejection | undefined => {
    const i = volumes.constraints.findIndex((v) => !v.allows(node));
    return i < 0 ? undefined : volumeRejections[i];
  };
  let feasible: SlimNode[] | undefined;
  const ctx: PolicyContext = {
    input, snapshot, boundVolume: volumes.constraints.some((v) => v.bound),
    // Only fallbacks need it: computed on first use, not on every call.
    get feasible() {
      if (!feasible) {
        feasible = [];
        for (const c of candidates) if (c.node && !volumeRejection(c.node)) feasible.push(c.node);
      }
      return feasible;
    },
  };

  let outcome: PolicyOutcome;
  if (ws) outcome = subsetPolicy(ctx, ref, workload, ws);
  else if (policy === 'zone-balance') outcome = zoneBalance(ctx, ref, workload!, preferences!);
  else {
    const seat = ref.kind === 'StatefulSet' ? ordinalSeat(pod.ordinal, workload!, pod.name) : instanceSeat(pod.instanceId, pod.name);
    outcome = zonePin(ctx, ref, workload!, volumes.constraints, seat, preferences);
  }
  if (parsed && !parsed.ok) outcome.preferencesError = { workload: workloadKey(ref), error: parsed.error };
  const { summary, admits, waitAll, subset, zone, retryAfterMs, ...effects } = outcome;

  const passed: string[] = [];
  const rejected = new Map<Rejection, string[]>();
  const checkVolumes = volumes.constraints.length > 0;
  for (const c of candidates) {
    const node = c.node;
    const r = !node ? NOT_CACHED : (checkVolumes ? volumeRejection(node) : undefined) ?? waitAll ?? admits?.(node);
    if (!r) {
      passed.push(c.name);
      continue;
    }
    const names = rejected.get(r);
    if (names) names.push(c.name);
    else rejected.set(r, [c.name]);
  }
  return { managed: true, policy, summary, workload: ref, passed, rejected, effects, subset, zone, retryAfterMs };
}
