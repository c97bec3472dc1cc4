// Slim, typed copies of the Kubernetes objects the policies read. Everything else a
// list or watch returns (managedFields, container specs, status noise) is dropped on
// arrival so that 50,000 cached pods stay small.

import { ZONE_LABEL } from './annotations.js';
import type { WorkloadKind } from './kinds.js';
import type { WorkloadSpreadVersion } from './workloadSpreadVersions.js';
import type { ParsedPreferences } from './zonePreferences.js';

export interface OwnerRef { kind: string; name: string; uid: string }

/** `valueSet`: the values as a set, on long lists (not enumerable): a node is judged in one look-up, whatever a tenant lists. */
export interface NodeSelectorRequirement { key: string; operator: string; values: string[]; readonly valueSet?: ReadonlySet<string> }
export interface NodeSelectorTerm { matchExpressions: NodeSelectorRequirement[]; matchFields: NodeSelectorRequirement[] }
export interface TopologySelectorTerm { matchLabelExpressions: { key: string; values: string[] }[] }
export interface Taint { key: string; value: string; effect: string }
export interface Toleration { key: string; operator: string; value: string; effect: string }

/**
 * What a pod (or a workload's pod template) asks of a node's labels: its `nodeSelector` and its
 * required node affinity, as kube-scheduler's NodeAffinity plugin reads them. Undefined where a
 * pod sets neither (most pods): nothing is kept for them.
 */
export interface NodeSelection {
  nodeSelector: Readonly<Record<string, string>>;
  /** Required node affinity terms (ORed); undefined when the pod sets none. */
  affinity: readonly NodeSelectorTerm[] | undefined;
  /** Both as one text: equal selections have equal keys (what node fit is cached by). */
  key: string;
}

/** All a pod template or pod asks of a node: its selection and its tolerations. */
export interface NodeNeeds {
  selection: NodeSelection | undefined;
  tolerations: readonly Toleration[];
}

export interface SlimNode {
  name: string;
  labels: Record<string, string>;
  /** labels[ZONE_LABEL], a field of its own: the filter reads it for each of thousands of candidates. */
  zone: string | undefined;
  /** Allocatable CPU (millicores), memory (bytes) and pod slots. */
  allocatable: { cpuMilli: number; memory: number; pods: number };
  /** NoSchedule and NoExecute taints only: PreferNoSchedule never excludes a node. */
  taints: Taint[];
  unschedulable: boolean;
  ready: boolean;
}

export interface SlimPod {
  uid: string;
  namespace: string;
  name: string;
  /** '' while the pod is not bound. */
  nodeName: string;
  owner: OwnerRef | undefined;
  /** StatefulSet ordinal from the pod-index label or the name suffix; -1 when there is none. */
  ordinal: number;
  /** Names of the PVCs the pod mounts, ephemeral volumes included. */
  claims: readonly string[];
  terminating: boolean;
  /** Succeeded or Failed: the pod no longer occupies a seat. */
  finished: boolean;
  ready: boolean;
  createdAt: number;
  ignore: boolean;
  /** From zonekeeper.io/instance-id; -1 when the pod has none. */
  instanceId: number;
  /** controller.kubernetes.io/pod-deletion-cost as written; undefined when absent. */
  deletionCost: string | undefined;
  /** zonekeeper.io/instance-count as written; undefined when absent. */
  instanceCount: string | undefined;
  /** Summed container requests: what the pod takes from its node. */
  cpuMilli: number;
  memory: number;
  /** Set by the OpenKruise webhook: the subset this pod already belongs to. */
  kruiseMatch: { workloadSpread: string; subset: string } | undefined;
  /**
   * For WorkloadSpread subsets with taints (and /debug/explain). Cached pods share equal lists
   * (most carry the same two defaults) and keep at most CACHED_TOLERATIONS of them.
   */
  tolerations: readonly Toleration[];
  /** It carries the scheduling gate zonekeeper.io/zone: held until zonekeeper writes its zone. */
  gated: boolean;
  /** Unbound with PodScheduled False for `Unschedulable`: kube-scheduler found no node (what Adaptive reschedules). */
  unschedulable?: boolean;
  /** Labelled `zonekeeper.io/decided-by: policy`: kube-apiserver's MutatingAdmissionPolicy wrote its zone from the seat table. */
  decidedByPolicy?: boolean;
  /** For such a pod: the generation of the table it was decided from (label zonekeeper.io/seat-table); undefined: none written. */
  seatTableGeneration?: number;
  /** zonekeeper.io/subset-patch-not-applied: the fields of its subset's patch the gate could not write (zonekeeper audit). */
  subsetPatchNotApplied?: string;
  /** For a gated pod only: what the gate's patch is conditional on, and the other gates it keeps. */
  gate?: { resourceVersion: string; otherGates: readonly string[] };
  /** Its node selector and required node affinity; undefined when it sets neither. Shared between equal pods. */
  selection: NodeSelection | undefined;
  /** Its `controller-revision-hash` label (a StatefulSet's pod template revision); undefined without one. */
  revision?: string;
  /** When its Ready condition last changed (ms since the epoch); undefined without one. */
  readyChangedAt?: number;
}

/** The pod in a scheduling request: all of its tolerations, nothing shared. */
export type PendingPod = SlimPod;

/** Tolerations a cached pod keeps: a pod with more is rare, and its extra ones only matter to explain. */
export const CACHED_TOLERATIONS = 64;

export interface SlimWorkload {
  kind: WorkloadKind;
  /** The version it was read at: writes go to the same. */
  apiVersion: string;
  namespace: string;
  name: string;
  uid: string;
  replicas: number;
  /** Only the zonekeeper.io/* annotations are kept. */
  annotations: Record<string, string>;
  /** `zonekeeper.io/zone-preferences` as parsed on arrival; undefined without the annotation. */
  zonePreferences: ParsedPreferences | undefined;
  owner: OwnerRef | undefined;
  /** spec.ordinals.start of a StatefulSet, 0 otherwise. */
  ordinalsStart: number;
  /** An Advanced StatefulSet's spec.reserveOrdinals: ordinals its controller never creates. */
  reservedOrdinals: ReservedOrdinals;
  /** A StatefulSet's volumeClaimTemplates names: its claims are `<template>-<name>-<ordinal>`. */
  claimTemplates: readonly string[];
  /** Each claim template's spec.storageClassName, in claimTemplates' order; undefined when unset (the default StorageClass's). */
  claimTemplateClasses: readonly (string | undefined)[];
  /** Its pod template mounts a claim of its own (a named PVC, a generic ephemeral volume): a zone its pods' volumes may decide. */
  templateClaims: boolean;
  /** What its pod template asks of a node: which zones its pods can use (placement/nodeFit.ts). */
  template: NodeNeeds;
  /** A ReplicaSet's deployment.kubernetes.io/revision: the newest is its Deployment's current pod template. 0 otherwise. */
  revision: number;
  /** A StatefulSet's (an Advanced StatefulSet's) update as its controller reports it (zone-by-zone rollouts); undefined for other kinds. */
  update?: StatefulUpdate;
}

/** What a zone-by-zone rollout reads of a StatefulSet (docs/design.md#zone-by-zone-rollouts). */
export interface StatefulUpdate {
  /** spec.updateStrategy.type is OnDelete: its controller replaces a pod only once it is deleted. */
  onDelete: boolean;
  /** status.updateRevision: the revision a pod created now gets ('' before the controller wrote one). */
  updateRevision: string;
  /** status.observedGeneration ≥ metadata.generation: updateRevision is that of the spec as it is. */
  observed: boolean;
  /** spec.minReadySeconds: how long a new pod is Ready before it counts as available. */
  minReadySeconds: number;
}

/** A Karpenter NodePool as matched against a pod (placement/zoneReach.ts): what its nodes would carry. */
export interface SlimNodePool {
  name: string;
  /** spec.template.metadata.labels, and karpenter.sh/nodepool: its name. */
  labels: Record<string, string>;
  /** spec.template.spec.requirements (minValues dropped). */
  requirements: NodeSelectorRequirement[];
  /** spec.template.spec.taints with NoSchedule or NoExecute (startup taints are removed once a node is up). */
  taints: Taint[];
}

/** A Cluster Autoscaler's status ConfigMap: only that it is there, and where (placement/zoneReach.ts). */
export interface SlimAutoscalerStatus {
  namespace: string;
  name: string;
}

/** An autoscaler's Event saying it will not add a node for a pod (Cluster Autoscaler, Karpenter). */
export interface SlimScaleReport {
  /** The Event's own namespace and name: its store key. */
  namespace: string;
  name: string;
  /** The pod it is about. */
  pod: { name: string; uid: string };
  source: 'cluster-autoscaler' | 'karpenter';
  /** Its message, at most SCALE_REPORT_MESSAGE characters. */
  message: string;
  /** When it was last said (ms since the epoch). */
  at: number;
}

export const SCALE_REPORT_MESSAGE = 512;

/** Single ordinals and inclusive ranges ("3-5" in Kruise ≥ 1.8), kept as written: never expanded. */
export interface ReservedOrdinals { singles: ReadonlySet<number>; ranges: readonly (readonly [number, number])[] }

export interface SlimPVC {
  namespace: string;
  name: string;
  volumeName: string;
  storageClassName: string;
}

export interface SlimPV {
  name: string;
  /** Zones named by the legacy zone labels, `__`-joined values split. */
  labelZones: string[];
  nodeAffinity: NodeSelectorTerm[] | undefined;
  claim: { namespace: string; name: string } | undefined;
}

export interface SlimStorageClass {
  name: string;
  waitForFirstConsumer: boolean;
  allowedTopologies: TopologySelectorTerm[];
  /** Annotated storageclass.kubernetes.io/is-default-class: "true": a claim that names no class gets it. */
  isDefault: boolean;
}

export interface WorkloadSpreadSubset {
  name: string;
  requiredNodeSelectorTerm: NodeSelectorTerm | undefined;
  preferredNodeSelectorTerms: { weight: number; preference: NodeSelectorTerm }[];
  tolerations: Toleration[];
  /** An integer, a percent string such as "20%", or null for unlimited. */
  maxReplicas: number | string | null;
}

export interface SlimWorkloadSpread {
  namespace: string;
  name: string;
  uid: string;
  targetRef: { apiVersion: string; kind: string; name: string };
  subsets: WorkloadSpreadSubset[];
  strategy: 'Fixed' | 'Adaptive';
  rescheduleCriticalSeconds: number;
  /** Adaptive: a subset none of whose nodes can take the pod now is skipped at once (Kruise's simulation; off with adaptive.disableSimulationSchedule). */
  simulationSchedule: boolean;
  /** Whether a pod filed under a subset after its creation also gets the labels and annotations of the subset's patch (Kruise's default). */
  patchAdoptedPods: boolean;
  /** The version it is read (and its status written) at: the one the cluster serves, v1beta1 first. */
  apiVersion: string;
  /** The version the user wrote its spec in (managedFields): what messages name its fields by (workloadSpreadVersions.ts). */
  userVersion: WorkloadSpreadVersion;
  generation: number;
  /** Subsets' `patch`es by subset name: applied at admission when zonekeeper owns WorkloadSpreads (no OpenKruise), else by OpenKruise's webhook. */
  patches: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** The status fields zonekeeper writes, as the object has them (statusDigest). */
  statusDigest: string;
  /** Each subset's `Schedulable` condition as the status has it (OpenKruise's controller or zonekeeper wrote it). */
  schedulable: ReadonlyMap<string, SubsetCondition>;
}

/** A subset's `Schedulable` condition (OpenKruise's WorkloadSpreadSubsetCondition). */
export interface SubsetCondition {
  type: 'Schedulable';
  status: 'True' | 'False';
  reason: string;
  /** RFC 3339, as written. */
  lastTransitionTime: string;
}

/** One subset's status as OpenKruise's controller writes it. */
export interface WorkloadSpreadSubsetStatus {
  name: string;
  replicas: number;
  /** −1 when the subset is unlimited. */
  missingReplicas: number;
  /** Pods given a seat in the subset that the cache does not count in it yet: name → when. */
  creatingPods: Record<string, string>;
  /** Pods whose deletion was announced and that are still active: name → when (zonekeeper has no pod-deletion webhook: always empty). */
  deletingPods: Record<string, string>;
  /** Adaptive only: the `Schedulable` condition. */
  conditions: SubsetCondition[];
}

/** What zonekeeper keeps of a WorkloadSpread's status, compared by value. */
export function statusDigest(observedGeneration: number, subsets: readonly WorkloadSpreadSubsetStatus[]): string {
  return JSON.stringify([observedGeneration, subsets.map((s) => [
    s.name, s.replicas, s.missingReplicas, Object.keys(s.creatingPods).sort(), Object.keys(s.deletingPods).sort(),
    s.conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime]),
  ])]);
}

/** Ordinals and replica counts are int32 in Kubernetes: a larger index was not written by a controller. */
export const MAX_INDEX = 2 ** 31 - 1;

/** Holds a seat of its workload: not terminating, not finished (what placement and the store count). */
export function holdsSeat(pod: Pick<SlimPod, 'terminating' | 'finished'>): boolean {
  return !pod.terminating && !pod.finished;
}

/** A node's value of a topology label (the zone label has a field of its own). */
export function zoneOf(node: SlimNode, topologyKey: string): string | undefined {
  return topologyKey === ZONE_LABEL ? node.zone : node.labels[topologyKey];
}
