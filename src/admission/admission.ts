import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { slimPod, unshared } from '../cluster/convert.js';
import type { SlimPod } from '../cluster/objects.js';
import type { DecisionService } from '../decision/service.js';
import { ADMITTED_UID_PREFIX } from '../placement/reservations.js';
import { subsetPatched } from '../placement/subsetPatch.js';
import type { JsonPatchOp } from '../placement/zoneGate.js';
import { decideAdmission } from './decide.js';
import { admissionPatch, type AdmissionDecision } from './patch.js';
import { allowed, denied, type PodCreate } from './review.js';

// The third transport (docs/design.md#admission): a pod CREATE decoded, decided by the decision
// service, and the decision written into the pod as it is created, or the zone gate added for the
// keeper. Decode → decide → encode, nothing else.

export interface AdmissionDeps {
  /** The one decision service (built in main.ts). */
  service: DecisionService;
  /** Whether this replica holds the Lease (or runs alone). */
  leading(): boolean;
  /** The gate keeper runs: a pod admission does not decide may be gated for it. */
  gateEnabled: boolean;
  /** zonekeeper owns WorkloadSpreads (workloadSpread.writeStatus, no OpenKruise): admission applies subsets' patches. */
  applySubsetPatches: boolean;
  /** Resolves once the watch shows the pod's controller, or after a short wait (admission/ownerArrival.ts). */
  ownerArrival?: (pod: SlimPod) => Promise<void>;
  log: Logger;
}

/** What admission answers for one pod CREATE, and what it decided (metrics, logs). */
type Admitted = { answer: object; outcome: AdmissionDecision['kind'] | 'refused' };

/** kube-apiserver's name generator (SimpleNameGenerator): the base cut to 58 characters and 5 of these. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function generatedName(base: string): string {
  let out = base.slice(0, 58);
  for (let i = 0; i < 5; i++) out += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return out;
}

/** Admits one pod CREATE; its decision recorded, and every outcome counted here (zonekeeper_decisions_total, verb admission). */
export async function admitPod(create: PodCreate, deps: AdmissionDeps): Promise<object> {
  const { answer, outcome } = await admitted(create, deps);
  if (outcome === 'gate' || outcome === 'as-is' || outcome === 'refused') deps.service.count('admission', outcome);
  return answer;
}

async function admitted(create: PodCreate, deps: AdmissionDeps): Promise<Admitted> {
  const metadata = { ...create.object.metadata, namespace: create.namespace };
  const naming: JsonPatchOp[] = [];
  // A pod named by generateName has no name yet: named here, as the API server would, so that its
  // reservation, its instance ID and its subset's entry hold a name the stored pod will have.
  if (!metadata.name && typeof metadata.generateName === 'string' && metadata.generateName) {
    metadata.name = generatedName(metadata.generateName);
    naming.push({ op: 'add', path: '/metadata/name', value: metadata.name });
  }
  const raw = { ...create.object, metadata };
  // No UID yet: the review's, marked, names it until the watch shows the stored pod (decision/reservations.ts).
  const pod = { ...slimPod(raw, unshared), uid: `${ADMITTED_UID_PREFIX}${create.uid}` };
  await deps.ownerArrival?.(pod);
  const { decision: d, committed } = await decideAdmission(deps.service, pod,
    { dryRun: create.dryRun, leading: deps.leading(), subsetsRescheduled: deps.applySubsetPatches });
  if (committed && d.kind !== 'gate' && d.kind !== 'as-is') deps.service.record('admission', pod, committed, { outcome: 'admitted' });
  const subsetPatch = d.kind === 'subset' && deps.applySubsetPatches ? d.patch : undefined;
  if (d.kind === 'gate') {
    if (!deps.gateEnabled) return { answer: allowed(create.uid, [], [`zonekeeper: not placed at creation (${d.why}); gate.enabled is false, so the extender's filter decides`]), outcome: d.kind };
    return { answer: allowed(create.uid, [...naming, ...admissionPatch(raw, 'gate')]), outcome: d.kind };
  }
  deps.log.debug({ pod: `${pod.namespace}/${pod.name}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined }, 'decided at admission');
  if (d.kind !== 'subset' || !subsetPatch) return { answer: allowed(create.uid, [...naming, ...admissionPatch(raw, d)]), outcome: d.kind };
  // The subset's patch first, then its terms, as OpenKruise's webhook injects them.
  const patched = subsetPatched(raw, subsetPatch);
  if (patched.error !== undefined) {
    return { answer: denied(create.uid, `zonekeeper: WorkloadSpread ${pod.namespace}/${d.workloadSpread} subset ${d.subset}: its patch cannot be applied: ${patched.error}`), outcome: 'refused' };
  }
  return { answer: allowed(create.uid, [...naming, ...patched.ops, ...admissionPatch(patched.pod, d)]), outcome: d.kind };
}
