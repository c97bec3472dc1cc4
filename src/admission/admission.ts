import type { Logger } from 'pino';
import { slimPod, unshared } from '../cluster/convert.js';
import type { SlimPod } from '../cluster/objects.js';
import { admissionPatch, type AdmissionDecision } from '../placement/zoneGate.js';
import { allowed, type PodCreate } from './review.js';

// The third transport (docs/design.md#admission): a pod CREATE decoded, decided by the core
// (through ExtenderService.decideAdmission), and the decision written into the pod as it is
// created, or the zone gate added for the keeper. Decode → decide → encode, nothing else.

export interface AdmissionDeps {
  decide(pod: SlimPod, o: { dryRun: boolean; leading: boolean }): Promise<AdmissionDecision>;
  /** Whether this replica holds the Lease (or runs alone). */
  leading(): boolean;
  /** The gate keeper runs: a pod admission does not decide may be gated for it. */
  gateEnabled: boolean;
  log: Logger;
}

/** What admission answers for one pod CREATE, and what it decided (metrics, logs). */
export async function admitPod(create: PodCreate, deps: AdmissionDeps): Promise<{ answer: object; outcome: AdmissionDecision['kind'] }> {
  const raw = { ...create.object, metadata: { ...create.object.metadata, namespace: create.namespace } };
  // The pod has no UID yet: the review's names it in the decision and its reservation.
  const pod = { ...slimPod(raw, unshared), uid: create.uid };
  const d = await deps.decide(pod, { dryRun: create.dryRun, leading: deps.leading() });
  if (d.kind === 'gate') {
    if (!deps.gateEnabled) return { answer: allowed(create.uid, [], [`zonekeeper: not placed at creation (${d.why}); gate.enabled is false, so the extender's filter decides`]), outcome: d.kind };
    return { answer: allowed(create.uid, admissionPatch(raw, 'gate')), outcome: d.kind };
  }
  deps.log.debug({ pod: `${pod.namespace}/${pod.name || raw.metadata?.generateName || ''}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined }, 'decided at admission');
  return { answer: allowed(create.uid, admissionPatch(raw, d)), outcome: d.kind };
}
