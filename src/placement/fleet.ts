import { ANNOTATION } from '../cluster/annotations.js';
import { ownedThrough, type WorkloadKind } from '../cluster/kinds.js';
import type { Snapshot } from '../cluster/store.js';
import { fnv1a } from '../common/hash.js';
import type { PlacementSettings } from './settings.js';
import { parseZoneList, type ZoneList } from './zones.js';

// Fleet balance (docs/design.md#zone-list-zone-sequence-fleet-balance): if every derived zone
// list started at the same zone, every workload's first replica would land there. A list is
// rotated once, when it is derived for a workload that has none frozen yet.

/** A list being frozen that the cache may not show yet. */
export interface PendingList { namespace: string; kind: WorkloadKind; name: string; zones: string[] }

/** The lists being frozen right now, by workload key, as the actuator holds them (read only). */
export interface PendingFreezes {
  get(workloadKey: string): PendingList | undefined;
  values(): Iterable<PendingList>;
}

export const NO_PENDING_FREEZES: PendingFreezes = { get: () => undefined, values: () => [] };

/**
 * How many workloads' lists start at each zone: lists frozen on cached workloads (not the
 * ReplicaSets of Deployments, which carry copies of their Deployment's annotations) plus
 * lists being frozen now.
 */
export function firstSeatCounts(snapshot: Snapshot, pending: Iterable<PendingList>): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (zone: string | undefined) => { if (zone) counts.set(zone, (counts.get(zone) ?? 0) + 1); };
  for (const w of snapshot.allWorkloads()) {
    if (ownedThrough(w)) continue;
    const frozen = w.annotations[ANNOTATION.zones];
    if (frozen) add(parseZoneList(frozen)[0]);
  }
  for (const p of pending) {
    const cached = snapshot.workload(p.kind, p.namespace, p.name);
    if (!cached?.annotations[ANNOTATION.zones]) add(p.zones[0]);
  }
  return counts;
}

/**
 * The derived list in the fleet's order: rotated to start at the zone that starts the fewest
 * frozen lists (ties: the earlier zone). Without counts (lists not frozen, so no count could
 * stay stable) a stable hash of the workload picks the start.
 */
export function fleetOrder(zones: readonly string[], workloadKey: string, firstSeats: ReadonlyMap<string, number> | undefined): string[] {
  if (zones.length < 2) return [...zones];
  let start = 0;
  if (firstSeats) {
    for (let i = 1; i < zones.length; i++) if ((firstSeats.get(zones[i]!) ?? 0) < (firstSeats.get(zones[start]!) ?? 0)) start = i;
  } else start = fnv1a(workloadKey) % zones.length;
  return [...zones.slice(start), ...zones.slice(0, start)];
}

/**
 * The list a workload's pods are placed by, as every reader must see it: a frozen (or
 * freezing) list as it is; a derived one in the fleet's order. Counts are used only by the
 * placement that is about to freeze the list (they change as other lists freeze); with
 * freezing off, the stable hash, which every reader computes alike.
 */
export function placementList(
  derived: ZoneList, workloadKey: string, settings: Pick<PlacementSettings, 'fleetBalance' | 'freezeZones'>,
  firstSeats?: () => ReadonlyMap<string, number>,
): ZoneList {
  if (derived.source !== 'nodes' || !settings.fleetBalance) return derived;
  // With freezing on, a list no pod was placed by yet is not decided: readers see it as derived.
  if (settings.freezeZones) return firstSeats ? { ...derived, zones: fleetOrder(derived.zones, workloadKey, firstSeats()) } : derived;
  return { ...derived, zones: fleetOrder(derived.zones, workloadKey, undefined) };
}
