import type { SlimPod } from '../cluster/objects.js';
import type { DecisionService } from '../decision/service.js';
import type { GateDecision } from '../placement/zoneGate.js';

/**
 * A gated pod's decision (docs/design.md#the-zone-gate), what the keeper writes with one patch:
 * the filter's policy code over the schedulable cached nodes; an instance ID is assigned first, as
 * the filter does. A decided verdict's effects (reservation, list freeze) are carried out; nothing is decided blind.
 */
export async function decideGate(service: DecisionService, pod: SlimPod): Promise<GateDecision> {
  const waits = service.specWaits(pod);
  if (waits) return { kind: 'wait', why: waits };
  const decided = await service.decide(pod, service.schedulableNow(), {
    writesSpec: true, claimId: { annotate: false }, commit: (x) => service.written(x).kind !== 'wait',
  });
  const d = service.written(decided);
  service.record('gate', pod, decided.verdict, { outcome: d.kind === 'wait' ? 'waiting' : 'ungated' });
  return d;
}
