import { growthText } from '../../zoneReach.js';
import { zoneOf, type SlimWorkload } from '../../../cluster/objects.js';
import { failedPinKey, type PlacementPolicy, type PolicyContext, type PolicyModelOf, type PolicyOutcome } from '../../policy.js';
import { volumeZones } from '../../volumes.js';
import { seatZone } from '../../zoneSequence.js';

type PinModel = PolicyModelOf<'zone-pin', { workload: SlimWorkload }>;

/**
 * StatefulSet ordinal or instance ID → zone (docs/design.md#which-policy-places-a-pod). A bound volume in
 * another zone wins over the pin, and the conflict is reported.
 */
function zonePin(ctx: PolicyContext, model: PinModel): PolicyOutcome {
  const { input, snapshot, volumes } = ctx;
  const { settings } = input;
  // A list derived now is about to be frozen: it starts where the fleet needs a first seat.
  const list = model.zones();
  const freeze = list.source === 'nodes' && settings.freezeZones && list.zones.length > 0
    ? { workload: model.workload, zones: list.zones, adopted: list.adopted } : undefined;
  if (list.zones.length === 0) {
    return { summary: `no node has label ${list.topologyKey}: nothing to pin to`, effects: {} };
  }
  const seat = model.seat(input.pod);
  const { index } = seat;
  if (index < 0) return { summary: seat.missing, waitAll: { rule: 'zone-pin', reason: seat.missing, unresolvable: true }, effects: {} };
  const pinnedSeat = seatZone(list.zones, index, model.preferences.sequence);
  if (pinnedSeat.zone === undefined) {
    const reason = `zone pin: ${seat.label}: ${pinnedSeat.reason}`;
    return { summary: reason, waitAll: { rule: 'zone-pin', reason, unresolvable: true }, effects: {} };
  }
  let zone = pinnedSeat.zone;
  // Short: the scheduler sends this once per rejected node, thousands of times per answer.
  const of = `${seat.label} → ${zone} (${list.zones.length} zones)`;
  // A listed zone no node of which fits the pods yet (a node group scaled to zero): say so, and whether one can come.
  const reach = list.reach.of(zone);
  const noNode = reach === 'now' ? '' : reach === 'grow'
    ? `: no node in ${zone} fits yet; ${growthText(list.reach.grow.get(zone))}`
    : `: no node in ${zone} fits the pod's node selector, affinity and tolerations, and none can be added`;
  let summary = `pinned: ${of}${noNode}`;

  if (volumes.length > 0) {
    const vz = volumeZones(volumes, snapshot, list.topologyKey);
    if (!vz.has(zone)) {
      const where = [...vz].sort();
      const reason = `${volumes.map((v) => v.describe).join('; ')}: volume wins over the pin to ${zone} (${of})`;
      return {
        summary: reason, zone: where.length === 1 ? where[0] : undefined,
        effects: {
          freeze, conflict: { pinnedZone: zone, volumeZones: where, reason },
          reserve: where.length === 1 ? { zone: where[0] } : undefined,
        },
      };
    }
  }

  // A gated pod of this seat was deleted for not being scheduled in time: the next zone not tried.
  const failed = settings.zoneFallback === 'adaptive' && !ctx.boundVolume ? input.failedPins?.get(failedPinKey(model.key, index)) : undefined;
  if (failed?.has(zone)) {
    const start = list.zones.indexOf(zone);
    const next = list.zones.map((_, step) => list.zones[(start + step) % list.zones.length]!).find((z) => !failed.has(z));
    if (next !== undefined) {
      summary = `fell through from ${zone} to ${next}: a pod of this seat was not scheduled there in time (${of})`;
      zone = next;
    }
  }
  // zoneFallback: adaptive lets a pin fall through to the next zone of the list once the
  // pod has waited long enough, never for pods with bound volumes (docs/design.md#which-policy-places-a-pod).
  const feasibleIn = (z: string) => ctx.someFeasible((n) => zoneOf(n, list.topologyKey) === z);
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
  // One object for every rejected node: callers group and encode by identity. Short: it goes
  // out once per rejected node, and the scheduler's event counts identical reasons; the
  // decision log keeps the summary.
  const rejection = { rule: 'zone-pin' as const, reason: `pinned to ${pinned}${pinned === pinnedSeat.zone ? noNode : ''}`, unresolvable: true };
  const admitsZone = { topologyKey: list.topologyKey, admits: (z: string | undefined) => (z === pinned ? undefined : rejection) };
  return {
    summary, zone: pinned, retryAfterMs,
    effects: { freeze, reserve: { zone: pinned } },
    admitsZone,
  };
}

/** StatefulSets (placement.manageStatefulSets) and workloads with instance IDs: each seat has its zone. */
export const zonePinPolicy: PlacementPolicy<'zone-pin', { workload: SlimWorkload }> = {
  name: 'zone-pin',
  pinsSeats: true,
  freezesZoneList: true,
  covers: (f) => (f.seats === 'ordinal' && f.settings.manageStatefulSets) || f.seats === 'instance-id',
  own: (f) => f.workload && { workload: f.workload },
  filter: zonePin,
  decidedBy: () => 'pin',
};
