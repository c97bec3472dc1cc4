import { workloadKindSpec } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { ParsedPreferences, ZonePreferencesSpec } from '../cluster/zonePreferences.js';
import { optedIn } from './instanceAssignment.js';
import { DEFAULT_PREFERENCES, sequencePreferences } from './preferences.js';
import type { WorkloadRef } from './workload.js';
import type { ZoneList } from './zones.js';
import { EQUAL_WEIGHTS, type ZonePreferences } from './zoneSequence.js';

// What every policy reads of a workload, whatever policy covers it: the parts of the
// workload model (model.ts) that are not the policy's own.

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

export interface WorkloadFacts {
  ref: WorkloadRef;
  key: string;
  /** Undefined for kinds zonekeeper does not cache (a Job, a DaemonSet) or not cached yet. */
  workload: SlimWorkload | undefined;
  preferences: Preferences;
  seats: SeatKind;
  seat(pod: SlimPod): SeatIndex;
  /** The zone list L, as placement reads it (computed on first use). */
  zones(): ZoneList;
  /** Pods holding a seat: not terminating, not finished. */
  pods(): readonly SlimPod[];
  /** The bound ones counted by node, less the pod `exclude` (a UID). */
  podsPerNode(exclude: string): ReadonlyMap<string, number>;
}

const NO_SEAT: SeatIndex = { index: -1, label: 'no seat', missing: 'the workload has no ordinals or instance IDs' };

export function seatKindOf(ref: WorkloadRef, workload: SlimWorkload | undefined): SeatKind {
  const spec = workloadKindSpec(ref.kind);
  if (spec?.ordinals) return 'ordinal';
  return spec && optedIn(workload) ? 'instance-id' : 'none';
}

// Seats are read for every pod of a workload (health, scale-down, layouts): the words are
// built only when a reason or a view asks for them.
class InstanceIdSeat implements SeatIndex {
  constructor(private readonly pod: SlimPod) {}
  get index() { return this.pod.instanceId; }
  get label() { return `instance ID ${this.pod.instanceId}`; }
  get missing() { return `zone pin: pod ${this.pod.name} has no instance ID yet`; }
}

class OrdinalSeat implements SeatIndex {
  readonly index: number;
  constructor(private readonly pod: SlimPod, private readonly start: number) {
    this.index = pod.ordinal < 0 ? -1 : pod.ordinal - start;
  }

  get label() { return `ordinal ${this.pod.ordinal}${this.start ? ` (index ${this.index})` : ''}`; }
  get missing() { return `zone pin: cannot read an ordinal ≥ ${this.start} from pod ${this.pod.name}`; }
}

export function seatReader(seats: SeatKind, workload: SlimWorkload | undefined): (pod: SlimPod) => SeatIndex {
  if (seats === 'instance-id') return (pod) => new InstanceIdSeat(pod);
  if (seats === 'none' || !workload) return () => NO_SEAT;
  const start = workload.ordinalsStart;
  return (pod) => new OrdinalSeat(pod, start);
}

export function preferencesOfWorkload(workload: SlimWorkload | undefined): Preferences {
  const parsed = workload?.zonePreferences;
  return parsed?.ok
    ? { parsed, spec: parsed.spec, sequence: sequencePreferences(parsed.spec) }
    : { parsed, spec: DEFAULT_PREFERENCES, sequence: EQUAL_WEIGHTS };
}
