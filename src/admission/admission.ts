import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { slimPod, unshared } from '../cluster/convert.js';
import type { SlimPod } from '../cluster/objects.js';
import type { DecisionService } from '../decision/service.js';
import { ADMITTED_UID_PREFIX } from '../placement/reservations.js';
import type { CallerCheck } from '../http/callers.js';
import type { JsonPatchOp } from '../placement/subsetPatch.js';
import { admissionPatch } from './patch.js';
import { allowed, denied, type PodCreate } from './podReview.js';

// Admission, a transport (docs/design.md#admission): a pod CREATE decoded, decided by the decision
// service, and the decision written into the pod as it is created, or the zone gate added for the
// keeper. Decode → one call → encode, nothing else.

export interface AdmissionDeps {
  /** The one decision service (built in house.ts). */
  service: DecisionService;
  /** Whether this replica holds the Lease (or runs alone). */
  leading(): boolean;
  /** The gate keeper runs: a pod admission does not decide may be gated for it. */
  gateEnabled: boolean;
  /** Whether the review's caller is known to be kube-apiserver (http/callers.ts): only then may its review write. */
  caller: CallerCheck;
  /** Resolves once the watch shows the pod's controller, or after a short wait (admission/ownerArrival.ts). */
  ownerArrival?: (pod: SlimPod) => Promise<void>;
  log: Logger;
}

/** kube-apiserver's name generator (SimpleNameGenerator): the base cut to 58 characters and 5 of these. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function generatedName(base: string): string {
  let out = base.slice(0, 58);
  for (let i = 0; i < 5; i++) out += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return out;
}

/**
 * Admits one pod CREATE: decoded, one decision of the service (which records it), the answer encoded.
 * An unauthenticated caller's review writes nothing: the pod gets the zone gate and the keeper decides it from the stored pod.
 */
export async function admitPod(create: PodCreate, deps: AdmissionDeps, authenticated: boolean): Promise<object> {
  if (!authenticated) {
    const why = 'the caller is not known to be kube-apiserver (admission.tls.clientCAFile, admission.trustNetwork)';
    if (!deps.gateEnabled) return allowed(create.uid, [], [`zonekeeper: not placed at creation (${why}); gate.enabled is false, so the extender's filter decides`]);
    return allowed(create.uid, admissionPatch(create.object, 'gate'));
  }
  const metadata = { ...create.object.metadata, namespace: create.namespace };
  const naming: JsonPatchOp[] = [];
  // A pod named by generateName has no name yet: named here, as the API server would, so that its
  // reservation, its instance ID and its subset's entry hold a name the stored pod will have.
  if (!metadata.name && typeof metadata.generateName === 'string' && metadata.generateName) {
    metadata.name = generatedName(metadata.generateName);
    naming.push({ op: 'add', path: '/metadata/name', value: metadata.name });
  }
  const raw = { ...create.object, metadata };
  // No UID yet: the review's, marked, names it until the watch shows the stored pod (decision/reservationLedger.ts).
  const pod = { ...slimPod(raw, unshared), uid: `${ADMITTED_UID_PREFIX}${create.uid}` };
  await deps.ownerArrival?.(pod);
  const d = await deps.service.spec.admit(pod, { created: raw, dryRun: create.dryRun, leading: deps.leading() });
  if (d.kind === 'refused') return denied(create.uid, d.why);
  if (d.kind === 'gate') {
    if (!deps.gateEnabled) return allowed(create.uid, [], [`zonekeeper: not placed at creation (${d.why}); gate.enabled is false, so the extender's filter decides`]);
    return allowed(create.uid, [...naming, ...admissionPatch(raw, 'gate')]);
  }
  deps.log.debug({ pod: `${pod.namespace}/${pod.name}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined }, 'decided at admission');
  // A subset's patch first, then its terms, as OpenKruise's webhook injects them.
  const patched = d.kind === 'subset' ? d.patched : undefined;
  return allowed(create.uid, [...naming, ...(patched?.ops ?? []), ...admissionPatch(patched?.pod ?? raw, d)]);
}
