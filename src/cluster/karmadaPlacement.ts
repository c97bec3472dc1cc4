import { nodeSelectorTerm, tolerations } from './nodeNeeds.js';
import type { NodeSelectorRequirement, Toleration } from './objects.js';
import { stringMap, type Raw } from './rawFields.js';

// A binding's `spec.placement` as Karmada v1.19 defines it (pkg/apis/policy/v1alpha1/propagation_types.go), read whole
// (docs/design.md#across-clusters): every field a scheduler must honour, or the field zonekeeper refuses, named.

/** `clusterAffinity` (or one term of `clusterAffinities`) as Karmada matches it against a Cluster (its `ClusterMatches`). */
export interface ClusterAffinity {
  /** `clusterNames`: the only clusters it may use; empty: any. */
  names: readonly string[];
  exclude: readonly string[];
  /** `labelSelector` over the Cluster's labels (matchLabels as `In` requirements); undefined: not set. */
  labels: readonly NodeSelectorRequirement[] | undefined;
  /** `fieldSelector` over `provider`, `region` and `zone` (the Cluster's zones); undefined: not set. */
  fields: readonly NodeSelectorRequirement[] | undefined;
}

/** `placement.clusterTolerations`; `seconds`: a NoExecute one that holds only that long. */
export type ClusterToleration = Toleration & { seconds?: number };

/** One term of `clusterAffinities` (a lone `clusterAffinity` is one unnamed term); `overflow`: its overflowAffinities, in order. */
export interface AffinityTerm { name: string; affinity: ClusterAffinity; overflow: readonly { name: string; affinity: ClusterAffinity }[] }

type SpreadField = 'cluster' | 'region' | 'zone' | 'provider';

/** A spread constraint: by a Cluster field, or by a Cluster label (Karmada validates `spreadByLabel` but never carries it out). */
export interface SpreadConstraint { field: SpreadField | undefined; label: string | undefined; minGroups: number; maxGroups: number }

interface StaticWeight { target: ClusterAffinity; weight: number }

/** `replicaScheduling`, with Karmada's defaults applied: none is Duplicated; Divided without a preference divides by equal weights. */
export type ReplicaScheduling =
  | { type: 'Duplicated' }
  | { type: 'Aggregated' }
  | { type: 'DynamicWeight' }
  /** `ignoresSpread`: Karmada skips spread constraints (no weightPreference, or a staticWeightList). */
  | { type: 'StaticWeight'; weights: readonly StaticWeight[]; ignoresSpread: boolean };

export interface Placement {
  /** `clusterAffinities` in order, else the one `clusterAffinity` (name ''), else one term that matches every cluster. */
  terms: readonly AffinityTerm[];
  /** Whether the terms are `clusterAffinities` (the observed term's name is written to the status). */
  grouped: boolean;
  tolerations: readonly ClusterToleration[];
  spread: readonly SpreadConstraint[];
  scheduling: ReplicaScheduling;
  /** A field zonekeeper does not carry out: the binding is refused whole, never planned in part. */
  unsupported: string | undefined;
}

const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const isRaw = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isRaw) : []);
/** A count as Karmada's int fields read it; what no webhook would let through reads as 0. */
const int = (v: unknown): number => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);

function clusterAffinity(a: Raw): ClusterAffinity {
  const selector: Raw | undefined = isRaw(a.labelSelector) ? a.labelSelector : undefined;
  const labels = selector && [
    ...Object.entries(stringMap(selector.matchLabels)).map(([key, v]) => ({ key, operator: 'In', values: [v] })),
    ...(nodeSelectorTerm({ matchExpressions: selector.matchExpressions })?.matchExpressions ?? []),
  ];
  const fields = isRaw(a.fieldSelector) ? nodeSelectorTerm({ matchExpressions: a.fieldSelector.matchExpressions })?.matchExpressions ?? [] : undefined;
  return { names: names(a.clusterNames), exclude: names(a.exclude), labels, fields };
}

function clusterTolerations(v: unknown): ClusterToleration[] {
  const raw = list(v);
  return tolerations(raw).map((t, i) => (Number.isSafeInteger(raw[i]!.tolerationSeconds) ? { ...t, seconds: raw[i]!.tolerationSeconds as number } : t));
}

const ANY: ClusterAffinity = { names: [], exclude: [], labels: undefined, fields: undefined };
const SPREAD_FIELDS: readonly string[] = ['cluster', 'region', 'zone', 'provider'];

function replicaScheduling(r: Raw | undefined): ReplicaScheduling | string {
  if (!r || r.replicaSchedulingType === undefined || r.replicaSchedulingType === 'Duplicated') return { type: 'Duplicated' };
  if (r.replicaSchedulingType !== 'Divided') return `replicaScheduling.replicaSchedulingType: ${String(r.replicaSchedulingType)}`;
  if (r.replicaDivisionPreference === 'Aggregated') return { type: 'Aggregated' };
  if (r.replicaDivisionPreference !== undefined && r.replicaDivisionPreference !== 'Weighted') return `replicaScheduling.replicaDivisionPreference: ${String(r.replicaDivisionPreference)}`;
  const w: Raw = isRaw(r.weightPreference) ? r.weightPreference : {};
  if (w.dynamicWeight === 'AvailableReplicas') return { type: 'DynamicWeight' };
  if (w.dynamicWeight !== undefined && w.dynamicWeight !== '') return `replicaScheduling.weightPreference.dynamicWeight: ${String(w.dynamicWeight)}`;
  const weights = list(w.staticWeightList).map((s) => ({ target: clusterAffinity(isRaw(s.targetCluster) ? s.targetCluster : {}), weight: int(s.weight) }));
  return { type: 'StaticWeight', weights, ignoresSpread: !isRaw(r.weightPreference) || weights.length > 0 };
}

/** `spec.placement`, read whole. */
export function parsePlacement(p: Raw): Placement {
  const affinities = list(p.clusterAffinities);
  const terms: AffinityTerm[] = affinities.length
    ? affinities.map((t) => ({
        name: typeof t.affinityName === 'string' ? t.affinityName : '', affinity: clusterAffinity(t),
        overflow: list(t.overflowAffinities).map((o) => ({ name: typeof o.affinityName === 'string' ? o.affinityName : '', affinity: clusterAffinity(o) })),
      }))
    : [{ name: '', affinity: isRaw(p.clusterAffinity) ? clusterAffinity(p.clusterAffinity) : ANY, overflow: [] }];
  const spread = list(p.spreadConstraints).map((s) => {
    const label = typeof s.spreadByLabel === 'string' && s.spreadByLabel ? s.spreadByLabel : undefined;
    // Karmada's webhook makes a constraint naming neither a field nor a label a `cluster` one.
    const field = SPREAD_FIELDS.includes(s.spreadByField) ? (s.spreadByField as SpreadField) : label ? undefined : 'cluster';
    return { field, label, minGroups: int(s.minGroups), maxGroups: int(s.maxGroups) };
  });
  const scheduling = replicaScheduling(isRaw(p.replicaScheduling) ? p.replicaScheduling : undefined);
  const badSpread = list(p.spreadConstraints).findIndex((s) => s.spreadByField !== undefined && s.spreadByField !== '' && !SPREAD_FIELDS.includes(s.spreadByField));
  const unsupported = typeof scheduling === 'string' ? scheduling
    : badSpread >= 0 ? `spreadConstraints[${badSpread}].spreadByField`
      : isRaw(p.workloadAffinity) && Object.keys(p.workloadAffinity).length ? 'workloadAffinity' : undefined;
  return {
    terms, grouped: affinities.length > 0, tolerations: clusterTolerations(p.clusterTolerations), spread,
    scheduling: typeof scheduling === 'string' ? { type: 'Duplicated' } : scheduling, unsupported,
  };
}
