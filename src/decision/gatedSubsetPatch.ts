import { ANNOTATION } from '../cluster/annotations.js';
import { subsetPatched } from '../placement/subsetPatch.js';
import { gatePatch, type SpecDecision } from './spec.js';

// A WorkloadSpread subset's `patch` for a pod the zone gate decides after its creation
// (docs/design.md#the-zone-gate). A stored pod takes only some changes: any to its labels and
// annotations; in its spec an image, tolerations added, and while it is gated node selector keys
// added and its node affinity narrowed (KEP-3838). The rest (resources, env, volumes, ...) would
// be refused by the API server: it is named, never applied. Pure.

type Raw = Record<string, any>;

type GatedSubsetPatch =
  /** `pod` with what it can take, the merge patch that gets there, and the fields left out. */
  | { pod: Raw; merge: Raw; notApplied: string[]; error?: undefined }
  /** The patch cannot be applied at all (admission would refuse the pod). */
  | { error: string };

const isObject = (x: unknown): x is Raw => x !== null && typeof x === 'object' && !Array.isArray(x);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/** Computed by the API server from another field: they follow it, and are never named themselves. */
const COMPUTED = new Set(['priority', 'preemptionPolicy', 'overhead']);

/** A field of a stored pod's spec: what of `after` it takes (else `before`), naming what it cannot. */
type SpecUpdate = (before: any, after: any, field: string, notApplied: string[]) => unknown;

/** Containers: the same ones, by name; of each only the image changes. */
const containers: SpecUpdate = (before, after, field, notApplied) => {
  const b = list(before) as Raw[], a = list(after) as Raw[];
  if (b.length !== a.length || b.some((c, i) => c?.name !== a[i]?.name)) {
    notApplied.push(`spec.${field}`);
    return before;
  }
  return b.map((c, i) => {
    for (const k of new Set([...Object.keys(c), ...Object.keys(a[i]!)])) if (k !== 'image' && !same(c[k], a[i]![k])) notApplied.push(`spec.${field}[${c.name}].${k}`);
    return a[i]!.image === undefined ? c : { ...c, image: a[i]!.image };
  });
};

/** Whether every requirement of `before` stays at the start of `after`'s, term by term (the API's check). */
function narrows(before: unknown, after: unknown): boolean {
  const b = list((before as Raw | undefined)?.nodeSelectorTerms) as Raw[], a = list((after as Raw | undefined)?.nodeSelectorTerms) as Raw[];
  if (b.length === 0) return true;
  return b.length === a.length && b.every((t, i) => ['matchExpressions', 'matchFields']
    .every((k) => same(list(t?.[k]), list(a[i]?.[k]).slice(0, list(t?.[k]).length))));
}

const UPDATES: Readonly<Record<string, SpecUpdate>> = {
  containers,
  initContainers: containers,
  nodeSelector: (before, after, field, notApplied) => {
    if (Object.entries(isObject(before) ? before : {}).every(([k, v]) => isObject(after) && after[k] === v)) return after;
    notApplied.push(`spec.${field}`);
    return before;
  },
  tolerations: (before, after, field, notApplied) => {
    if (list(before).every((t) => list(after).some((u) => same(t, u)))) return after;
    notApplied.push(`spec.${field}`);
    return before;
  },
  affinity: (before, after, field, notApplied) => {
    const b: Raw = isObject(before) ? before : {}, a: Raw = isObject(after) ? after : {};
    const out: Raw = { ...b };
    for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
      if (same(b[k], a[k])) continue;
      if (k !== 'nodeAffinity') {
        notApplied.push(`spec.${field}.${k}`);
        continue;
      }
      const nb: Raw = isObject(b[k]) ? b[k] : {}, na: Raw = isObject(a[k]) ? a[k] : {};
      const required = 'requiredDuringSchedulingIgnoredDuringExecution';
      const taken = { ...na };
      if (!same(nb[required], na[required]) && !narrows(nb[required], na[required])) {
        notApplied.push(`spec.${field}.${k}.${required}`);
        taken[required] = nb[required];
      }
      out[k] = taken;
    }
    return out;
  },
  activeDeadlineSeconds: (before, after, field, notApplied) => {
    if (typeof after === 'number' && after > 0 && (typeof before !== 'number' || after <= before)) return after;
    notApplied.push(`spec.${field}`);
    return before;
  },
};

/** RFC 7386: the merge patch that turns `a` into `b` (lists whole, a removed key as null). */
function mergeDiff(a: Raw, b: Raw): Raw {
  const out: Raw = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (same(a[k], b[k])) continue;
    if (b[k] === undefined) out[k] = null;
    else out[k] = isObject(a[k]) && isObject(b[k]) ? mergeDiff(a[k], b[k]) : b[k];
  }
  return out;
}

/** `patch` (a subset's) applied to a stored, gated pod as far as the API server lets it be. */
function subsetPatchWhileGated(pod: Raw, patch: unknown): GatedSubsetPatch {
  const full = subsetPatched(pod, patch);
  if (full.error !== undefined) return { error: full.error };
  const metadata: Raw = isObject(pod.metadata) ? pod.metadata : {};
  const before: Raw = isObject(pod.spec) ? pod.spec : {};
  const after: Raw = full.pod.spec;
  const spec: Raw = { ...before };
  const notApplied: string[] = [];
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[k], after[k]) || COMPUTED.has(k)) continue;
    const update = UPDATES[k];
    if (update) spec[k] = update(before[k], after[k], k, notApplied);
    else notApplied.push(`spec.${k}`);
    if (spec[k] === undefined) delete spec[k];
  }
  const taken = { ...pod, metadata: full.pod.metadata, spec };
  return { pod: taken, merge: mergeDiff({ metadata, spec: before }, { metadata: full.pod.metadata, spec }), notApplied };
}

/** Two merge patches as one: `second` applied after `first` (objects merged, anything else from `second`). */
function composedMergePatch(first: Raw, second: Raw): Raw {
  const out: Raw = { ...first };
  for (const [k, v] of Object.entries(second)) out[k] = isObject(out[k]) && isObject(v) ? composedMergePatch(out[k], v) : v;
  return out;
}

/** Longest list of fields not applied an annotation carries; a longer one is cut (a patch's size is the user's). */
const NOT_APPLIED_MAX = 1024;

/**
 * The gate's one write: the decision's merge patch, and for a subset with a `patch` (zonekeeper
 * owns WorkloadSpreads) what of it the stored pod takes (subsetPatchWhileGated), in the same write.
 * `patchNotApplied`: the fields it could not take, also written on the pod (for `zonekeeper audit`).
 */
export function gateWrite(pod: Raw, d: Exclude<SpecDecision, { kind: 'wait' }>): { patch: Raw; patchNotApplied?: string } {
  if (d.kind !== 'subset' || !d.patch) return { patch: gatePatch(pod, d) };
  const partial = subsetPatchWhileGated(pod, d.patch);
  const patch = partial.error === undefined ? composedMergePatch(partial.merge, gatePatch(partial.pod, d)) : gatePatch(pod, d);
  const missed = partial.error === undefined ? partial.notApplied.join(', ') : `the whole patch (${partial.error})`;
  if (missed === '') return { patch };
  const text = missed.length <= NOT_APPLIED_MAX ? missed : `${missed.slice(0, NOT_APPLIED_MAX - 1)}…`;
  patch.metadata.annotations = { ...patch.metadata.annotations, [ANNOTATION.subsetPatchNotApplied]: text };
  return { patch, patchNotApplied: text };
}
