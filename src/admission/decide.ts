import type { SlimPod } from '../cluster/objects.js';
import type { Decided } from '../decision/core.js';
import type { DecisionService } from '../decision/service.js';
import type { FilterVerdict } from '../placement/verdict.js';
import type { GateDecision } from '../placement/zoneGate.js';
import type { AdmissionDecision } from './patch.js';

/** Admission's decision, and the verdict it committed (reserved, claimed, frozen), if it did. */
export interface Admission { decision: AdmissionDecision; committed?: FilterVerdict }

/**
 * The decision for a pod being created (docs/design.md#admission), written into it at once.
 * Only the Lease holder decides (quotas, zone limits, instance IDs and list freezes are
 * counted in one place); a pod that cannot be decided now (a replica without the Lease, a
 * volume that may move, no room, an adaptive fallback to watch) gets the zone gate, and the
 * keeper decides it. `dryRun`: nothing is reserved, claimed or written.
 */
export async function decideAdmission(
  service: DecisionService, pod: SlimPod, o: { dryRun: boolean; leading: boolean; subsetsRescheduled?: boolean },
): Promise<Admission> {
  const waits = service.specWaits(pod);
  if (waits) return { decision: { kind: 'gate', why: waits } };
  const nodes = service.schedulableNow();
  // Written now or left to the keeper: a pod lifted under an adaptive fallback is the keeper's to watch, except an Adaptive
  // subset's when zonekeeper keeps WorkloadSpread status (`subsetsRescheduled`): its controller reschedules the subset's pods as Kruise's does.
  const watched = (g: GateDecision) => g.kind !== 'wait' && g.kind !== 'as-is' && !!g.fallback && !(g.kind === 'subset' && o.subsetsRescheduled);
  const now = (x: Decided): AdmissionDecision => {
    if (!x.verdict.managed) return { kind: 'as-is', why: x.verdict.summary };
    const g = service.written(x);
    return g.kind === 'wait' || watched(g) ? { kind: 'gate', why: g.why } : g;
  };
  if (!o.leading || o.dryRun) {
    const dry = service.decideNow(pod, nodes, { writesSpec: true });
    if (!dry.verdict.managed) return { decision: { kind: 'as-is', why: dry.verdict.summary } };
    if (!o.leading) return { decision: { kind: 'gate', why: 'this replica does not hold the Lease: the zone gate keeper decides it' } };
    const noId = dry.model?.seats === 'instance-id' && pod.instanceId < 0;
    return { decision: noId ? { kind: 'gate', why: 'a dry run takes no instance ID' } : now(dry) };
  }
  // One decision, its effects carried out in the same turn (the next review sees its reservation).
  const decided = await service.decide(pod, nodes, { writesSpec: true, claimId: { annotate: false }, commit: (x) => x.verdict.managed && now(x).kind !== 'gate' });
  return { decision: now(decided), committed: decided.verdict };
}
