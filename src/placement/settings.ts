import type { GrowInto } from './zoneReach.js';

/** The placement options of zonekeeper.yaml that decisions read (docs/reference.md#configuration). */
export interface PlacementSettings {
  topologyKey: string;
  /** Pin StatefulSet ordinals to zones. */
  manageStatefulSets: boolean;
  /** Write the derived zone list onto the workload on first placement. */
  freezeZones: boolean;
  /** Start a derived list at the zone that starts the fewest frozen lists, not always at the first. */
  fleetBalance: boolean;
  zoneFallback: 'strict' | 'adaptive';
  fallbackAfterSeconds: number;
  /** A pod no WorkloadSpread subset can take: `admit` it without a subset (OpenKruise's way, the default) or `wait` for room. */
  podsBeyondSubsets?: 'admit' | 'wait';
  /** How long an Adaptive WorkloadSpread skips a subset that had no feasible node. */
  adaptiveUnschedulableSeconds: number;
  /** A derived list keeps the seats already placed where they are (adoption.ts). */
  adoptExisting: boolean;
  /** A managed pod is passed only the allowed nodes holding the fewest pods of its workload (then its subset's most preferred). */
  spreadNodes: boolean;
  /** Zones without a node a pod fits: `auto` the cluster's where a Cluster Autoscaler runs, `cluster` always, `nodePools` Karpenter's (zoneReach.ts). */
  growInto?: GrowInto;
  /** Zones the cluster has beside those of its nodes. */
  clusterZones?: readonly string[];
}
