import { ZONE_GATE } from '../cluster/annotations.js';
import { gatePatch, type SpecDecision } from '../decision/spec.js';
import type { JsonPatchOp } from '../placement/subsetPatch.js';

// Admission's JSONPatch: the decision written into a pod being created, exactly as the gate's
// merge patch writes it into a stored pod, or the zone gate added for the keeper.

type Raw = Record<string, any>;

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped. */
const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Ops that set `changes`' keys inside the object at `path` of `have`, creating it when it is missing. */
function setKeys(path: string, have: unknown, changes: Raw): JsonPatchOp[] {
  if (have === null || typeof have !== 'object' || Array.isArray(have)) return [{ op: 'add', path, value: changes }];
  return Object.entries(changes).map(([k, value]) => ({ op: 'add', path: `${path}/${pointer(k)}`, value }));
}

/**
 * The decision written into a pod being created (an AdmissionReview's JSONPatch): exactly what
 * the gate's merge patch writes into a stored pod (`gatePatch`), and the zone gate removed if
 * the template carries it. `'gate'`: the zone gate added instead, the decision left to the keeper.
 */
export function admissionPatch(pod: Raw, d: Exclude<SpecDecision, { kind: 'wait' }> | 'gate'): JsonPatchOp[] {
  const spec = pod.spec ?? {};
  const gates: Raw[] = Array.isArray(spec.schedulingGates) ? spec.schedulingGates : [];
  if (d === 'gate') {
    if (gates.some((g) => g?.name === ZONE_GATE)) return [];
    return gates.length > 0 ? [{ op: 'add', path: '/spec/schedulingGates/-', value: { name: ZONE_GATE } }] : [{ op: 'add', path: '/spec/schedulingGates', value: [{ name: ZONE_GATE }] }];
  }
  const merge = gatePatch(pod, d);
  const ops: JsonPatchOp[] = [];
  if (merge.metadata.annotations) ops.push(...setKeys('/metadata/annotations', pod.metadata?.annotations, merge.metadata.annotations));
  if (merge.spec.nodeSelector) ops.push(...setKeys('/spec/nodeSelector', spec.nodeSelector, merge.spec.nodeSelector));
  if (merge.spec.affinity) {
    const affinity = spec.affinity;
    if (affinity === null || typeof affinity !== 'object') ops.push({ op: 'add', path: '/spec/affinity', value: merge.spec.affinity });
    else ops.push(...setKeys('/spec/affinity/nodeAffinity', affinity.nodeAffinity, merge.spec.affinity.nodeAffinity));
  }
  if (merge.spec.tolerations) ops.push({ op: 'add', path: '/spec/tolerations', value: merge.spec.tolerations });
  if (gates.some((g) => g?.name === ZONE_GATE)) {
    ops.push(merge.spec.schedulingGates === null ? { op: 'remove', path: '/spec/schedulingGates' } : { op: 'replace', path: '/spec/schedulingGates', value: merge.spec.schedulingGates });
  }
  return ops;
}
