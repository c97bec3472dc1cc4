// The annotations and labels zonekeeper reads and writes: their names, in one place.

export const ANNOTATION = {
  zones: 'zonekeeper.io/zones',
  /** When the zone list was frozen (RFC 3339): pods older than it were placed before zonekeeper. */
  zonesFrozenAt: 'zonekeeper.io/zones-frozen-at',
  topologyKey: 'zonekeeper.io/topology-key',
  ignore: 'zonekeeper.io/ignore',
  /** "true": repair may move this workload's pods back to their zones (docs/design.md#repair). */
  rebalance: 'zonekeeper.io/rebalance',
  zonePreferences: 'zonekeeper.io/zone-preferences',
  /** Opt-in: how many of a zone's seats voluntary disruptions may take at once ("zone", a count, a percentage; docs/design.md#zone-at-a-time). */
  zoneDisruptionBudget: 'zonekeeper.io/zone-disruption-budget',
  /**
   * "AlwaysAllow": a pod already down may be evicted whatever other zones' state, as a PodDisruptionBudget's
   * unhealthyPodEvictionPolicy; "IfHealthyBudget" (the default): only while no other zone is down.
   */
  unhealthyPodEvictionPolicy: 'zonekeeper.io/unhealthy-pod-eviction-policy',
  /** The eviction gate's approvals on the workload (JSON): its conditional record, as a PDB's status.disruptedPods. */
  disruptionApprovals: 'zonekeeper.io/disruption-approvals',
  /** "true": the Lease holder replaces an OnDelete StatefulSet's old-revision pods a zone at a time (docs/design.md#zone-by-zone-rollouts). */
  zoneRollout: 'zonekeeper.io/zone-rollout',
  /** A rollout's per-zone maxUnavailable: "zone", a count or a percentage. */
  zoneRolloutMaxUnavailable: 'zonekeeper.io/zone-rollout-max-unavailable',
  /** How batches grow within a zone: 1, f, f², … (0: fixed batches of maxUnavailable). */
  zoneRolloutBatchGrowth: 'zonekeeper.io/zone-rollout-batch-growth',
  /** Seconds a replaced pod has to become Ready before the rollout pauses. */
  zoneRolloutProgressDeadline: 'zonekeeper.io/zone-rollout-progress-deadline-seconds',
  /** Set: the rollout is paused (zonekeeper's record of a missed deadline, or any value a user writes); removed: it resumes. */
  zoneRolloutPaused: 'zonekeeper.io/zone-rollout-paused',
  instanceIds: 'zonekeeper.io/instance-ids',
  deletionCost: 'controller.kubernetes.io/pod-deletion-cost',
  instanceAssignment: 'zonekeeper.io/instance-assignment',
  instanceId: 'zonekeeper.io/instance-id',
  instanceCount: 'zonekeeper.io/instance-count',
  kruiseMatched: 'apps.kruise.io/matched-workloadspread',
  /** On a pod the zone gate decided after its creation: the fields of its subset's `patch` it could not write. */
  subsetPatchNotApplied: 'zonekeeper.io/subset-patch-not-applied',
  /** A WorkloadSpread's "true": Kruise does not copy its subsets' patch metadata onto the pods it adopts. */
  kruiseIgnorePatchExisting: 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata',
  /** A ReplicaSet's sequence number among its Deployment's pod templates: the highest is the current one. */
  deploymentRevision: 'deployment.kubernetes.io/revision',
} as const;

/** The scheduling gate that holds a pod until zonekeeper has written its zone into its spec (docs/design.md#the-zone-gate). */
export const ZONE_GATE = 'zonekeeper.io/zone';

export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** A StatefulSet's (and an Advanced StatefulSet's) pod: the revision of the template it was made from. */
export const REVISION_LABEL = 'controller-revision-hash';
/**
 * "policy": the MutatingAdmissionPolicy wrote the pod's zone from the seat table
 * (docs/design.md#the-policy). A label, so the webhook's objectSelector skips the pod before any CEL.
 */
export const DECIDED_BY_LABEL = 'zonekeeper.io/decided-by';
/** The generation of the seat table the policy read for the pod (seatTable.ts GENERATION_KEY). */
export const SEAT_TABLE_LABEL = 'zonekeeper.io/seat-table';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** The zone labels a node or PV may carry, current first: a PV's legacy labels name its zones. */
export const ZONE_LABELS = [ZONE_LABEL, 'failure-domain.beta.kubernetes.io/zone'] as const;
