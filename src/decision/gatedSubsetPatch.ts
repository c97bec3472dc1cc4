import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimPod, SlimWorkloadSpread, WorkloadSpreadSubset } from '../cluster/objects.js';
import { admissionCallers, type Config } from '../common/config.js';
import { subsetPatched } from '../placement/subsetPatch.js';
import { gatePatch, type SpecDecision } from './spec.js';

// A WorkloadSpread subset's `patch` for a pod the zone gate decides after its creation
// (docs/design.md#the-zone-gate). The gate writes with zonekeeper's rights, not the WorkloadSpread
// editor's, so it writes only what narrows where the pod may run: node selector keys added and node
// affinity narrowed (KEP-3838). Labels, annotations, images, tolerations (the patch's and the
// subset's own) and the rest apply at admission only, as in OpenKruise: they are named. Pure.

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

/** Whether every requirement of `before` stays at the start of `after`'s, term by term (the API's check). */
function narrows(before: unknown, after: unknown): boolean {
  const b = list((before as Raw | undefined)?.nodeSelectorTerms) as Raw[], a = list((after as Raw | undefined)?.nodeSelectorTerms) as Raw[];
  if (b.length === 0) return true;
  return b.length === a.length && b.every((t, i) => ['matchExpressions', 'matchFields']
    .every((k) => same(list(t?.[k]), list(a[i]?.[k]).slice(0, list(t?.[k]).length))));
}

/** What the gate takes of a patch's spec: where the pod may run, only narrowed (docs/security.md#workloadspread-editors). */
const UPDATES: Readonly<Record<string, SpecUpdate>> = {
  nodeSelector: (before, after, field, notApplied) => {
    if (Object.entries(isObject(before) ? before : {}).every(([k, v]) => isObject(after) && after[k] === v)) return after;
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

/** The keys of `a` and `b` whose values differ. */
const changedKeys = (a: unknown, b: unknown): string[] => {
  const x: Raw = isObject(a) ? a : {}, y: Raw = isObject(b) ? b : {};
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => !same(x[k], y[k]));
};

/** `patch` (a subset's) applied to a stored, gated pod as far as it only narrows where the pod may run. */
function subsetPatchWhileGated(pod: Raw, patch: unknown): GatedSubsetPatch {
  const full = subsetPatched(pod, patch);
  if (full.error !== undefined) return { error: full.error };
  const metadata: Raw = isObject(pod.metadata) ? pod.metadata : {};
  const before: Raw = isObject(pod.spec) ? pod.spec : {};
  const after: Raw = full.pod.spec;
  const spec: Raw = { ...before };
  const patched: Raw = isObject(full.pod.metadata) ? full.pod.metadata : {};
  const notApplied: string[] = changedKeys(metadata, patched).filter((k) => k === 'labels' || k === 'annotations').map((k) => `metadata.${k}`);
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[k], after[k]) || COMPUTED.has(k)) continue;
    const update = UPDATES[k];
    if (update) spec[k] = update(before[k], after[k], k, notApplied);
    else notApplied.push(`spec.${k}`);
    if (spec[k] === undefined) delete spec[k];
  }
  return { pod: { ...pod, spec }, merge: mergeDiff({ spec: before }, { spec }), notApplied };
}

/** Two merge patches as one: `second` applied after `first` (objects merged, anything else from `second`). */
function composedMergePatch(first: Raw, second: Raw): Raw {
  const out: Raw = { ...first };
  for (const [k, v] of Object.entries(second)) out[k] = isObject(out[k]) && isObject(v) ? composedMergePatch(out[k], v) : v;
  return out;
}

/** Longest list of fields not applied an annotation carries; a longer one is cut (a patch's size is the user's). */
const NOT_APPLIED_MAX = 1024;

/** The subset's own tolerations the stored pod lacks: never written by the gate. */
const missingTolerations = (pod: Raw, d: Extract<SpecDecision, { kind: 'subset' }>): boolean =>
  d.tolerations.some((t) => !list(pod.spec?.tolerations).some((u) => isObject(u)
    && ['key', 'operator', 'value', 'effect'].every((k) => (u[k] ?? '') === ((t as unknown as Raw)[k] ?? ''))));

/**
 * The gate's one write: the decision's merge patch, and for a subset with a `patch` (zonekeeper
 * owns WorkloadSpreads) what of it narrows where the pod runs (subsetPatchWhileGated), in the same write.
 * `patchNotApplied`: what it did not write (the subset's tolerations, the rest of the patch), also on the pod (for `zonekeeper audit`).
 */
export function gateWrite(pod: Raw, d: Exclude<SpecDecision, { kind: 'wait' }>): { patch: Raw; patchNotApplied?: string } {
  if (d.kind !== 'subset') return { patch: gatePatch(pod, d) };
  const partial = d.patch ? subsetPatchWhileGated(pod, d.patch) : undefined;
  const patch = partial && partial.error === undefined ? composedMergePatch(partial.merge, gatePatch(partial.pod, d)) : gatePatch(pod, d);
  const missed = [
    ...(missingTolerations(pod, d) ? ['tolerations (the subset\'s)'] : []),
    ...(partial === undefined ? [] : partial.error === undefined ? partial.notApplied : [`the whole patch (${partial.error})`]),
  ].join(', ');
  if (missed === '') return { patch };
  const text = missed.length <= NOT_APPLIED_MAX ? missed : `${missed.slice(0, NOT_APPLIED_MAX - 1)}…`;
  patch.metadata.annotations = { ...patch.metadata.annotations, [ANNOTATION.subsetPatchNotApplied]: text };
  return { patch, patchNotApplied: text };
}

/** What lets a review's caller be known as kube-apiserver, so that admission decides pods and applies their subset's patch whole. */
export const ADMISSION_CALLER_SETTINGS = 'admission.tls.clientCAFile (with admission.tls.clientCommonNames) or admission.trustNetwork (with its NetworkPolicy)';

/**
 * Why admission applies no subset's patch whole here, and the settings that would make it
 * (docs/security.md#who-may-call-the-webhooks): admission off, or the default, under which no
 * review's caller is known to be kube-apiserver; undefined where admission does apply them.
 */
export function subsetPatchSetting(admission: Config['admission']): string | undefined {
  if (admission.listen === '') return `admission, which applies it whole, is off: set admission.listen, and ${ADMISSION_CALLER_SETTINGS}`;
  if (admissionCallers(admission) !== 'none') return undefined;
  return `admission applies it whole only for a caller known to be kube-apiserver, and under the default no caller is: set ${ADMISSION_CALLER_SETTINGS}`;
}

/** What /debug/explain says of a pod's subset patch, where part of it is not (or will not be) applied. */
export interface SubsetPatchExplained { workloadSpread: string; subset: string; notApplied?: string; setting?: string; sentence: string }

/**
 * A pod the gate decided that carries zonekeeper.io/subset-patch-not-applied, or a gated pod the
 * dry run puts in a subset with a patch (zonekeeper owning WorkloadSpreads): said, with the setting.
 */
export function subsetPatchExplained(
  pod: SlimPod, chosen: { ws: SlimWorkloadSpread; subset: WorkloadSpreadSubset } | undefined, owned: boolean, setting: string | undefined,
): SubsetPatchExplained | undefined {
  const remedy = setting ? ` Why: ${setting}.` : ' Only admission applies a patch whole: keep such pods on admission (docs/design.md#the-zone-gate).';
  const withSetting = setting ? { setting } : {};
  if (pod.subsetPatchNotApplied !== undefined && pod.kruiseMatch) {
    const { workloadSpread, subset } = pod.kruiseMatch;
    return {
      workloadSpread, subset, notApplied: pod.subsetPatchNotApplied, ...withSetting,
      sentence: `The zone gate decided it after its creation, so WorkloadSpread ${workloadSpread} subset ${subset}'s patch was not applied in full: `
        + `not applied ${pod.subsetPatchNotApplied} (${ANNOTATION.subsetPatchNotApplied}).${remedy}`,
    };
  }
  if (!owned || !pod.gated || !chosen || !chosen.ws.patches.has(chosen.subset.name)) return undefined;
  const { ws, subset } = chosen;
  return {
    workloadSpread: ws.name, subset: subset.name, ...withSetting,
    sentence: `It waits for the zone gate, which writes of WorkloadSpread ${ws.name} subset ${subset.name}'s patch only what narrows where the pod runs `
      + `(labels, annotations, resources and the rest are not applied).${remedy}`,
  };
}
