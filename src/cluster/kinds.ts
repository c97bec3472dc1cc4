/**
 * Workload kinds by the name zonekeeper gives them. OpenKruise's Advanced StatefulSet is a
 * `StatefulSet` of apps.kruise.io on the wire: here it is `AdvancedStatefulSet`, so that an
 * owner reference, a store key and a message never confuse it with apps/v1's.
 */
export type WorkloadKind = 'StatefulSet' | 'ReplicaSet' | 'Deployment' | 'Job' | 'CloneSet' | 'AdvancedStatefulSet';

export const KRUISE_GROUP = 'apps.kruise.io';

// Every kind zonekeeper lists, watches, loads from files or writes to, in one table: the
// store, the reflectors, the file loader, the actuator and the debug routes all read it.

/** A kind by its resource (plural) name: the store's key for it. */
export type KindName =
  | 'nodes' | 'pods' | 'persistentvolumes' | 'persistentvolumeclaims' | 'storageclasses'
  | 'statefulsets' | 'replicasets' | 'deployments' | 'jobs' | 'workloadspreads'
  | 'clonesets' | 'advancedstatefulsets' | 'nodepools' | 'scaleupreports' | 'karpenterreports' | 'autoscalerstatus'
  // Karmada's, on a Karmada control plane only (karmada.ts).
  | 'resourcebindings' | 'clusterresourcebindings' | 'memberclusters' | 'propagationpolicies' | 'clusterpropagationpolicies' | 'overridepolicies';

export interface KindSpec {
  /** The store's name for it: the resource name, but `advancedstatefulsets` for Kruise's. */
  plural: KindName;
  /** The resource in URLs. */
  resource: string;
  /** zonekeeper's name for it (see WorkloadKind). */
  kind: string;
  /** Kind as it appears in objects and Lists. */
  wireKind: string;
  group: string;
  version: string;
  /** False for kinds whose CRD may be absent (OpenKruise's). */
  required: boolean;
  /** Names a user may type for it (lower case), beside the kind and plural. */
  shortNames: readonly string[];
  /**
   * Only this feature needs the kind: readiness does not wait for it while the API server
   * refuses it (403) or does not serve it (404); the feature is off meanwhile.
   */
  feature?: string;
  /** A field selector on the list and the watch: only these objects of the kind are cached. */
  fieldSelector?: string;
  /**
   * Refused after it was watched, its objects stay as last seen (they limit other workloads'
   * pods, which wait on them meanwhile: placement/model.ts); other kinds' are dropped.
   */
  keptWhenRefused?: boolean;
  /** Its own converter (Karmada's kinds); else convert.ts's for the plural. */
  slim?: (raw: Record<string, any>) => unknown;
}

/** The workload kinds: pods' owners that policies read (and that zonekeeper annotates). */
export interface WorkloadKindSpec extends KindSpec {
  kind: WorkloadKind;
  /** Its pods carry ordinals, their seats in the zone sequence. */
  ordinals: boolean;
  /** Its pods are owned through this kind (a Deployment's, through its ReplicaSets). */
  podsOwnedVia: WorkloadKind | undefined;
  /** Its controller removes pods by controller.kubernetes.io/pod-deletion-cost on scale-down. */
  deletionCost: boolean;
  /** The spec field that says how many pods run at once: a Job's is parallelism. */
  replicasField: 'replicas' | 'parallelism';
}

type Traits = Pick<WorkloadKindSpec, 'ordinals' | 'podsOwnedVia' | 'deletionCost'>;

function workloadKind(
  kind: WorkloadKind, plural: KindName, shortNames: string[], traits: Traits,
  api: { group: string; version: string; resource?: string; wireKind?: string; required?: boolean; replicasField?: 'parallelism'; feature?: string } = { group: 'apps', version: 'v1' },
): WorkloadKindSpec {
  return {
    plural, resource: api.resource ?? plural, kind, wireKind: api.wireKind ?? kind, group: api.group, version: api.version,
    required: api.required ?? true, shortNames, replicasField: api.replicasField ?? 'replicas', ...traits,
    ...(api.feature ? { feature: api.feature } : {}),
  };
}

// OpenKruise's workloads (docs/design.md#workloadspread): a CloneSet is a ReplicaSet that removes pods by deletion
// cost; an Advanced StatefulSet numbers its pods as apps/v1 does, skipping reserved ordinals.
const cloneSet = (version: string) => workloadKind('CloneSet', 'clonesets', ['clone'],
  { ordinals: false, podsOwnedVia: undefined, deletionCost: true }, { group: KRUISE_GROUP, version, required: false });
const advancedStatefulSet = (version: string) => workloadKind('AdvancedStatefulSet', 'advancedstatefulsets', ['asts'],
  { ordinals: true, podsOwnedVia: undefined, deletionCost: false },
  { group: KRUISE_GROUP, version, resource: 'statefulsets', wireKind: 'StatefulSet', required: false });

/** Workload kinds by zonekeeper's name; Kruise's at their preferred version (a cached object names the one it was read at). */
export const WORKLOAD_KINDS: Readonly<Record<WorkloadKind, WorkloadKindSpec>> = {
  StatefulSet: workloadKind('StatefulSet', 'statefulsets', ['sts'], { ordinals: true, podsOwnedVia: undefined, deletionCost: false }),
  ReplicaSet: workloadKind('ReplicaSet', 'replicasets', ['rs'], { ordinals: false, podsOwnedVia: undefined, deletionCost: true }),
  Deployment: workloadKind('Deployment', 'deployments', ['deploy'], { ordinals: false, podsOwnedVia: 'ReplicaSet', deletionCost: true }),
  // A WorkloadSpread may target a Job: its parallelism is what percent quotas resolve against.
  Job: workloadKind('Job', 'jobs', ['job'], { ordinals: false, podsOwnedVia: undefined, deletionCost: false }, { group: 'batch', version: 'v1', replicasField: 'parallelism', feature: 'WorkloadSpreads that target Jobs' }),
  CloneSet: cloneSet('v1alpha1'),
  AdvancedStatefulSet: advancedStatefulSet('v1beta1'),
};

/** The API group of each workload kind's wire name (Kruise's StatefulSet is told apart by workloadKindOf). */
const WIRE_GROUP: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(WORKLOAD_KINDS).filter((k) => k.wireKind === k.kind).map((k) => [k.kind, k.group]),
);

/**
 * The kind zonekeeper knows an owner or target by: `AdvancedStatefulSet` for Kruise's
 * StatefulSet, `<kind>.<group>` for a known kind name in another group (not a workload of
 * ours), else the kind as written. Without an apiVersion the kind is taken as written.
 */
export function workloadKindOf(apiVersion: string, kind: string): string {
  if (!apiVersion) return kind;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === KRUISE_GROUP && kind === 'StatefulSet') return 'AdvancedStatefulSet';
  const expected = Object.hasOwn(WIRE_GROUP, kind) ? WIRE_GROUP[kind] : undefined;
  return expected !== undefined && expected !== group ? `${kind}.${group || 'core'}` : kind;
}

/** The spec of a workload kind named in an owner reference; undefined for kinds not cached. */
export function workloadKindSpec(kind: string): WorkloadKindSpec | undefined {
  return Object.hasOwn(WORKLOAD_KINDS, kind) ? WORKLOAD_KINDS[kind as WorkloadKind] : undefined;
}

/** A workload whose pods belong to its owner's workload (a Deployment's ReplicaSet): its owner decides. */
export function ownedThrough(w: { kind: string; owner?: { kind: string } | undefined }): boolean {
  return !!w.owner && workloadKindSpec(w.owner.kind)?.podsOwnedVia === w.kind;
}

function workloadSpreadKind(version: string): KindSpec {
  return {
    plural: 'workloadspreads', resource: 'workloadspreads', kind: 'WorkloadSpread', wireKind: 'WorkloadSpread',
    group: KRUISE_GROUP, version, required: false, shortNames: ['ws'], keptWhenRefused: true,
  };
}

/** A kind watched only while its CRD is served: its versions, preferred first (docs/design.md#workloadspread). */
export interface OptionalKind extends Pick<KindSpec, 'plural' | 'kind' | 'group' | 'resource' | 'keptWhenRefused'> {
  versions: readonly string[];
  at(version: string): KindSpec;
}

/** Names and group come from the spec itself, so the two cannot drift apart. */
function optionalKind(versions: readonly string[], at: (version: string) => KindSpec): OptionalKind {
  const { plural, kind, group, resource, keptWhenRefused } = at(versions[0]!);
  return { plural, kind, group, resource, keptWhenRefused, versions, at };
}

const KARPENTER_GROUP = 'karpenter.sh';

/** Karpenter's NodePools: the zones a pool scaled to zero can still grow into (placement/zoneReach.ts). */
const nodePoolKind = (version: string): KindSpec => ({
  plural: 'nodepools', resource: 'nodepools', kind: 'NodePool', wireKind: 'NodePool', group: KARPENTER_GROUP, version,
  required: false, shortNames: [],
});

/** OpenKruise's and Karpenter's kinds: looked for by discovery; absent is not an error. */
export const OPTIONAL_KINDS: readonly OptionalKind[] = [
  optionalKind(['v1beta1', 'v1alpha1'], workloadSpreadKind),
  optionalKind(['v1alpha1'], cloneSet),
  optionalKind(['v1beta1', 'v1alpha1'], advancedStatefulSet),
  optionalKind(['v1'], nodePoolKind),
];

const core = (plural: KindName, kind: string, group: string, shortNames: string[]): KindSpec =>
  ({ plural, resource: plural, kind, wireKind: kind, group, version: 'v1', required: true, shortNames });

export const POD_KIND: KindSpec = core('pods', 'Pod', '', ['po']);

/**
 * An autoscaler's word that it will not add a node for a pod: Cluster Autoscaler's
 * `NotTriggerScaleUp` and Karpenter's `FailedScheduling` Events (docs/autoscalers.md), each
 * watched through a field selector so that no other Event is cached.
 */
const autoscalerEvents = (plural: KindName, fieldSelector: string): KindSpec => ({
  ...core(plural, 'Event', '', []), resource: 'events', fieldSelector, feature: 'Autoscaler reports',
});
const AUTOSCALER_REPORT_KINDS: readonly KindSpec[] = [
  autoscalerEvents('scaleupreports', 'reason=NotTriggerScaleUp'),
  autoscalerEvents('karpenterreports', 'reason=FailedScheduling,source=karpenter'),
];

/**
 * Cluster Autoscaler's status ConfigMap (`cluster-autoscaler-status`, written by every running
 * Cluster Autoscaler unless `--write-status-configmap=false`): where it is, zones with no node a pod
 * fits count as zones it can grow into (placement/zoneReach.ts). No other ConfigMap is cached.
 */
const AUTOSCALER_STATUS_NAME = 'cluster-autoscaler-status';
const AUTOSCALER_STATUS_KIND: KindSpec = {
  ...core('autoscalerstatus', 'ConfigMap', '', []), resource: 'configmaps', fieldSelector: `metadata.name=${AUTOSCALER_STATUS_NAME}`,
  feature: 'Cluster Autoscaler detection',
};

/** Kinds watched on every cluster. */
export const CORE_KINDS: readonly KindSpec[] = [
  core('nodes', 'Node', '', ['no']),
  POD_KIND,
  core('persistentvolumes', 'PersistentVolume', '', ['pv']),
  core('persistentvolumeclaims', 'PersistentVolumeClaim', '', ['pvc']),
  core('storageclasses', 'StorageClass', 'storage.k8s.io', ['sc']),
  ...Object.values(WORKLOAD_KINDS).filter((k) => k.required),
  ...AUTOSCALER_REPORT_KINDS,
  AUTOSCALER_STATUS_KIND,
];

/**
 * What zonekeeper watches in each Karmada member (docs/design.md#across-clusters): its nodes, its pods, and the
 * owners a workload's pods are checked against there (a pod's ownerReference alone is anyone's to write).
 */
export const MEMBER_KINDS: readonly KindSpec[] = [
  CORE_KINDS.find((k) => k.plural === 'nodes')!, POD_KIND,
  WORKLOAD_KINDS.Deployment, WORKLOAD_KINDS.ReplicaSet, WORKLOAD_KINDS.StatefulSet,
];

/** Every kind the store holds, by plural. */
export const ALL_KIND_NAMES: readonly KindName[] = [...CORE_KINDS.map((k) => k.plural), ...OPTIONAL_KINDS.map((k) => k.plural)];

const WORKLOAD_PLURALS: ReadonlySet<KindName> = new Set(Object.values(WORKLOAD_KINDS).map((k) => k.plural));

export function isWorkloadKindName(plural: KindName): boolean {
  return WORKLOAD_PLURALS.has(plural);
}

const apiBase = (apiVersion: string) => (apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
const apiVersionOf = (k: KindSpec) => (k.group === '' ? k.version : `${k.group}/${k.version}`);

export function collectionPath(k: KindSpec): string {
  return `${apiBase(apiVersionOf(k))}/${k.resource}`;
}

/** The URL of one namespaced object of a kind. */
export function objectPath(k: KindSpec, namespace: string, name: string): string {
  return namespacedPath(apiVersionOf(k), k.resource, namespace, name);
}

/** The URL of a cached workload, at the version it was read at. */
export function workloadPath(w: { kind: WorkloadKind; apiVersion: string; namespace: string; name: string }): string {
  return namespacedPath(w.apiVersion, WORKLOAD_KINDS[w.kind].resource, w.namespace, w.name);
}

function namespacedPath(apiVersion: string, resource: string, namespace: string, name: string): string {
  return `${apiBase(apiVersion)}/namespaces/${encodeURIComponent(namespace)}/${resource}/${encodeURIComponent(name)}`;
}

/** The kind of a raw object, for files of mixed objects; without an apiVersion the kind decides. */
export function kindOfObject(kind: string, apiVersion = '', name = ''): KindSpec | undefined {
  if (kind === 'ConfigMap' && apiVersion === 'v1') return name === AUTOSCALER_STATUS_NAME ? AUTOSCALER_STATUS_KIND : undefined;
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const named = workloadKindOf(apiVersion, kind);
  const optional = OPTIONAL_KINDS.find((k) => k.kind === named);
  if (optional) return optional.at(optional.versions.includes(version) ? version : optional.versions[0]!);
  return CORE_KINDS.find((k) => k.kind === named && k.fieldSelector === undefined);
}

/** A workload kind as a user types it: kind, plural or short name, any case (`statefulsets` is apps/v1's). */
export function workloadKindNamed(text: string): WorkloadKind | undefined {
  const t = text.toLowerCase();
  return Object.values(WORKLOAD_KINDS).find((k) => k.kind.toLowerCase() === t || k.plural === t || k.shortNames.includes(t))?.kind;
}
