import type { WorkloadRef } from './workload.js';

// A workload's health as plain data (docs/design.md#health): the record every view reads and
// the step that turns counts per zone into it, shared by every policy.

/** Where a rollout stands: what health, /debug/rollouts and the metrics show. */
export interface RolloutView {
  revision: string;
  /** The zone being rolled, or next (undefined: not known yet). */
  zone: string | undefined;
  /** The zone's next batch: its number within the zone (1, 2, …; a batch under way counts as done) and its size. */
  step: number;
  batch: number;
  /** Pods on the update revision, and pods still on an older one. */
  replaced: number;
  remaining: number;
  paused: string | undefined;
  /** What the next batch waits for (at most a few, counted). */
  waitsFor: string[];
}

/** Why a pod is not where its seat is. */
export type OffPinCause = 'volume' | 'fallback' | 'placed-before' | 'unknown';
export const OFF_PIN_CAUSES: readonly OffPinCause[] = ['volume', 'fallback', 'placed-before', 'unknown'];

/**
 * What a record counts: pods off their seat by cause, and `no-eligible-node`, the seats of
 * listed zones where no node fits the workload's pods (they wait; docs/design.md#health).
 */
type HealthCause = OffPinCause | 'no-eligible-node' | 'cannot-grow';

/** A pending pod an autoscaler said it will not add a node for (docs/autoscalers.md). */
export interface CannotGrow { pod: string; zone: string | undefined; source: string; message: string }

/** Pods with an autoscaler's refusal a record lists; the rest are counted. */
export const CANNOT_GROW_LISTED = 10;

/** Off-pin pods a record lists; the rest are counted. */
const OFF_PIN_LISTED = 100;

/** One pod off its seat's zone (or in a zone over its share). */
export interface OffPinPod {
  pod: string;
  zone: string | undefined;
  /** Its seat's zone; undefined where the policy pins no seat (a zone over its share). */
  pinnedZone: string | undefined;
  cause: OffPinCause;
  /** A bound volume keeps it where it is: data does not move, so nothing ever moves it (docs/design.md#repair). */
  heldByVolume: boolean;
}

export interface WorkloadHealth {
  key: string;
  ref: WorkloadRef;
  policy: string;
  replicas: number;
  /** What `zones` counts: zones, or a WorkloadSpread's subsets. */
  domain: 'zone' | 'subset';
  /** Zones (subsets) the layout wants filled that hold a bound pod. */
  zones: number;
  /** Zones (subsets) the layout for `replicas` fills: min(replicas, |L|) for equal weights. */
  wanted: number;
  /** Per zone (subset): bound pods and the layout's count. */
  perZone: Record<string, { pods: number; want: number }>;
  offPin: number;
  causes: Record<HealthCause, number>;
  /** Zones of the list where no node fits the workload's pods and none can be added: never "empty", never a repair target. */
  unusableZones: string[];
  /** Zones a list zonekeeper froze leaves out that the pods could use or grow into (never rewritten by itself). */
  leftOutZones: string[];
  /** The first CANNOT_GROW_LISTED pending pods an autoscaler will not add a node for (`causes['cannot-grow']` counts all). */
  cannotGrow: CannotGrow[];
  /** The first OFF_PIN_LISTED of them. */
  offPinPods: OffPinPod[];
  /** Largest minus smallest count over the wanted zones. */
  skew: number;
  /** Pods not bound yet. */
  pending: number;
  /** Replicas without a pod yet (the controller has not created them). */
  missing: number;
  /** Pods that may still fill an empty zone: the missing ones and unbound ones younger than the settle time. */
  settling: number;
  /** The largest smaller size, reached by the workload's own removal order, that covers fewer zones than it should. */
  scaleDown: { replicas: number; zones: number; wanted: number } | undefined;
  atRisk: boolean;
  /** One line: what is wrong, or "ok". */
  reason: string;
  /** A zone-by-zone rollout under way or paused: its zone, step, and what it waits for. */
  rollout?: RolloutView;
  /** Opted in to the zone disruption budget (docs/design.md#the-zone-disruption-budget): zones with seats down and why, approvals recorded. */
  disruption?: DisruptionState;
}

/** A workload's disruptions as the eviction gate sees them. */
export interface DisruptionState {
  budget: string;
  /** The budget does not parse: every eviction of the workload is refused until it does. */
  error?: string;
  /** Zones with a seat down (a disruption under way), each with the first reasons; `unknown` for replicas in no known zone. */
  down: { zone: string; count: number; what: string[] }[];
  approvals: number;
}

/** The part of a health record a policy's own judgement starts from. */
export type HealthBase = Pick<WorkloadHealth, 'key' | 'ref' | 'policy' | 'replicas' | 'pending' | 'missing' | 'settling'>;

function describe(h: WorkloadHealth, shortfall: boolean, empty: string[]): string {
  const parts: string[] = [];
  const unit = h.domain === 'zone' ? 'zones' : 'subsets';
  if (shortfall) parts.push(`${h.zones} of ${h.wanted} ${unit} hold pods (${empty.slice(0, 5).join(', ')}${empty.length > 5 ? ', …' : ''} empty)`);
  if (h.scaleDown) parts.push(`at ${h.scaleDown.replicas} replicas it would keep ${h.scaleDown.zones} of ${h.scaleDown.wanted} zones`);
  if (h.offPin > 0) {
    const why = OFF_PIN_CAUSES.filter((c) => h.causes[c] > 0).map((c) => `${c} ${h.causes[c]}`).join(', ');
    parts.push(`${h.offPin} pod${h.offPin === 1 ? '' : 's'} off pin (${why})`);
  }
  if (h.unusableZones.length > 0) {
    const seats = h.causes['no-eligible-node'];
    const unblock = seats > 0 ? `: ${seats} seat${seats === 1 ? '' : 's'} wait; ${UNBLOCK}` : '';
    parts.push(`no node fits the pods in ${h.unusableZones.slice(0, 5).join(', ')}${h.unusableZones.length > 5 ? ', …' : ''} and none can be added (no-eligible-node${unblock})`);
  }
  if (h.leftOutZones.length > 0) {
    parts.push(`zonekeeper.io/zones was frozen without ${h.leftOutZones.slice(0, 5).join(', ')}${h.leftOutZones.length > 5 ? ', …' : ''}, which the pods can use or grow into (left-out: never rewritten by itself; add them, or remove the annotation to derive it again)`);
  }
  if (h.cannotGrow.length > 0) {
    const first = h.cannotGrow[0]!;
    const n = h.causes['cannot-grow'];
    parts.push(`no node can be added for ${n} pending pod${n === 1 ? '' : 's'} (cannot-grow: ${first.pod}${first.zone ? ` in ${first.zone}` : ''}, ${first.source}: ${first.message})`);
  }
  if (h.pending > 0) parts.push(`${h.pending} pending`);
  if (h.missing > 0) parts.push(`${h.missing} not created yet`);
  return parts.length > 0 ? parts.join('; ') : 'ok';
}

/** What places a seat waiting in a zone nothing can grow a node in. */
export const UNBLOCK = 'a node there they fit, an autoscaler that can add one, zonekeeper.io/zones without the zone, or zoneFallback: adaptive would place them';

const NO_GROWTH_FACTS = { leftOut: [], cannotGrow: [], cannotGrowCount: 0 };

/** Counts per domain turned into the health record: shared by every policy. */
export function judged(
  base: HealthBase, domain: WorkloadHealth['domain'], scaleDown: WorkloadHealth['scaleDown'],
  want: Record<string, number>, have: Map<string, number>, off: OffPinPod[], unusable: readonly string[] = [],
  growth: { leftOut: readonly string[]; cannotGrow: readonly CannotGrow[]; cannotGrowCount: number } = NO_GROWTH_FACTS,
): WorkloadHealth {
  const perZone: WorkloadHealth['perZone'] = {};
  const empty: string[] = [];
  let wanted = 0;
  let most = -Infinity;
  let least = Infinity;
  let waiting = 0;
  for (const z in want) {
    const pods = have.get(z) ?? 0;
    perZone[z] = { pods, want: want[z]! };
    if (want[z]! <= 0) continue;
    // A zone no node of which fits the pods is not one they could fill: its seats wait.
    if (unusable.includes(z)) {
      waiting += Math.max(0, want[z]! - pods);
      continue;
    }
    wanted++;
    if (pods === 0) empty.push(z);
    most = Math.max(most, pods);
    least = Math.min(least, pods);
  }
  const causes: Record<HealthCause, number> = { volume: 0, fallback: 0, 'placed-before': 0, unknown: 0, 'no-eligible-node': waiting, 'cannot-grow': growth.cannotGrowCount };
  for (const o of off) causes[o.cause]++;
  // Built field by field: object spread here cost more than the rest of the judgement.
  const h: WorkloadHealth = {
    key: base.key, ref: base.ref, policy: base.policy, replicas: base.replicas, domain,
    zones: wanted - empty.length, wanted, perZone,
    offPin: off.length, causes, unusableZones: [...unusable], leftOutZones: [...growth.leftOut], cannotGrow: [...growth.cannotGrow],
    offPinPods: off.length > OFF_PIN_LISTED ? off.slice(0, OFF_PIN_LISTED) : off,
    skew: wanted > 0 ? most - least : 0,
    pending: base.pending, missing: base.missing, settling: base.settling, scaleDown,
    // Pods still being placed may fill an empty zone: not a risk until they are older. A list
    // frozen short holds fewer zones than the replicas could: a risk whatever its counts say.
    // Seats in a zone nothing can grow a node in wait for good: a risk too.
    atRisk: empty.length > base.settling || scaleDown !== undefined || waiting > 0 || (growth.leftOut.length > 0 && base.replicas > Object.keys(want).length),
    reason: '',
  };
  h.reason = describe(h, empty.length > 0, empty);
  return h;
}
