import type { SlimNode, SlimNodePool, SlimPod, SlimPV, SlimPVC, SlimScaleReport, SlimStorageClass, SlimWorkload, SlimWorkloadSpread } from './objects.js';
import type { KindName, WorkloadKind } from './kinds.js';
import type { ZoneCodes } from './nodeSlots.js';

/** The read-only view of the cluster that placement and the extender see. */
export interface Snapshot {
  node(name: string): SlimNode | undefined;
  /** The slot of each name (-1: no such node), for `nodeAt` and `zoneCodes`. */
  resolveNodes(names: readonly string[]): Int32Array;
  nodeAt(slot: number): SlimNode | undefined;
  /** A node label's values by slot. */
  zoneCodes(topologyKey: string): ZoneCodes;
  nodes(): Iterable<SlimNode>;
  nodeCount(): number;
  /** Distinct values of a node label, sorted. */
  zones(topologyKey: string): string[];
  /**
   * The cluster's zones on a label: those of its nodes that are not control-plane nodes, and
   * those remembered since their last node went away (at most REMEMBERED_ZONES), sorted.
   */
  clusterZones(topologyKey: string): string[];
  /** Where a Cluster Autoscaler's status ConfigMap is (namespace/name), if the cluster has one. */
  clusterAutoscaler(): string | undefined;
  /** Karpenter's NodePools; none where Karpenter is not installed. */
  nodePools(): Iterable<SlimNodePool>;
  /** The autoscalers' latest word that they will not add a node for this pod, newest first. */
  scaleReports(podUid: string): readonly SlimScaleReport[];
  /** Every node by its slot (undefined: a free slot); what `resolveNodes` answers index. */
  nodesBySlot(): readonly (SlimNode | undefined)[];
  /**
   * A value computed from the nodes' names, labels and taints, kept until one of those changes
   * (a node's readiness or capacity does not drop it). At most NODE_DERIVED_KEPT are kept.
   */
  nodeDerived<T>(key: string, compute: () => T): T;
  /** Why a kind only a feature needs is not in the cache (refused, not served), or undefined. */
  kindOff(kind: KindName): string | undefined;
  pod(namespace: string, name: string): SlimPod | undefined;
  podByUid(uid: string): SlimPod | undefined;
  /** Pods whose controller owner is kind/namespace/name. */
  podsOwnedBy(kind: string, namespace: string, name: string): Iterable<SlimPod>;
  /**
   * Per node, how many of the owner's pods are bound there holding a seat (not terminating,
   * not finished): what `podsOwnedBy` would count, kept as pods change, read without a walk.
   */
  seatedPodsPerNode(kind: string, namespace: string, name: string): ReadonlyMap<string, number>;
  /** Pods bound to a node. */
  podsOnNode(node: string): Iterable<SlimPod>;
  /** What the pods bound to a node request, summed (finished pods do not count). */
  nodeUsage(node: string): NodeUsage;
  /** Nodes whose `topologyKey` label is `zone`. */
  nodesInZone(topologyKey: string, zone: string): readonly SlimNode[];
  pvc(namespace: string, name: string): SlimPVC | undefined;
  pv(name: string): SlimPV | undefined;
  /** How many PVs the cache holds: what work over a workload's possible claims is bounded by. */
  pvCount(): number;
  /** The PV whose claimRef names this PVC (pre-bound volumes show here before the PVC does). */
  pvForClaim(namespace: string, name: string): SlimPV | undefined;
  storageClass(name: string): SlimStorageClass | undefined;
  storageClasses(): Iterable<SlimStorageClass>;
  /** The names of a namespace's claims the cache knows: its PVCs, and those PVs are pre-bound to (claimRef) that have none yet. */
  claimNamesIn(namespace: string): Iterable<string>;
  workload(kind: WorkloadKind, namespace: string, name: string): SlimWorkload | undefined;
  /** Every cached StatefulSet, ReplicaSet and Deployment. */
  allWorkloads(): Iterable<SlimWorkload>;
  /** Workloads whose controller owner is kind/namespace/name (the ReplicaSets of a Deployment). */
  ownedWorkloads(kind: string, namespace: string, name: string): Iterable<SlimWorkload>;
  workloadSpreads(namespace: string): Iterable<SlimWorkloadSpread>;
  allWorkloadSpreads(): Iterable<SlimWorkloadSpread>;
}

export interface NodeUsage { cpuMilli: number; memory: number; pods: number }

export type PodListener = (type: 'upsert' | 'delete', pod: SlimPod) => void;
