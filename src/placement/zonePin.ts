import type { SlimWorkload } from '../cluster/objects.js';
import type { PolicyContext, PolicyOutcome } from './verdict.js';
import { sequencePreferences, type ZonePreferencesSpec } from './preferences.js';
import { volumeZones, type VolumeConstraint } from './volumes.js';
import { workloadKey, type WorkloadRef } from './workload.js';
import { placementList } from './fleet.js';
import { seatZone } from './zoneSequence.js';
import { zoneListOf, zoneOf } from './zones.js';

/** Index of a pod in its workload's zone sequence: ordinal − spec.ordinals.start. */
export function sequenceIndex(ordinal: number, workload: SlimWorkload): number {
  return ordinal < 0 ? -1 : ordinal - workload.ordinalsStart;
}

/** Where a pod sits in its workload's zone sequence, and how to say so. */
export interface SeatIndex {
  /** -1 when it cannot be read. */
  index: number;
  /** "ordinal 4", "ordinal 7 (index 2)", "instance ID 3" */
  label: string;
  /** Why the index could not be read, when it could not. */
  missing: string;
}

export function ordinalSeat(ordinal: number, workload: SlimWorkload, pod: string): SeatIndex {
  const index = sequenceIndex(ordinal, workload);
  return {
    index,
    label: `ordinal ${ordinal}${workload.ordinalsStart ? ` (index ${index})` : ''}`,
    missing: `zone pin: cannot read an ordinal ≥ ${workload.ordinalsStart} from pod ${pod}`,
  };
}

export function instanceSeat(id: number, pod: string): SeatIndex {
  return { index: id, label: `instance ID ${id}`, missing: `zone pin: pod ${pod} has no instance ID yet` };
}

/**
 * StatefulSet ordinal or instance ID → zone (DESIGN §3.2, §4, §6). A bound volume in
 * another zone wins over the pin, and the conflict is reported.
 */
export function zonePin(
  ctx: PolicyContext, ref: WorkloadRef, workload: SlimWorkload, volumes: VolumeConstraint[],
  seat: SeatIndex, preferences: ZonePreferencesSpec | undefined,
): PolicyOutcome {
  const { input, snapshot } = ctx;
  const { settings } = input;
  const key = workloadKey(ref);
  // A list derived now is about to be frozen: it starts where the fleet needs a first seat.
  const list = placementList(zoneListOf(workload, snapshot, settings.topologyKey, input.pendingFreeze(key)), key, settings, input.firstSeats);
  const freeze = list.source === 'nodes' && settings.freezeZones && list.zones.length > 0
    ? { workload, zones: list.zones } : undefined;
  if (list.zones.length === 0) {
    return { summary: `no node has label ${list.topologyKey}: nothing to pin to` };
  }
  const { index } = seat;
  if (index < 0) return { summary: seat.missing, waitAll: { rule: 'zone-pin', reason: seat.missing, unresolvable: true } };
  const pinnedSeat = seatZone(list.zones, index, sequencePreferences(preferences));
  if (pinnedSeat.zone === undefined) {
    const reason = `zone pin: ${seat.label}: ${pinnedSeat.reason}`;
    return { summary: reason, waitAll: { rule: 'zone-pin', reason, unresolvable: true } };
  }
  let zone = pinnedSeat.zone;
  // Short: the scheduler sends this once per rejected node, thousands of times per answer.
  const of = `${seat.label} of ${list.zones.length} zones`;
  let summary = `pinned to ${zone}: ${of}`;

  if (volumes.length > 0) {
    const vz = volumeZones(volumes, snapshot, list.topologyKey);
    if (!vz.has(zone)) {
      const where = [...vz].sort();
      const reason = `${volumes.map((v) => v.describe).join('; ')}: volume wins over the pin to ${zone} (${of})`;
      return {
        summary: reason, freeze,
        conflict: { pinnedZone: zone, volumeZones: where, reason },
        reserve: where.length === 1 ? { zone: where[0] } : undefined,
        zone: where.length === 1 ? where[0] : undefined,
      };
    }
  }

  // zoneFallback: adaptive lets a pin fall through to the next zone of the list once the
  // pod has waited long enough, never for pods with bound volumes (DESIGN §3).
  const feasibleIn = (z: string) => ctx.feasible.some((n) => zoneOf(n, list.topologyKey) === z);
  const fallback = settings.zoneFallback === 'adaptive' && !ctx.boundVolume && !feasibleIn(zone);
  const waited = input.waitingSince === undefined ? 0 : input.now - input.waitingSince;
  let retryAfterMs: number | undefined;
  if (fallback && waited < settings.fallbackAfterSeconds * 1000) retryAfterMs = settings.fallbackAfterSeconds * 1000 - waited;
  else if (fallback) {
    const start = list.zones.indexOf(zone);
    for (let step = 1; step < list.zones.length; step++) {
      const next = list.zones[(start + step) % list.zones.length]!;
      if (feasibleIn(next)) {
        summary = `fell through from ${zone} to ${next} after ${settings.fallbackAfterSeconds}s without a feasible node (${of})`;
        zone = next;
        break;
      }
    }
  }
  const pinned = zone;
  // One object for every rejected node: callers group and encode by identity.
  const rejection = { rule: 'zone-pin' as const, reason: summary, unresolvable: true };
  return {
    summary, freeze, zone: pinned, retryAfterMs,
    reserve: { zone: pinned },
    admits: (node) => (zoneOf(node, list.topologyKey) === pinned ? undefined : rejection),
  };
}
