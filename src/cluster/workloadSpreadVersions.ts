// WorkloadSpread's two versions (apps.kruise.io v1alpha1 and v1beta1, openkruise/kruise PR #2466):
// the field names each gives a subset, and the exact conversion between them that zonekeeper's
// CRD serves (docs/design.md#workloadspread). Pure.

import type { Raw } from './rawFields.js';

export type WorkloadSpreadVersion = 'v1alpha1' | 'v1beta1';

const WORKLOADSPREAD_GROUP = 'apps.kruise.io';

/** A subset's node terms as each version names them. */
export const SUBSET_FIELDS: Readonly<Record<WorkloadSpreadVersion, { required: string; preferred: string }>> = {
  v1alpha1: { required: 'requiredNodeSelectorTerm', preferred: 'preferredNodeSelectorTerms' },
  v1beta1: { required: 'requiredNodeSelector', preferred: 'preferredNodeSelector' },
};

export function workloadSpreadVersionOf(apiVersion: unknown): WorkloadSpreadVersion | undefined {
  return apiVersion === `${WORKLOADSPREAD_GROUP}/v1alpha1` ? 'v1alpha1' : apiVersion === `${WORKLOADSPREAD_GROUP}/v1beta1` ? 'v1beta1' : undefined;
}

/**
 * The version whose field names the user wrote the spec in: the apiVersion of the latest
 * write of `spec` its managedFields record (the API server converts what it serves, so the
 * object's own apiVersion says only how it was read), else the version it was read at.
 */
export function userVersion(o: Raw, readAt: WorkloadSpreadVersion): WorkloadSpreadVersion {
  const entries: Raw[] = Array.isArray(o?.metadata?.managedFields) ? o.metadata.managedFields : [];
  let best: { version: WorkloadSpreadVersion; time: string } | undefined;
  for (const e of entries) {
    const version = workloadSpreadVersionOf(e?.apiVersion);
    if (!version || e.subresource || !e.fieldsV1 || typeof e.fieldsV1 !== 'object' || !('f:spec' in e.fieldsV1)) continue;
    const time = typeof e.time === 'string' ? e.time : '';
    if (!best || time >= best.time) best = { version, time };
  }
  return best?.version ?? readAt;
}

/**
 * Where v1alpha1 and v1beta1 differ in what they can hold, the side that cannot hold it keeps it
 * here, so that converting back restores it (as Kubernetes' own API conversions keep what a
 * version lacks): a v1alpha1 condition without a reason (v1beta1's needs one: Kruise's "Unknown")
 * or with an explicit empty message, a v1beta1 condition's observedGeneration (v1alpha1 has none).
 */
export const CONVERSION_ANNOTATION = 'zonekeeper.io/workloadspread-conversion';

interface Kept {
  /** `status list/subset name/condition type` → what the other version lacks. */
  [where: string]: { reason?: '' | null; emptyMessage?: true; observedGeneration?: number };
}

const renames = (to: WorkloadSpreadVersion): [string, string][] => {
  const from = SUBSET_FIELDS[to === 'v1beta1' ? 'v1alpha1' : 'v1beta1'];
  return [[from.required, SUBSET_FIELDS[to].required], [from.preferred, SUBSET_FIELDS[to].preferred]];
};

/** A subset with its node terms under `to`'s names; every other field as it is, in its place. */
function renamedSubset(s: unknown, to: WorkloadSpreadVersion): unknown {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
  const names = new Map(renames(to));
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [names.get(k) ?? k, v]));
}

const isObject = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);

/** One condition to `to`; `where` names it in CONVERSION_ANNOTATION. */
function convertedCondition(c: unknown, to: WorkloadSpreadVersion, where: string, kept: Kept, restore: Kept): unknown {
  if (!isObject(c)) return c;
  const out: Raw = { ...c };
  const back = restore[where] ?? {};
  const keep = (k: Kept[string]) => { kept[where] = { ...kept[where], ...k }; };
  if (to === 'v1beta1') {
    // metav1.Condition needs a reason and a message: Kruise's ConvertTo gives "Unknown" and "".
    if (out.reason === undefined || out.reason === '') {
      keep({ reason: out.reason === '' ? '' : null });
      out.reason = 'Unknown';
    }
    // Absent and "" are one in v1alpha1 (omitempty): only an explicit "" is kept.
    if (out.message === '') keep({ emptyMessage: true });
    if (out.message === undefined) out.message = '';
    if (back.observedGeneration !== undefined && out.observedGeneration === undefined) out.observedGeneration = back.observedGeneration;
  } else {
    if (out.observedGeneration !== undefined) {
      if (typeof out.observedGeneration === 'number') keep({ observedGeneration: out.observedGeneration });
      delete out.observedGeneration;
    }
    if (back.reason !== undefined && out.reason === 'Unknown') {
      if (back.reason === null) delete out.reason;
      else out.reason = back.reason;
    }
    // As Kruise's v1alpha1 types serialize it: an empty message left out.
    if (out.message === '' && !back.emptyMessage) delete out.message;
  }
  return out;
}

/** A subset status list with each condition converted. */
function convertedSubsetStatuses(list: unknown, path: string, to: WorkloadSpreadVersion, kept: Kept, restore: Kept): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((s: unknown) => {
    if (!isObject(s) || !Array.isArray(s.conditions)) return s;
    const name = typeof s.name === 'string' ? s.name : '';
    return { ...s, conditions: s.conditions.map((c: unknown) =>
      convertedCondition(c, to, `${path}/${name}/${isObject(c) && typeof c.type === 'string' ? c.type : ''}`, kept, restore)) };
  });
}

function convertedStatus(status: Raw, to: WorkloadSpreadVersion, kept: Kept, restore: Kept): Raw {
  const out: Raw = { ...status };
  if ('subsetStatuses' in status) out.subsetStatuses = convertedSubsetStatuses(status.subsetStatuses, 'subsetStatuses', to, kept, restore);
  if (isObject(status.versionedSubsetStatuses)) {
    out.versionedSubsetStatuses = Object.fromEntries(Object.entries(status.versionedSubsetStatuses)
      .map(([v, list]) => [v, convertedSubsetStatuses(list, `versionedSubsetStatuses/${v}`, to, kept, restore)]));
  }
  return out;
}

function readKept(annotations: Raw | undefined): Kept {
  const text = annotations?.[CONVERSION_ANNOTATION];
  if (typeof text !== 'string') return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * A WorkloadSpread converted to `to` (apps.kruise.io/v1alpha1 or v1beta1), as Kruise's
 * ConvertTo/ConvertFrom map it: the subsets' renamed node terms, each subset condition between
 * Kruise's WorkloadSpreadSubsetCondition and metav1.Condition; what the target cannot hold kept
 * in CONVERSION_ANNOTATION and restored on the way back, so a round trip is exact. Unknown fields
 * pass through untouched; an object already at `to` is returned as it is.
 */
export function convertWorkloadSpread(o: Raw, to: WorkloadSpreadVersion): Raw {
  const from = workloadSpreadVersionOf(o?.apiVersion);
  if (!from) throw new Error(`not a WorkloadSpread of ${WORKLOADSPREAD_GROUP}: apiVersion ${JSON.stringify(o?.apiVersion)}`);
  if (from === to) return o;
  const restore = readKept(o.metadata?.annotations);
  const kept: Kept = {};
  const out: Raw = { ...o, apiVersion: `${WORKLOADSPREAD_GROUP}/${to}` };
  if (isObject(o.spec) && Array.isArray(o.spec.subsets)) {
    out.spec = { ...o.spec, subsets: o.spec.subsets.map((s: unknown) => renamedSubset(s, to)) };
  }
  if (isObject(o.status)) out.status = convertedStatus(o.status, to, kept, restore);
  const annotations: Raw = { ...o.metadata?.annotations };
  delete annotations[CONVERSION_ANNOTATION];
  if (Object.keys(kept).length > 0) annotations[CONVERSION_ANNOTATION] = JSON.stringify(kept);
  if (isObject(o.metadata)) {
    const { annotations: _, ...metadata } = o.metadata;
    // An empty map stays as the user wrote it; one that held only the kept fields goes with them.
    const wasEmpty = isObject(o.metadata.annotations) && Object.keys(o.metadata.annotations).length === 0;
    out.metadata = Object.keys(annotations).length > 0 || wasEmpty ? { ...metadata, annotations } : metadata;
  }
  return out;
}
