import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { boundZone, ordinalVolumeZone, podVolumes } from './volumes.js';

// Adoption (docs/design.md#adoption): a zone list derived for a workload whose pods or bound
// volumes already sit in zones is the order of zones that keeps the most seats where they are,
// found as an optimal assignment of zones to list positions, not a greedy guess.

/** A seat that is already somewhere: its index and the zone its volume (else its pod) is in. */
export interface PlacedSeat {
  index: number;
  zone: string;
}

/**
 * Minimum-cost assignment of rows to columns of a square matrix (the Hungarian method with
 * potentials, O(n³)): `result[row]` is the row's column.
 */
export function minCostAssignment(cost: readonly (readonly number[])[]): number[] {
  const n = cost.length;
  const u = new Array<number>(n + 1).fill(0);
  const v = new Array<number>(n + 1).fill(0);
  const p = new Array<number>(n + 1).fill(0);
  const way = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Array<number>(n + 1).fill(Infinity);
    const used = new Array<boolean>(n + 1).fill(false);
    do {
      used[j0] = true;
      const i0 = p[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const cur = cost[i0 - 1]![j - 1]! - u[i0]! - v[j]!;
        if (cur < minv[j]!) { minv[j] = cur; way[j] = j0; }
        if (minv[j]! < delta) { delta = minv[j]!; j1 = j; }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) { u[p[j]!]! += delta; v[j]! -= delta; } else minv[j]! -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const result = new Array<number>(n).fill(-1);
  for (let j = 1; j <= n; j++) if (p[j]! > 0) result[p[j]! - 1] = j - 1;
  return result;
}

/**
 * The list (a permutation of `fleetList`, equal weights: seat i in position i mod |L|) that puts
 * the most placed seats in the zone they are in; among equally good lists, the one closest to
 * the fleet's order (each zone kept at its fleet position counts). `agree`: seats in place.
 */
export function adoptedList(fleetList: readonly string[], seats: readonly PlacedSeat[]): { zones: string[]; agree: number } {
  const n = fleetList.length;
  const column = new Map(fleetList.map((z, i) => [z, i]));
  const at = fleetList.map(() => new Array<number>(n).fill(0));
  for (const s of seats) {
    const z = column.get(s.zone);
    if (z !== undefined && s.index >= 0) at[s.index % n]![z]!++;
  }
  // Seats dominate: one seat outweighs every fleet-position tie-break together.
  const scale = n + 1;
  const cost = at.map((row, pos) => row.map((count, z) => -(count * scale + (z === pos ? 1 : 0))));
  const zoneAt = minCostAssignment(cost);
  return { zones: zoneAt.map((z) => fleetList[z]!), agree: zoneAt.reduce((sum, z, pos) => sum + at[pos]![z]!, 0) };
}

/**
 * Where a workload's seats already are: each pod's bound volume's single zone, else its
 * node's zone; and for a StatefulSet's ordinals without a pod, the volumes of their claims
 * (`<template>-<name>-<ordinal>`), which kube-scheduler will honour when the pod comes.
 */
export function placedSeats(
  workload: SlimWorkload | undefined, pods: Iterable<SlimPod>, seatOf: (pod: SlimPod) => number, snapshot: Snapshot, topologyKey: string,
): PlacedSeat[] {
  const out: PlacedSeat[] = [];
  const seated = new Set<number>();
  for (const pod of pods) {
    const index = seatOf(pod);
    if (index < 0) continue;
    seated.add(index);
    const byVolume = pod.claims.length > 0 ? boundZone(podVolumes(pod, snapshot).constraints, snapshot, topologyKey) : undefined;
    const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
    const zone = byVolume ?? (node ? zoneOf(node, topologyKey) : undefined);
    if (zone !== undefined) out.push({ index, zone });
  }
  if (!workload || workload.claimTemplates.length === 0) return out;
  // Each seat with a bound volume has a PV: no more seats are looked at than the cache holds PVs.
  const seats = Math.min(workload.replicas, seated.size + snapshot.pvCount());
  for (let index = 0; index < seats; index++) {
    if (seated.has(index)) continue;
    const ordinal = workload.ordinalsStart + index;
    const zone = ordinalVolumeZone(workload, ordinal, snapshot, topologyKey);
    if (zone !== undefined) out.push({ index, zone });
  }
  return out;
}
