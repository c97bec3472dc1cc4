import type { SlimNode, WorkloadSpreadSubset } from '../../../cluster/objects.js';
import type { PolicyContext, PolicyOutcome } from '../../policy.js';
import { describeQuota, termNote, neverGivenUp, subsetForIndex, subsetKey, subsetMembership, subsetQuotas } from './subsets.js';
import type { SpreadModel } from './subsets.js';
import { podVersion } from './versions.js';

/**
 * The subset a pod goes to (docs/design.md#workloadspread): the one its matched-workloadspread annotation names,
 * the ordinal range for StatefulSets, else the first subset in priority order with room.
 * When none can take the pod it is admitted without a subset (podsBeyondSubsets: admit, Kruise's way) or waits.
 * Adaptive skips a subset the scheduler sent no node of at once (unless
 * disableSimulationSchedule); one whose sent nodes the pod's volumes exclude once the pod has
 * waited rescheduleCriticalSeconds, and then marks it unschedulable for everyone; never the last
 * subset, whose pod waits for it. A subset the
 * status marks unschedulable (the controller rescheduled its pods) is skipped until it recovers.
 */
export function subsetPolicy(ctx: PolicyContext, model: SpreadModel): PolicyOutcome {
  const { input, snapshot } = ctx;
  const { ref, workload, ws } = model;
  const { pod, now } = input;
  const label = `WorkloadSpread ${ws.name}`;
  const wait = (reason: string): PolicyOutcome => ({
    summary: reason, waitAll: { rule: 'workloadspread', reason: `${label}: ${reason}`, unresolvable: false }, effects: {},
  });
  // No subset can take the pod: Kruise admits it without one (a WorkloadSpread limits its subsets, not the workload); `wait` is the opt-in strict mode.
  const beyondSubsets = (reason: string): PolicyOutcome => (input.settings.podsBeyondSubsets === 'wait'
    ? wait(reason) : { summary: `${label}: no subset (${reason}); admitted without one, as OpenKruise does`, effects: {} });
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
  // Written at admission by OpenKruise's webhook, or by zonekeeper's own admission or gate (standalone).
  if (matched) return outcome(matched, 'named by its apps.kruise.io/matched-workloadspread annotation');
  const adaptive = ws.strategy === 'Adaptive';

  if (model.seats === 'ordinal' && workload) {
    const { index } = model.seat(pod);
    const marked = (s: string) => adaptive && ws.schedulable.get(s)?.status === 'False';
    const subset = index >= 0 ? subsetForIndex(ws, index, replicas, marked) : undefined;
    if (!subset) return beyondSubsets(`ordinal ${pod.ordinal} is beyond every subset's range`);
    return outcome(subset, `ordinal ${pod.ordinal} is in its range`);
  }

  // Kruise counts a Deployment's subsets per pod template: a rollout's new pods fill each subset up to its max again.
  const quotas = subsetQuotas(model, replicas, snapshot, input.reservations, pod.uid, (key) => input.unschedulableSubsets.get(key), podVersion(pod));
  const open = ws.subsets
    .map((subset, i) => ({ subset, quota: quotas[i]! }))
    .filter(({ quota }) => quota.bound + quota.reserved < quota.max
      && !(adaptive && quota.unschedulableUntil !== undefined && quota.unschedulableUntil > now));
  const first = open[0];
  if (!first) return beyondSubsets(`every subset is full or unschedulable: ${quotas.map(describeQuota).join(', ')}`);
  // The subsets passed over before it, and why: "subset-a is full: 2/2".
  const skipped = quotas.slice(0, ws.subsets.indexOf(first.subset))
    .map((q) => (q.bound + q.reserved >= q.max ? `${q.name} is full: ${q.bound + q.reserved}/${q.max}` : `${q.name} is unschedulable for now`));
  const after = (why: string) => (skipped.length > 0 ? `${skipped.join('; ')}; ${why}` : why);
  if (!adaptive) return outcome(first.subset, after(describeQuota(first.quota)));

  const feasible = (s: WorkloadSpreadSubset) => ctx.someFeasible(inSubset(s));
  if (feasible(first.subset)) return outcome(first.subset, after(describeQuota(first.quota)));
  // Kruise's webhook simulates first: a subset none of whose nodes the scheduler sent (all
  // cordoned, full or tainted) cannot take the pod now, so the next one with a feasible node does.
  if (ws.simulationSchedule && !input.candidates.nodes.some((n) => n !== undefined && inSubset(first.subset)(n))) {
    const next = open.slice(1).find(({ subset }) => feasible(subset));
    if (next) return outcome(next.subset, `${describeQuota(next.quota)}; the scheduler sent no node of ${first.subset.name}${termNote(ws, first.subset)}`);
  }
  // Going beyond every subset would put the pod on any node, a full subset's too (a robustness run's overfilled zone).
  if (neverGivenUp(ws, first.subset)) {
    return outcome(first.subset, `${describeQuota(first.quota)}; no feasible node, and Adaptive never gives up the last subset`);
  }
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
  if (!next) return marked(beyondSubsets(`subset ${first.subset.name} has no feasible node${termNote(ws, first.subset)} and no other subset has room`));
  return marked(outcome(next.subset, `${describeQuota(next.quota)}; ${first.subset.name} had no feasible node for ${ws.rescheduleCriticalSeconds}s`));
}
