import { workloadKindSpec } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload, SlimWorkloadSpread } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { placementList } from './fleet.js';
import { optedIn } from './instanceIds.js';
import { DEFAULT_PREFERENCES, preferencesOf, sequencePreferences, type ParsedPreferences, type ZonePreferencesSpec } from './preferences.js';
import type { Reservation, ReservationView } from './reservations.js';
import type { PlacementSettings, PolicyName } from './verdict.js';
import { findWorkloadSpread } from './workloadSpread.js';
import { optedOut, resolveWorkload, workloadKey, workloadPods, workloadPodsPerNode, type WorkloadRef } from './workload.js';
import { EQUAL_WEIGHTS, type ZonePreferences } from './zoneSequence.js';
import { zoneOf } from '../cluster/objects.js';
import { zoneListOf, type ZoneList } from './zones.js';

// The workload as every decision sees it, built once (per pod for filter and prioritize, per
// workload for the picker, deletion costs and the debug views), as PodTopologySpread builds
// its PreFilter state once per pod. Policies read it; none of them resolves owners, parses
// preferences, reads seats or picks the zone list on its own.

/** Where a pod sits in its workload's zone sequence, and how to say so. */
export interface SeatIndex {
  /** -1 when it cannot be read (or the workload has no seats). */
  index: number;
  /** "ordinal 4", "ordinal 7 (index 2)", "instance ID 3" */
  label: string;
  /** Why the index could not be read, when it could not. */
  missing: string;
}

/** How a workload's pods are numbered: StatefulSet ordinals, instance IDs, or not at all. */
export type SeatKind = 'ordinal' | 'instance-id' | 'none';

export interface Preferences {
  /** The zone-preferences annotation as parsed; undefined when there is none. */
  parsed: ParsedPreferences | undefined;
  /** What decisions use: the annotation's, or the defaults (every zone weight 1) when absent or invalid. */
  spec: ZonePreferencesSpec;
  /** The same as the sequence reads it. */
  sequence: ZonePreferences;
}

/** Where a model finds lists being frozen, and (for the one placement about to freeze) the fleet's first seats. */
export interface ZoneListDeps {
  pendingFreeze?: (workloadKey: string) => string[] | undefined;
  firstSeats?: () => ReadonlyMap<string, number>;
}

interface Base {
  ref: WorkloadRef;
  key: string;
  /** Undefined for kinds zonekeeper does not cache (CloneSet, Job) or not cached yet. */
  workload: SlimWorkload | undefined;
  preferences: Preferences;
  seats: SeatKind;
  seat(pod: SlimPod): SeatIndex;
  /** The zone list L, as placement reads it (computed on first use). */
  zones(): ZoneList;
  /** Pods holding a seat: not terminating, not finished. */
  pods(): Iterable<SlimPod>;
  /** The bound ones counted by node, less the pod `exclude` (a UID). */
  podsPerNode(exclude: string): ReadonlyMap<string, number>;
}

export type WorkloadModel =
  | (Base & { policy: 'none'; why: string })
  /** The policy may live on an owner the cache does not show yet: wait rather than guess. */
  | (Base & { policy: 'wait'; governs: PolicyName; why: string })
  | (Base & { policy: 'zone-pin'; workload: SlimWorkload })
  | (Base & { policy: 'zone-balance'; workload: SlimWorkload })
  | (Base & { policy: 'workloadspread'; ws: SlimWorkloadSpread });

const NO_SEAT: SeatIndex = { index: -1, label: 'no seat', missing: 'the workload has no ordinals or instance IDs' };

function seatKindOf(ref: WorkloadRef, workload: SlimWorkload | undefined): SeatKind {
  const spec = workloadKindSpec(ref.kind);
  if (spec?.ordinals) return 'ordinal';
  return spec && optedIn(workload) ? 'instance-id' : 'none';
}

function seatReader(seats: SeatKind, workload: SlimWorkload | undefined): (pod: SlimPod) => SeatIndex {
  if (seats === 'instance-id') {
    return (pod) => ({ index: pod.instanceId, label: `instance ID ${pod.instanceId}`, missing: `zone pin: pod ${pod.name} has no instance ID yet` });
  }
  if (seats === 'none' || !workload) return () => NO_SEAT;
  const start = workload.ordinalsStart;
  return (pod) => {
    const index = pod.ordinal < 0 ? -1 : pod.ordinal - start;
    return {
      index,
      label: `ordinal ${pod.ordinal}${start ? ` (index ${index})` : ''}`,
      missing: `zone pin: cannot read an ordinal ≥ ${start} from pod ${pod.name}`,
    };
  };
}

function preferencesOfWorkload(workload: SlimWorkload | undefined): Preferences {
  const parsed = preferencesOf(workload);
  return parsed?.ok
    ? { parsed, spec: parsed.spec, sequence: sequencePreferences(parsed.spec) }
    : { parsed, spec: DEFAULT_PREFERENCES, sequence: EQUAL_WEIGHTS };
}

/**
 * Which policy covers a workload. Precedence (design §3): a WorkloadSpread decides when one
 * targets the workload; else ordinals or instance IDs pin a zone; else zone preferences
 * balance the zones.
 */
function policyOf(ref: WorkloadRef, seats: SeatKind, prefs: Preferences, ws: SlimWorkloadSpread | undefined, settings: PlacementSettings): PolicyName {
  if (ws) return 'workloadspread';
  if (seats === 'ordinal') return settings.manageStatefulSets ? 'zone-pin' : 'none';
  if (!workloadKindSpec(ref.kind)) return 'none';
  if (seats === 'instance-id') return 'zone-pin';
  return prefs.parsed ? 'zone-balance' : 'none';
}

/**
 * The model of a workload: `replicaSet` is the pod's ReplicaSet when a WorkloadSpread may
 * target it rather than its Deployment; `lists` where lists being frozen are found.
 */
export function workloadModel(
  ref: WorkloadRef, workload: SlimWorkload | undefined, snapshot: Snapshot, settings: PlacementSettings,
  lists: ZoneListDeps = {}, replicaSet?: string,
): Exclude<WorkloadModel, { policy: 'wait' }> {
  const key = workloadKey(ref);
  const preferences = preferencesOfWorkload(workload);
  const seats = seatKindOf(ref, workload);
  const ws = findWorkloadSpread(snapshot, ref, replicaSet ?? (ref.kind === 'ReplicaSet' ? ref.name : undefined));
  const policy = policyOf(ref, seats, preferences, ws, settings);
  let list: ZoneList | undefined;
  const base: Base = {
    ref, key, workload, preferences, seats, seat: seatReader(seats, workload),
    // Only a pin freezes its list; every other policy reads the derived list in the fleet's
    // stable (hash) order, so the filter, the picker and the debug view agree.
    zones: () => (list ??= placementList(
      zoneListOf(workload, snapshot, settings.topologyKey, lists.pendingFreeze?.(key)), key,
      policy === 'zone-pin' ? settings : { ...settings, freezeZones: false },
      policy === 'zone-pin' ? lists.firstSeats : undefined,
    )),
    pods: () => workloadPods(ref, snapshot),
    podsPerNode: (exclude) => workloadPodsPerNode(ref, snapshot, exclude),
  };
  if (ws) return { ...base, policy: 'workloadspread', ws };
  if (policy === 'none' || !workload) {
    return { ...base, policy: 'none', why: `not managed: no policy covers ${ref.kind} ${ref.namespace}/${ref.name}` };
  }
  return policy === 'zone-pin' ? { ...base, policy, workload } : { ...base, policy: 'zone-balance', workload };
}

/** The model a pod is placed by; undefined for a pod without a controller owner. */
export function podModel(pod: SlimPod, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}): WorkloadModel | undefined {
  const resolved = resolveWorkload(pod, snapshot);
  if (!resolved) return undefined;
  const replicaSet = pod.owner?.kind === 'ReplicaSet' ? pod.owner.name : undefined;
  const model = workloadModel(resolved.ref, resolved.object, snapshot, settings, lists, replicaSet);
  if (optedOut(pod, resolved.object)) return { ...model, policy: 'none', why: 'not managed: zonekeeper.io/ignore is "true"' };
  if (resolved.missing) {
    // The policy the workload would have, were it cached (a StatefulSet's pin, say).
    const governs = policyOf(resolved.ref, model.seats, model.preferences, model.policy === 'workloadspread' ? model.ws : undefined, settings);
    return { ...model, policy: 'wait', governs, why: resolved.missing };
  }
  return model;
}

export type PinModel = Extract<WorkloadModel, { policy: 'zone-pin' }>;
export type BalanceModel = Extract<WorkloadModel, { policy: 'zone-balance' }>;
export type SpreadModel = Extract<WorkloadModel, { policy: 'workloadspread' }>;

/** Reservations of the workload's pods that the watch does not show bound yet; `exclude` is the pod being placed. */
export function unboundReservations(model: Pick<Base, 'key'>, reservations: ReservationView, snapshot: Snapshot, exclude = ''): Reservation[] {
  return reservations.forWorkload(model.key).filter((r) => r.uid !== exclude && !snapshot.podByUid(r.uid)?.nodeName);
}

export interface ZoneOccupancy { bound: number; reserved: number }

/** Seats taken per zone: bound pods and unbound reservations (zones outside the list too); `exclude` is the pod being placed. */
export function zoneOccupancy(model: WorkloadModel, topologyKey: string, snapshot: Snapshot, reservations: ReservationView, exclude = ''): Map<string, ZoneOccupancy> {
  const out = new Map<string, ZoneOccupancy>();
  const at = (zone: string) => out.get(zone) ?? out.set(zone, { bound: 0, reserved: 0 }).get(zone)!;
  for (const [name, n] of model.podsPerNode(exclude)) {
    const node = snapshot.node(name);
    const zone = node && zoneOf(node, topologyKey);
    if (zone !== undefined) at(zone).bound += n;
  }
  for (const r of unboundReservations(model, reservations, snapshot, exclude)) if (r.zone) at(r.zone).reserved++;
  return out;
}
