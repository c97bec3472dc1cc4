// A WorkloadSpread (OpenKruise's CRD, or zonekeeper's own) to the slim object of objects.ts.

import { ANNOTATION } from './annotations.js';
import { workloadKindOf } from './kinds.js';
import { nodeSelectorTerm, tolerations } from './nodeNeeds.js';
import { statusDigest, type NodeSelectorTerm, type SlimWorkloadSpread, type SubsetCondition } from './objects.js';
import { intern, str, type Raw } from './rawFields.js';
import { SUBSET_FIELDS, userVersion, workloadSpreadVersionOf } from './workloadSpreadVersions.js';

function maxReplicas(v: unknown): number | string | null {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d+%$/.test(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

/** v1alpha1 or v1beta1, by its own field names (docs/design.md#workloadspread). */
export function slimWorkloadSpread(o: Raw): SlimWorkloadSpread {
  const spec: Raw = o.spec ?? {};
  const subsets: Raw[] = Array.isArray(spec.subsets) ? spec.subsets : [];
  const strategy: Raw = spec.scheduleStrategy ?? {};
  // Without a known apiVersion (a file, a test), the names the subsets use say which.
  const readAt = workloadSpreadVersionOf(o.apiVersion)
    ?? (subsets.some((s) => s?.[SUBSET_FIELDS.v1beta1.required] !== undefined || s?.[SUBSET_FIELDS.v1beta1.preferred] !== undefined) ? 'v1beta1' : 'v1alpha1');
  const { required, preferred } = SUBSET_FIELDS[readAt];
  return {
    namespace: intern(str(o.metadata?.namespace, 'default')),
    name: str(o.metadata?.name),
    uid: str(o.metadata?.uid),
    // The kind as owners name it: an Advanced StatefulSet target is `AdvancedStatefulSet`.
    targetRef: { apiVersion: str(spec.targetRef?.apiVersion), kind: workloadKindOf(str(spec.targetRef?.apiVersion), str(spec.targetRef?.kind)),
      name: str(spec.targetRef?.name) },
    subsets: subsets.map((s) => ({
      name: str(s?.name),
      requiredNodeSelectorTerm: nodeSelectorTerm(s?.[required]),
      preferredNodeSelectorTerms: (Array.isArray(s?.[preferred]) ? s[preferred] : [])
        .map((p: Raw) => ({ weight: typeof p?.weight === 'number' ? p.weight : 1, preference: nodeSelectorTerm(p?.preference) }))
        .filter((p: { preference?: NodeSelectorTerm }): p is { weight: number; preference: NodeSelectorTerm } => p.preference !== undefined),
      tolerations: tolerations(s?.tolerations),
      maxReplicas: maxReplicas(s?.maxReplicas),
    })),
    strategy: strategy.type === 'Adaptive' ? 'Adaptive' : 'Fixed',
    rescheduleCriticalSeconds: typeof strategy.adaptive?.rescheduleCriticalSeconds === 'number'
      ? strategy.adaptive.rescheduleCriticalSeconds : 30,
    simulationSchedule: strategy.adaptive?.disableSimulationSchedule !== true,
    patchAdoptedPods: str(o.metadata?.annotations?.[ANNOTATION.kruiseIgnorePatchExisting]).toLowerCase() !== 'true',
    apiVersion: str(o.apiVersion, 'apps.kruise.io/v1alpha1'),
    userVersion: userVersion(o, readAt),
    generation: typeof o.metadata?.generation === 'number' ? o.metadata.generation : 0,
    patches: new Map(subsets.filter((s) => s?.patch && typeof s.patch === 'object' && !Array.isArray(s.patch) && Object.keys(s.patch).length > 0)
      .map((s) => [str(s.name), s.patch])),
    statusDigest: digestOf(o.status),
    schedulable: schedulableOf(o.status),
  };
}

/** A written condition: type, status True or False, reason, lastTransitionTime. */
function subsetCondition(c: Raw): SubsetCondition | undefined {
  if (c?.type !== 'Schedulable' || (c.status !== 'True' && c.status !== 'False')) return undefined;
  return { type: 'Schedulable', status: c.status, reason: str(c.reason), lastTransitionTime: str(c.lastTransitionTime) };
}

const conditionsOf = (s: Raw): SubsetCondition[] =>
  (Array.isArray(s?.conditions) ? s.conditions : []).map(subsetCondition).filter((c: SubsetCondition | undefined) => c !== undefined);

/** Each subset's Schedulable condition in a written status. */
function schedulableOf(status: Raw): ReadonlyMap<string, SubsetCondition> {
  const out = new Map<string, SubsetCondition>();
  for (const s of Array.isArray(status?.subsetStatuses) ? status.subsetStatuses : []) {
    const c = conditionsOf(s)[0];
    if (c) out.set(str(s?.name), c);
  }
  return out;
}

/** The digest of a written status (objects.statusDigest); '' when there is none. */
function digestOf(status: Raw): string {
  if (!status || !Array.isArray(status.subsetStatuses)) return '';
  const subsets = status.subsetStatuses.map((s: Raw) => ({
    name: str(s?.name), replicas: typeof s?.replicas === 'number' ? s.replicas : 0,
    missingReplicas: typeof s?.missingReplicas === 'number' ? s.missingReplicas : 0,
    creatingPods: s?.creatingPods && typeof s.creatingPods === 'object' ? s.creatingPods : {},
    deletingPods: s?.deletingPods && typeof s.deletingPods === 'object' ? s.deletingPods : {},
    conditions: conditionsOf(s),
  }));
  return statusDigest(typeof status.observedGeneration === 'number' ? status.observedGeneration : 0, subsets);
}
