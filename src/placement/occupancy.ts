import { zoneOf } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { Reservation, ReservationView } from './reservations.js';
import type { WorkloadFacts } from './workloadFacts.js';

/** Reservations of the workload's pods that the watch does not show bound yet; `exclude` is the pod being placed. */
export function unboundReservations(model: Pick<WorkloadFacts, 'key'>, reservations: ReservationView, snapshot: Snapshot, exclude = ''): Reservation[] {
  return reservations.forWorkload(model.key).filter((r) => r.uid !== exclude && !snapshot.podByUid(r.uid)?.nodeName);
}

export interface ZoneOccupancy { bound: number; reserved: number }

/**
 * Seats taken per zone: bound pods, unbound reservations and unbound pods whose spec names their
 * zone (zones outside the list too); `exclude` is the pod being placed.
 */
export function zoneOccupancy(model: WorkloadFacts, topologyKey: string, snapshot: Snapshot, reservations: ReservationView, exclude = ''): Map<string, ZoneOccupancy> {
  const out = new Map<string, ZoneOccupancy>();
  const at = (zone: string) => out.get(zone) ?? out.set(zone, { bound: 0, reserved: 0 }).get(zone)!;
  for (const [name, n] of model.podsPerNode(exclude)) {
    const node = snapshot.node(name);
    const zone = node && zoneOf(node, topologyKey);
    if (zone !== undefined) at(zone).bound += n;
  }
  const reserved = new Set<string>();
  for (const r of unboundReservations(model, reservations, snapshot, exclude)) {
    reserved.add(r.uid);
    if (r.zone) at(r.zone).reserved++;
  }
  // An unbound pod whose spec names its zone (the zone gate wrote it) holds that seat until it binds.
  for (const p of model.pods()) {
    const zone = p.nodeName || p.uid === exclude || reserved.has(p.uid) ? undefined : p.selection?.nodeSelector[topologyKey];
    if (zone !== undefined) at(zone).reserved++;
  }
  return out;
}
