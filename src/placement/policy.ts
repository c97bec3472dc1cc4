import type { PendingPod, SlimNode, SlimPod, SlimWorkload, SlimWorkloadSpread, WorkloadSpreadSubset } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { PendingFreezes } from './fleet.js';
import type { CannotGrow, HealthBase, WorkloadHealth } from './healthRecord.js';
import type { ReservationView } from './reservations.js';
import type { PlacementSettings } from './settings.js';
import type { Shrinking } from './shrinking.js';
import type { VolumeConstraint } from './volumes.js';
import type { Preferences, SeatKind, WorkloadFacts } from './workloadFacts.js';
import type { WorkloadRef } from './workload.js';

// The contract every placement policy implements (one folder each under policies/, one
// registry in policies/index.ts), and the plain data a decision is made on.

/** Why a node was rejected; every reason names its rule: 'cache', 'volume' or a policy's name. */
export interface Rejection {
  rule: string;
  /** Short: sent once per rejected node, thousands of times in one answer. */
  reason: string;
  /** Hard constraints: the scheduler must not preempt for them (FailedAndUnresolvableNodes). */
  unresolvable: boolean;
  /** The names are only as the request sent them (no node known): the encoder escapes them. */
  unknownNames?: boolean;
}

/** The nodes a request names, as parallel arrays (one object per node cost a share of a 5,000-name request). */
export interface Candidates {
  names: readonly string[];
  /** `nodes[i]` is `names[i]`'s node: from the request's Node objects, else from the cache; undefined when neither has it. */
  nodes: readonly (SlimNode | undefined)[];
  /** `names[i]`'s slot in the cache (-1: none), when the nodes are the cache's: zone codes are read by it. */
  slots?: Int32Array;
  /**
   * What decisions derive from these candidates, kept by whoever made them for as long as they
   * live (the gate's and admission's set: until a node changes). Absent: derived per decision.
   */
  memo?: Map<string, unknown>;
}

/** Candidates from names, with their nodes from the cache. */
export function candidatesNamed(names: readonly string[], snapshot: Pick<Snapshot, 'resolveNodes' | 'nodeAt'>): Candidates {
  const slots = snapshot.resolveNodes(names);
  const nodes = new Array<SlimNode | undefined>(names.length);
  // Built before the loop (docs/performance.md#why-the-code-is-shaped-this-way).
  const out: Candidates = { names, nodes, slots };
  for (let i = 0; i < names.length; i++) nodes[i] = snapshot.nodeAt(slots[i]!);
  return out;
}

/** What decisions remember between requests, as read-only views: the decision core keeps it (decision/placementState.ts). */
export interface DecisionState {
  settings: PlacementSettings;
  reservations: ReservationView;
  /** Zone lists being frozen onto workloads that the watch does not show yet. */
  pendingFreezes: PendingFreezes;
  /** Adaptive WorkloadSpread subsets marked unschedulable: until when (ms), by subsetKey. */
  unschedulableSubsets: { get(subsetKey: string): number | undefined };
  /**
   * Zones where a gated pod of a seat was not scheduled in time under zoneFallback: adaptive,
   * by `failedPinKey` (docs/design.md#the-zone-gate): the seat's next pod goes to the next zone.
   */
  failedPins?: { get(key: string): ReadonlySet<string> | undefined };
}

/** A seat of a workload, as failedPins knows it. */
export const failedPinKey = (workloadKey: string, seat: number) => `${workloadKey}#${seat}`;

/** One pod's placement, as plain data built after any awaited I/O: the policies read only this. */
export interface PlacementInput extends DecisionState {
  pod: PendingPod;
  candidates: Candidates;
  snapshot: Snapshot;
  now: number;
  /** First time (ms) this pod's filter passed no node; fallbacks count from it. */
  waitingSince: number | undefined;
  /**
   * The decision is written into the pod's spec (the gate), where autoscalers read it: a zone the
   * pod can grow into is as good a choice as one with room (zone balance offers it).
   */
  writesSpec?: boolean;
}

/** Side effects a verdict asks for; the decision core carries them out (decision/placementState.ts), whichever transport asked. */
export interface Effects {
  reserve?: { zone?: string; subset?: string };
  freeze?: { workload: SlimWorkload; zones: string[]; adopted?: { agree: number; seats: number } };
  conflict?: { pinnedZone: string; volumeZones: string[]; reason: string };
  markUnschedulable?: { key: string; until: number };
  /** The workload's zone-preferences annotation is invalid: defaults were used. */
  preferencesError?: { workload: string; error: string };
}

/** What one policy decides for the pod. */
export interface PolicyOutcome {
  summary: string;
  /** What the decision core must carry out; nothing else in the outcome is an effect. */
  effects: Effects;
  /** Per node: a rejection, or undefined when the node is allowed. Absent: every node is (or `admitsZone` says). */
  admits?: (node: SlimNode) => Rejection | undefined;
  /** A rule that reads nothing but the node's `topologyKey` label, instead of `admits`: asked once per zone over the cache's zone codes. */
  admitsZone?: { topologyKey: string; admits: (zone: string | undefined) => Rejection | undefined };
  /** Every node waits for this reason (the policy cannot decide yet, or nothing has room). */
  waitAll?: Rejection;
  subset?: { ws: SlimWorkloadSpread; subset: WorkloadSpreadSubset };
  zone?: string;
  /**
   * The verdict changes by itself after this long (a wait measured in time, not in cluster
   * events): kube-scheduler parks a pod no node fits for minutes, so it is answered as an error.
   */
  retryAfterMs?: number;
}

/** What a policy needs beyond its model: the shared inputs of one filter call. */
export interface PolicyContext {
  input: PlacementInput;
  snapshot: Snapshot;
  /** Whether a candidate that exists in the cache, fits the pod and its volumes allow passes `test`: stops at the first. */
  someFeasible(test: (node: SlimNode) => boolean): boolean;
  /** Of `zones`, those with such a candidate: stops once every one has one (a pass over every node only when some zone has none). */
  feasibleZones(topologyKey: string, zones: readonly string[]): Set<string>;
  boundVolume: boolean;
  /** The pod's volume constraints (bound PVs and WaitForFirstConsumer classes). */
  volumes: readonly VolumeConstraint[];
}

/** What the layout page says decided a pod's zone. */
export type DecidedBy = 'volume' | 'pin' | 'subset' | 'balance' | 'none';

/** What a policy may read to decide whether it covers a workload. */
export interface CoverFacts {
  ref: WorkloadRef;
  workload: SlimWorkload | undefined;
  seats: SeatKind;
  preferences: Preferences;
  settings: PlacementSettings;
  snapshot: Snapshot;
  /** The pod's ReplicaSet, when a WorkloadSpread may target it rather than its Deployment. */
  replicaSet: string | undefined;
}

/** A policy's model: the facts every policy reads, its name, and what it adds. */
export type PolicyModelOf<Name extends string, Own extends object> = WorkloadFacts & { policy: Name } & Own;

/** One placement policy: all it decides, in one folder under policies/. */
export interface PlacementPolicy<Name extends string = string, Own extends object = object> {
  readonly name: Name;
  /** Its derived zone list is written onto the workload at the first placement. */
  readonly freezesZoneList: boolean;
  /** It pins each seat to a zone: an instance-ID workload's pods take their IDs before it places them. */
  readonly pinsSeats: boolean;
  /** Whether it covers the workload; the first policy of the registry that does decides. */
  covers(facts: CoverFacts): boolean;
  /** What it adds to the model of a workload it covers; undefined: not managed after all. */
  own(facts: CoverFacts): Own | undefined;
  /** Filter: where the pod may go. */
  filter(ctx: PolicyContext, model: PolicyModelOf<Name, Own>): PolicyOutcome;
  /** Scale-down order; absent: zone targets from the sequence (shrinking.ts). */
  shrinking?(model: PolicyModelOf<Name, Own>, snapshot: Snapshot, remaining: Map<string, SlimPod>): Shrinking;
  /** Deletion costs for the native controller; absent: each pod's rank in the picker's order. */
  deletionCosts?(model: PolicyModelOf<Name, Own>, pods: readonly SlimPod[], snapshot: Snapshot): Map<string, number>;
  /** The badge the layout page gives its pods. */
  decidedBy(model: PolicyModelOf<Name, Own>): DecidedBy;
  /** Its own part of /debug/workloads. */
  layout?(model: PolicyModelOf<Name, Own>, snapshot: Snapshot, state: DecisionState): Record<string, unknown>;
  /** Its own health judgement (docs/design.md#health); absent: zones and seats of the sequence. */
  health?(model: PolicyModelOf<Name, Own>, pods: readonly SlimPod[], snapshot: Snapshot, base: HealthBase,
    growth: { cannotGrow: CannotGrow[]; cannotGrowCount: number }): WorkloadHealth;
  /** Its own part of each pod on /debug/workloads (the subset a pod is in). */
  podLayout?(model: PolicyModelOf<Name, Own>, pod: SlimPod, snapshot: Snapshot): Record<string, unknown>;
}

/**
 * Reasons go out once per rejected node and into the decision log: a reason built from many
 * names (a pod with hundreds of missing claims) is cut, so answers stay within the cluster's size.
 */
export const REASON_MAX = 512;

export function clipReason(text: string, max = REASON_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max - 25)}… (${text.length - max + 25} more)`;
}
