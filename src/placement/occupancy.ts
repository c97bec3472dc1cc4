import { zoneOf } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { Reservation, ReservationView } from './reservations.js';
import type { WorkloadFacts } from './workloadFacts.js';

/** Reservations of the workload's pods that the watch does not show bound yet; `exclude` is the pod being placed. */
export function unboundReservations(model: Pick<WorkloadFacts, 'key'>, reservations: ReservationView, snapshot: Snapshot, exclude = ''): Reservation[] {
  return reservations.forWorkload(model.key).filter((r) => r.uid !== exclude && !snapshot.podByUid(r.uid)?.nodeName);
}

export interface ZoneOccupancy { bound: number; reserved: number }

/** Seats taken per zone: bound pods and unbound reservations (zones outside the list too); `exclude` is the pod being placed. */
export function zoneOccupancy(model: WorkloadFacts, topologyKey: string, snapshot: Snapshot, reservations: ReservationView, exclude = ''): Map<string, ZoneOccupancy> {
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
