// Raw Kubernetes objects for tests, shaped as the API server sends them.
import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { pendingPod } from '../../src/cluster/convert.js';
import { type PendingPod } from '../../src/cluster/objects.js';

export type Raw = Record<string, any>;
let uidSeq = 0;
export const uid = (prefix = 'uid') => `${prefix}-${++uidSeq}`;

export function node(name: string, zone: string | undefined, extra: { labels?: Record<string, string>; taints?: Raw[]; unschedulable?: boolean } = {}): Raw {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(zone ? { 'topology.kubernetes.io/zone': zone } : {}), ...extra.labels } },
    spec: { taints: extra.taints, unschedulable: extra.unschedulable },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** zones × perZone nodes named node-<zone suffix>-<i>. */
export function nodes(zones: string[], perZone: number): Raw[] {
  return zones.flatMap((z) => Array.from({ length: perZone }, (_, i) => node(`node-${z.replace(/^zone-/, '')}-${i + 1}`, z)));
}

/** What a pod spec (or a template's) may ask of a node: nodeSelector, affinity, tolerations. */
export type NodeAsks = { nodeSelector?: Record<string, string>; affinity?: Raw; tolerations?: Raw[] };

interface StatefulSetExtra { annotations?: Record<string, string>; ordinalsStart?: number; namespace?: string; claimTemplates?: string[]; template?: NodeAsks }
export function statefulSet(name: string, replicas: number, extra: StatefulSetExtra = {}): Raw {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name, namespace: extra.namespace ?? 'default', uid: `sts-${name}`, annotations: extra.annotations },
    spec: {
      replicas, ...(extra.ordinalsStart !== undefined ? { ordinals: { start: extra.ordinalsStart } } : {}),
      ...(extra.claimTemplates ? { volumeClaimTemplates: extra.claimTemplates.map((t) => ({ metadata: { name: t } })) } : {}),
      ...(extra.template ? { template: { spec: extra.template } } : {}),
    },
  };
}

export function deployment(name: string, replicas: number, annotations?: Record<string, string>, template?: NodeAsks): Raw[] {
  return [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default', uid: `deploy-${name}`, annotations }, spec: { replicas, ...(template ? { template: { spec: template } } : {}) } },
    {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: { name: `${name}-rs`, namespace: 'default', uid: `rs-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: `deploy-${name}`, controller: true }] },
      spec: { replicas },
    },
  ];
}

export interface PodOpts {
  nodeName?: string;
  claims?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  tolerations?: Raw[];
  nodeSelector?: Record<string, string>;
  affinity?: Raw;
  uid?: string;
  terminating?: boolean;
  namespace?: string;
  /** metadata.creationTimestamp (RFC 3339). */
  createdAt?: string;
  /** The Ready condition True. */
  ready?: boolean;
}

/** The apiVersion a controller writes in its pods' owner references (and a WorkloadSpread in its targetRef). */
const OWNER_API: Record<string, string> = { CloneSet: 'apps.kruise.io/v1alpha1' };
export interface OwnerOpts { kind: string; name: string; apiVersion?: string }

export function pod(name: string, owner: OwnerOpts | undefined, o: PodOpts = {}): Raw {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: o.namespace ?? 'default', uid: o.uid ?? `pod-${name}`, labels: o.labels, annotations: o.annotations,
      ownerReferences: owner ? [{ apiVersion: owner.apiVersion ?? OWNER_API[owner.kind] ?? 'apps/v1', kind: owner.kind, name: owner.name, uid: `owner-${owner.name}`, controller: true }] : undefined,
      deletionTimestamp: o.terminating ? '2026-01-01T00:00:00Z' : undefined,
      creationTimestamp: o.createdAt,
    },
    spec: {
      nodeName: o.nodeName, tolerations: o.tolerations, nodeSelector: o.nodeSelector, affinity: o.affinity,
      volumes: (o.claims ?? []).map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
    },
    status: { phase: o.nodeName ? 'Running' : 'Pending', ...(o.ready ? { conditions: [{ type: 'Ready', status: 'True' }] } : {}) },
  };
}

export const stsPod = (sts: string, ordinal: number, o: PodOpts = {}) => pod(`${sts}-${ordinal}`, { kind: 'StatefulSet', name: sts }, o);
export const rsPod = (deploy: string, suffix: string, o: PodOpts = {}) => pod(`${deploy}-rs-${suffix}`, { kind: 'ReplicaSet', name: `${deploy}-rs` }, o);

// OpenKruise's workloads, as their controllers write them.
export const ASTS_API = 'apps.kruise.io/v1beta1';

export function cloneSet(name: string, replicas: number, annotations?: Record<string, string>): Raw {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name, namespace: 'default', uid: `cs-${name}`, annotations }, spec: { replicas } };
}

/** A CloneSet's pod: a random suffix, no ordinal. */
export const clonePod = (cs: string, suffix: string, o: PodOpts = {}) => pod(`${cs}-${suffix}`, { kind: 'CloneSet', name: cs }, o);

export function advancedStatefulSet(name: string, replicas: number,
  extra: { reserveOrdinals?: (number | string)[]; ordinalsStart?: number; annotations?: Record<string, string> } = {}): Raw {
  return {
    apiVersion: ASTS_API, kind: 'StatefulSet',
    metadata: { name, namespace: 'default', uid: `asts-${name}`, annotations: extra.annotations },
    spec: {
      replicas, reserveOrdinals: extra.reserveOrdinals,
      ...(extra.ordinalsStart !== undefined ? { ordinals: { start: extra.ordinalsStart } } : {}),
    },
  };
}

export const astsPod = (sts: string, ordinal: number, o: PodOpts = {}) =>
  pod(`${sts}-${ordinal}`, { kind: 'StatefulSet', name: sts, apiVersion: ASTS_API }, { ...o, labels: { 'apps.kubernetes.io/pod-index': String(ordinal), ...o.labels } });

export function pv(name: string, zone: string | undefined, o: { claim?: string; affinity?: Raw[]; labelZone?: string } = {}): Raw {
  return {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name, labels: o.labelZone ? { 'topology.kubernetes.io/zone': o.labelZone } : undefined },
    spec: {
      claimRef: o.claim ? { namespace: 'default', name: o.claim } : undefined,
      nodeAffinity: zone || o.affinity ? {
        required: { nodeSelectorTerms: o.affinity ?? [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] }] },
      } : undefined,
    },
  };
}

export function pvc(name: string, o: { volumeName?: string; storageClassName?: string } = {}): Raw {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: o };
}

export function workloadSpread(name: string, target: OwnerOpts, subsets: Raw[], strategy?: Raw): Raw {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread',
    metadata: { name, namespace: 'default', uid: `ws-${name}` },
    spec: { targetRef: { apiVersion: target.apiVersion ?? OWNER_API[target.kind] ?? 'apps/v1', kind: target.kind, name: target.name }, subsets, scheduleStrategy: strategy },
  };
}

export const zoneSubset = (name: string, zone: string, maxReplicas?: number | string, extra: Raw = {}): Raw => ({
  name, maxReplicas,
  requiredNodeSelectorTerm: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] },
  ...extra,
});

export function storeOf(objects: Raw[]): ClusterStore {
  const store = new ClusterStore();
  for (const o of objects) if (!addObject(store, o)) throw new Error(`test object of unknown kind ${o.kind}`);
  return store;
}

export const asPending = (raw: Raw): PendingPod => pendingPod(raw);
