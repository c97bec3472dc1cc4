import {
  slimNode, slimPod, slimPV, slimPVC, slimStorageClass, slimWorkload, slimWorkloadSpread, type WorkloadKind,
} from './objects.js';

// Every kind zonekeeper lists, watches, loads from files or writes to, in one table: the
// store, the reflectors, the file loader, the actuator and the debug routes all read it.

/** A kind by its resource (plural) name: the store's key for it. */
export type KindName =
  | 'nodes' | 'pods' | 'persistentvolumes' | 'persistentvolumeclaims' | 'storageclasses'
  | 'statefulsets' | 'replicasets' | 'deployments' | 'workloadspreads';

export interface KindSpec {
  plural: KindName;
  /** Kind as it appears in objects and Lists. */
  kind: string;
  group: string;
  version: string;
  /** False for kinds whose CRD may be absent (WorkloadSpread). */
  required: boolean;
  /** Names a user may type for it (lower case), beside the kind and plural. */
  shortNames: readonly string[];
  slim: (raw: any) => unknown;
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
}

const workloadKind = (kind: WorkloadKind, plural: KindName, shortNames: string[], traits: Pick<WorkloadKindSpec, 'ordinals' | 'podsOwnedVia' | 'deletionCost'>): WorkloadKindSpec => ({
  plural, kind, group: 'apps', version: 'v1', required: true, shortNames, slim: (o) => slimWorkload(kind, o), ...traits,
});

export const WORKLOAD_KINDS: Readonly<Record<WorkloadKind, WorkloadKindSpec>> = {
  StatefulSet: workloadKind('StatefulSet', 'statefulsets', ['sts'], { ordinals: true, podsOwnedVia: undefined, deletionCost: false }),
  ReplicaSet: workloadKind('ReplicaSet', 'replicasets', ['rs'], { ordinals: false, podsOwnedVia: undefined, deletionCost: true }),
  Deployment: workloadKind('Deployment', 'deployments', ['deploy'], { ordinals: false, podsOwnedVia: 'ReplicaSet', deletionCost: true }),
};

/** The spec of a workload kind named in an owner reference; undefined for kinds not cached. */
export function workloadKindSpec(kind: string): WorkloadKindSpec | undefined {
  return Object.hasOwn(WORKLOAD_KINDS, kind) ? WORKLOAD_KINDS[kind as WorkloadKind] : undefined;
}

/** A workload whose pods belong to its owner's workload (a Deployment's ReplicaSet): its owner decides. */
export function ownedThrough(w: { kind: string; owner?: { kind: string } | undefined }): boolean {
  return !!w.owner && workloadKindSpec(w.owner.kind)?.podsOwnedVia === w.kind;
}

export const WORKLOADSPREAD_GROUP = 'apps.kruise.io';
/** Preferred first: v1beta1 when the API server serves it (design §5). */
export const WORKLOADSPREAD_VERSIONS = ['v1beta1', 'v1alpha1'];

export function workloadSpreadKind(version: string): KindSpec {
  return {
    plural: 'workloadspreads', kind: 'WorkloadSpread', group: WORKLOADSPREAD_GROUP, version, required: false,
    shortNames: ['ws'], slim: slimWorkloadSpread,
  };
}

export const POD_KIND: KindSpec = { plural: 'pods', kind: 'Pod', group: '', version: 'v1', required: true, shortNames: ['po'], slim: slimPod };

/** Kinds watched on every cluster. */
export const CORE_KINDS: readonly KindSpec[] = [
  { plural: 'nodes', kind: 'Node', group: '', version: 'v1', required: true, shortNames: ['no'], slim: slimNode },
  POD_KIND,
  { plural: 'persistentvolumes', kind: 'PersistentVolume', group: '', version: 'v1', required: true, shortNames: ['pv'], slim: slimPV },
  { plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', group: '', version: 'v1', required: true, shortNames: ['pvc'], slim: slimPVC },
  { plural: 'storageclasses', kind: 'StorageClass', group: 'storage.k8s.io', version: 'v1', required: true, shortNames: ['sc'], slim: slimStorageClass },
  ...Object.values(WORKLOAD_KINDS),
];

/** Every kind the store holds, by plural. */
export const ALL_KIND_NAMES: readonly KindName[] = [...CORE_KINDS.map((k) => k.plural), 'workloadspreads'];

const WORKLOAD_PLURALS: ReadonlySet<KindName> = new Set(Object.values(WORKLOAD_KINDS).map((k) => k.plural));

export function isWorkloadKindName(plural: KindName): boolean {
  return WORKLOAD_PLURALS.has(plural);
}

export function collectionPath(k: KindSpec): string {
  return k.group === '' ? `/api/${k.version}/${k.plural}` : `/apis/${k.group}/${k.version}/${k.plural}`;
}

/** The URL of one namespaced object of a kind. */
export function objectPath(k: KindSpec, namespace: string, name: string): string {
  const base = k.group === '' ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${k.plural}/${encodeURIComponent(name)}`;
}

/** The kind of a raw object, for files of mixed objects. */
export function kindOfObject(kind: string): KindSpec | undefined {
  if (kind === 'WorkloadSpread') return workloadSpreadKind('v1alpha1');
  return CORE_KINDS.find((k) => k.kind === kind);
}

/** A workload kind as a user types it: kind, plural or short name, any case. */
export function workloadKindNamed(text: string): WorkloadKind | undefined {
  const t = text.toLowerCase();
  return Object.values(WORKLOAD_KINDS).find((k) => k.kind.toLowerCase() === t || k.plural === t || k.shortNames.includes(t))?.kind;
}
