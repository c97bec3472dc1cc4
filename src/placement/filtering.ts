import type { SlimNode } from '../cluster/objects.js';
import type {
  Candidate, FilterInput, FilterVerdict, PolicyContext, PolicyOutcome, Rejection,
} from './verdict.js';
import { podVolumes } from './volumes.js';
import { findWorkloadSpread, subsetPolicy } from './workloadSpread.js';
import { optedOut, resolveWorkload, type WorkloadRef } from './workload.js';
import { zonePin } from './zonePin.js';

function passAll(candidates: Candidate[], summary: string, workload?: WorkloadRef): FilterVerdict {
  return {
    managed: false, policy: 'none', summary, workload,
    passed: candidates.map((c) => c.name), rejected: new Map(), effects: {},
  };
}

function rejectAll(candidates: Candidate[], rejection: Rejection, workload: WorkloadRef | undefined, policy: FilterVerdict['policy']): FilterVerdict {
  return {
    managed: true, policy, summary: rejection.reason, workload,
    passed: [], rejected: new Map(candidates.map((c) => [c.name, rejection])), effects: {},
  };
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
  const policy: FilterVerdict['policy'] = ws ? 'workloadspread'
    : ref.kind === 'StatefulSet' && settings.manageStatefulSets ? 'zone-pin' : 'none';

  if (resolved.missing) {
    // A WorkloadSpread may target the workload we cannot see yet: wait rather than guess.
    const mayBeManaged = policy !== 'none' || [...snapshot.workloadSpreads(pod.namespace)].length > 0;
    if (mayBeManaged) return rejectAll(candidates, { rule: 'cache', reason: resolved.missing, unresolvable: false }, ref, policy);
    return passAll(candidates, `not managed: ${resolved.missing}; no WorkloadSpread in ${pod.namespace}`, ref);
  }
  if (policy === 'none') return passAll(candidates, `not managed: no policy covers ${ref.kind} ${ref.namespace}/${ref.name}`, ref);

  const volumes = podVolumes(pod, snapshot);
  if (volumes.missing.length > 0) {
    return rejectAll(candidates, { rule: 'cache', reason: volumes.missing.join('; '), unresolvable: false }, ref, policy);
  }
  const volumeRejection = (node: SlimNode): Rejection | undefined => {
    const c = volumes.constraints.find((v) => !v.allows(node));
    return c ? { rule: 'volume', reason: c.describe, unresolvable: true } : undefined;
  };
  const feasible: SlimNode[] = [];
  for (const c of candidates) if (c.node && !volumeRejection(c.node)) feasible.push(c.node);
  const ctx: PolicyContext = { input, snapshot, feasible, boundVolume: volumes.constraints.some((v) => v.bound) };

  const outcome: PolicyOutcome = ws
    ? subsetPolicy(ctx, ref, resolved.object, ws)
    : zonePin(ctx, ref, resolved.object!, volumes.constraints);
  const { summary, admits, waitAll, subset, zone, ...effects } = outcome;

  const passed: string[] = [];
  const rejected = new Map<string, Rejection>();
  for (const c of candidates) {
    const r = !c.node
      ? { rule: 'cache' as const, reason: `node ${c.name} is not in zonekeeper's cache yet`, unresolvable: false }
      : volumeRejection(c.node) ?? waitAll ?? admits?.(c.node);
    if (r) rejected.set(c.name, r);
    else passed.push(c.name);
  }
  return { managed: true, policy, summary, workload: ref, passed, rejected, effects, subset, zone };
}
