import {
  slimNode, slimPod, slimPV, slimPVC, slimStorageClass, slimWorkload, slimWorkloadSpread,
} from './objects.js';
import type { KindName } from './store.js';

/** What a reflector needs to list and watch one kind, and to slim its objects. */
export interface ResourceType {
  name: KindName;
  /** Kind as it appears in objects and Lists. */
  kind: string;
  group: string;
  version: string;
  /** False for kinds whose CRD may be absent (WorkloadSpread). */
  required: boolean;
  slim: (raw: any) => unknown;
}

export const CORE_RESOURCES: ResourceType[] = [
  { name: 'nodes', kind: 'Node', group: '', version: 'v1', required: true, slim: slimNode },
  { name: 'pods', kind: 'Pod', group: '', version: 'v1', required: true, slim: slimPod },
  { name: 'persistentvolumes', kind: 'PersistentVolume', group: '', version: 'v1', required: true, slim: slimPV },
  { name: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', group: '', version: 'v1', required: true, slim: slimPVC },
  { name: 'storageclasses', kind: 'StorageClass', group: 'storage.k8s.io', version: 'v1', required: true, slim: slimStorageClass },
  { name: 'statefulsets', kind: 'StatefulSet', group: 'apps', version: 'v1', required: true, slim: (o) => slimWorkload('StatefulSet', o) },
  { name: 'replicasets', kind: 'ReplicaSet', group: 'apps', version: 'v1', required: true, slim: (o) => slimWorkload('ReplicaSet', o) },
  { name: 'deployments', kind: 'Deployment', group: 'apps', version: 'v1', required: true, slim: (o) => slimWorkload('Deployment', o) },
];

export const WORKLOADSPREAD_GROUP = 'apps.kruise.io';
/** Preferred first: v1beta1 when the API server serves it (DESIGN §5). */
export const WORKLOADSPREAD_VERSIONS = ['v1beta1', 'v1alpha1'];

export function workloadSpreadResource(version: string): ResourceType {
  return {
    name: 'workloadspreads', kind: 'WorkloadSpread', group: WORKLOADSPREAD_GROUP, version, required: false,
    slim: slimWorkloadSpread,
  };
}

export function collectionPath(r: ResourceType): string {
  return r.group === '' ? `/api/${r.version}/${r.name}` : `/apis/${r.group}/${r.version}/${r.name}`;
}

/** Finds the resource type of a raw object by its kind, for files of mixed objects. */
export function resourceForKind(kind: string): ResourceType | undefined {
  if (kind === 'WorkloadSpread') return workloadSpreadResource('v1alpha1');
  return CORE_RESOURCES.find((r) => r.kind === kind);
}
