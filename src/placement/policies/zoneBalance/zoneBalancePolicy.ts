import { workloadKindSpec } from '../../../cluster/kinds.js';
import type { PendingPod, SlimNode, SlimWorkload } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { zoneOccupancy } from '../../occupancy.js';
import type { PlacementPolicy, PolicyContext, PolicyModelOf, PolicyOutcome } from '../../policy.js';
import { misfitOf } from '../../nodeFit.js';
import { cappedBy, describeLimit, keptCounts, SEQUENCE_WORK_LIMIT, zoneLimit } from '../../zoneSequence.js';

type BalanceModel = PolicyModelOf<'zone-balance', { workload: SlimWorkload }>;

/**
 * How many more pods like this one fit on the zone's nodes, by the cache's arithmetic (per-node
 * sums kept by the store). A node that is not Ready, is cordoned, or that the pod's node
 * selector, affinity or tolerations exclude holds none: a zone in an outage looks like that
 * (NotReady, unreachable taints).
 */
export function fitInZone(zone: string, topologyKey: string, pod: PendingPod, snapshot: Snapshot): number {
  return fitOnNodes(snapshot.nodesInZone(topologyKey, zone), pod, snapshot);
}

/** The same over any nodes (a WorkloadSpread subset's). */
export function fitOnNodes(nodes: Iterable<SlimNode>, pod: PendingPod, snapshot: Snapshot): number {
  let fit = 0;
  const misfit = misfitOf({ selection: pod.selection, tolerations: pod.tolerations });
  for (const node of nodes) {
    if (!node.ready || node.unschedulable || misfit(node) !== undefined) continue;
    const used = snapshot.nodeUsage(node.name);
    const by = (free: number, need: number) => (need > 0 ? Math.floor(free / need) : Infinity);
    const n = Math.min(by(node.allocatable.cpuMilli - used.cpuMilli, pod.cpuMilli), by(node.allocatable.memory - used.memory, pod.memory),
      node.allocatable.pods - used.pods);
    fit += Math.max(0, Number.isFinite(n) ? n : 0);
  }
  return fit;
}

/**
 * Zone balance for workloads with zone preferences and no ordinals or instance IDs
 * (Deployments, ReplicaSets): each zone's target is its share of the first `replicas` seats of
 * the zone sequence (the same rule as ordinals and instance IDs: equal weights never leave a
 * zone empty while there are enough replicas), a zone over it keeping its pods (keptCounts),
 * and the pod goes to the zone furthest below
 * its target among zones with a feasible node and room under their limit (zoneLimit). A zone
 * the scheduler sent no node of is full: its capacity comes from the cache and caps its share.
 */
function zoneBalance(ctx: PolicyContext, model: BalanceModel): PolicyOutcome {
  const { input, snapshot } = ctx;
  const { workload } = model;
  const list = model.zones();
  if (list.zones.length === 0) return { summary: `no node has label ${list.topologyKey}: nothing to balance`, effects: {} };
  const occupancy = zoneOccupancy(model, list.topologyKey, snapshot, input.reservations, input.pod.uid);
  const counts: Record<string, number> = {};
  for (const z of list.zones) counts[z] = (occupancy.get(z)?.bound ?? 0) + (occupancy.get(z)?.reserved ?? 0);
  const offered = ctx.feasibleZones(list.topologyKey, list.zones);
  // Written into the spec, a zone the pods can grow into gets a node from the autoscaler: no cap on it.
  if (input.writesSpec) for (const z of list.zones) if (list.reach.of(z) === 'grow') offered.add(z);
  const capacity: Record<string, number> = {};
  for (const z of list.zones) if (!offered.has(z)) capacity[z] = counts[z]! + fitInZone(z, list.topologyKey, input.pod, snapshot);
  const plan = keptCounts(list.zones, workload.replicas, cappedBy(model.preferences.sequence, capacity), counts);
  if (!plan) {
    const reason = `zone balance: ${workload.replicas} replicas are too many to lay out with these preferences (limit ${SEQUENCE_WORK_LIMIT} zone-steps)`;
    return { summary: reason, waitAll: { rule: 'zone-balance', reason, unresolvable: true }, effects: {} };
  }

  // The preferences are limits: a zone at its limit takes no pod, whatever its target says.
  const limit: Record<string, number> = {};
  for (const z of list.zones) limit[z] = zoneLimit(model.preferences.sequence(z));
  const hasRoom = (z: string) => counts[z]! < limit[z]!;
  let best: string | undefined;
  for (const z of list.zones) {
    if (!offered.has(z) || !hasRoom(z)) continue;
    if (best === undefined || plan[z]! - counts[z]! > plan[best]! - counts[best]!) best = z;
  }
  const layout = list.zones.map((z) => `${z} ${counts[z]}/${plan[z]}`).join(', ');
  if (best === undefined) {
    const room = list.zones.filter(hasRoom);
    const zones = list.zones.map((z) => `${z} ${counts[z]} of ${describeLimit(model.preferences.sequence(z))}${hasRoom(z) ? ', no feasible node' : ''}`).join('; ');
    const reason = room.length === 0
      ? `zone balance: every zone is at its limit (${zones})`
      : `zone balance: no zone with room has a feasible node (${zones})`;
    // Every zone at its limit: preempting other pods cannot make room, only this workload's own pods leaving can.
    return { summary: reason, waitAll: { rule: 'zone-balance', reason, unresolvable: room.length === 0 }, effects: {} };
  }
  const zone = best;
  const summary = `zone balance: ${zone} is furthest below its target (${layout})`;
  const rejection = { rule: 'zone-balance' as const, reason: `zone balance: ${zone}`, unresolvable: false };
  const admitsZone = { topologyKey: list.topologyKey, admits: (z: string | undefined) => (z === zone ? undefined : rejection) };
  return {
    summary, zone, effects: { reserve: { zone } },
    admitsZone,
  };
}

/** Deployments, ReplicaSets and CloneSets with zone preferences and no seats: each zone towards its target. */
export const zoneBalancePolicy: PlacementPolicy<'zone-balance', { workload: SlimWorkload }> = {
  name: 'zone-balance',
  pinsSeats: false,
  freezesZoneList: false,
  covers: (f) => f.seats === 'none' && workloadKindSpec(f.ref.kind) !== undefined && f.preferences.parsed !== undefined,
  own: (f) => f.workload && { workload: f.workload },
  filter: zoneBalance,
  decidedBy: () => 'balance',
};
