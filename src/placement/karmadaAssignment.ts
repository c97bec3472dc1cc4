import type { TargetCluster } from '../cluster/karmada.js';
import type { ReplicaScheduling } from '../cluster/karmadaPlacement.js';
import { clusterMatches } from './clusterMatching.js';
import type { Candidate } from './karmadaSpread.js';
import { websterSeats } from './websterSeats.js';

// Replicas over the chosen members as karmada-scheduler v1.19 assigns them (pkg/scheduler/core/assignment.go,
// division_algorithm.go): Duplicated, static weights, dynamic weights and Aggregated from zonekeeper's own room,
// overflow tiers (docs/design.md#across-clusters).

export interface AssignInput {
  scheduling: ReplicaScheduling;
  replicas: number;
  /** Karmada's IsWorkload: replicas or replica requirements; else every member gets the object, no replicas. */
  workload: boolean;
  /** The resource template's uid: Karmada's tie-break. */
  uid: string;
  /** The chosen members, in selection order. */
  clusters: readonly Candidate[];
  /** spec.clusters as it is. */
  previous: readonly TargetCluster[];
  /** A WorkloadRebalancer asked for a fresh plan (rescheduleTriggeredAt after lastScheduledTime). */
  fresh: boolean;
  /** The placement differs from the one last applied (policy.karmada.io/applied-placement), or none was. */
  placementChanged: boolean;
  /** The observed clusterAffinities term has overflowAffinities: tiers fill in order. */
  overflow: boolean;
}

export type Assignment = { ok: true; clusters: TargetCluster[] } | { ok: false; reason: 'Unschedulable' | 'SchedulerError'; message: string };

const byName = (a: TargetCluster, b: TargetCluster) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const seatsOf = (m: Map<string, number>): TargetCluster[] => [...m].map(([name, replicas]) => ({ name, replicas }));

function staticWeights(s: Extract<ReplicaScheduling, { type: 'StaticWeight' }>, cs: readonly Candidate[]): Map<string, number> {
  const w = new Map<string, number>();
  for (const c of cs) {
    const weight = Math.max(0, ...s.weights.filter((r) => clusterMatches(r.target, c.cluster)).map((r) => r.weight));
    if (weight > 0) w.set(c.cluster.name, weight);
  }
  return w.size > 0 ? w : new Map(cs.map((c) => [c.cluster.name, 1]));
}

/** Karmada's assignByDynamicStrategy: Fresh, scale down by the current shares, scale up by the room left, or as it is. */
function dynamic(i: AssignInput, replicas: number, cs: readonly Candidate[], aggregated: boolean): Assignment {
  const names = new Set(cs.map((c) => c.cluster.name));
  const scheduled = i.previous.filter((t) => names.has(t.name) && t.replicas > 0);
  const assigned = scheduled.reduce((s, t) => s + t.replicas, 0);
  let target: number, weights: [string, number][], keep: TargetCluster[];
  if (i.fresh) {
    target = replicas;
    weights = cs.map((c) => [c.cluster.name, c.available]);
    keep = [];
  } else if (assigned > replicas) {
    target = replicas;
    weights = [...scheduled].sort((a, b) => b.replicas - a.replicas).map((t) => [t.name, t.replicas]);
    keep = [];
  } else if (assigned < replicas) {
    target = replicas - assigned;
    const own = new Map(scheduled.map((t) => [t.name, t.replicas]));
    weights = cs.map((c) => [c.cluster.name, Math.max(0, c.available - (own.get(c.cluster.name) ?? 0))]);
    keep = scheduled;
  } else return { ok: true, clusters: scheduled };
  // Replicas-desc, stable: Karmada's insertion sort over a short list keeps equal entries in their order.
  if (!(assigned > replicas && !i.fresh)) weights = weights.map((w, k) => [w, k] as const).sort((a, b) => b[0][1] - a[0][1] || a[1] - b[1]).map(([w]) => w);
  const room = weights.reduce((s, [, w]) => s + w, 0);
  if (room < target) return { ok: false, reason: 'Unschedulable', message: `Clusters available replicas ${room} are not enough to schedule.` };
  if (aggregated) {
    // Members it already runs on first, then the fewest that hold the target.
    const used = new Set(keep.map((t) => t.name));
    weights = [...weights.filter(([n]) => used.has(n)), ...weights.filter(([n]) => !used.has(n))];
    let sum = 0, k = 0;
    while (k < weights.length && sum < target) sum += weights[k++]![1];
    weights = weights.slice(0, k);
  }
  const seats = websterSeats(target, new Map(weights), i.uid);
  for (const t of keep) seats.set(t.name, (seats.get(t.name) ?? 0) + t.replicas);
  return { ok: true, clusters: seatsOf(seats).sort(byName) };
}

function assignTier(i: AssignInput, replicas: number, cs: readonly Candidate[]): Assignment {
  switch (i.scheduling.type) {
    case 'Duplicated': return { ok: true, clusters: cs.map((c) => ({ name: c.cluster.name, replicas })) };
    case 'StaticWeight': return { ok: true, clusters: seatsOf(websterSeats(replicas, staticWeights(i.scheduling, cs), i.uid)) };
    case 'DynamicWeight': return dynamic(i, replicas, cs, false);
    case 'Aggregated': return dynamic(i, replicas, cs, true);
  }
}

/**
 * Static weights as they run, while nothing Karmada reschedules on happened (doScheduleBinding): the placement and the
 * replicas unchanged, no WorkloadRebalancer, every member they run on still chosen. A member joining or coming back
 * gets replicas at the next of these, not by moving running ones.
 */
function untriggered(i: AssignInput): TargetCluster[] | undefined {
  if (i.fresh || i.placementChanged || i.overflow || i.scheduling.type !== 'StaticWeight') return undefined;
  const chosen = new Set(i.clusters.map((c) => c.cluster.name));
  const running = i.previous.filter((t) => t.replicas > 0);
  const sum = running.reduce((s, t) => s + t.replicas, 0);
  return sum === i.replicas && running.every((t) => chosen.has(t.name)) ? [...running].sort(byName) : undefined;
}

/** The chosen members' replicas, as karmada-scheduler would write them (members given none left out). */
export function assignReplicas(i: AssignInput): Assignment {
  if (i.clusters.length === 0) return { ok: false, reason: 'SchedulerError', message: 'no clusters available to schedule' };
  if (!i.workload) return { ok: true, clusters: i.clusters.map((c) => ({ name: c.cluster.name, replicas: 0 })) };
  const held = untriggered(i);
  if (held) return { ok: true, clusters: held };
  if (!i.overflow) {
    const r = assignTier(i, i.replicas, i.clusters);
    return r.ok ? { ok: true, clusters: r.clusters.filter((c) => c.replicas > 0) } : r;
  }
  const tiers = [...new Set(i.clusters.map((c) => c.overflowOrder))].sort((a, b) => a - b);
  const out: TargetCluster[] = [];
  let remaining = i.replicas;
  for (const tier of tiers) {
    const cs = i.clusters.filter((c) => c.overflowOrder === tier);
    const take = Math.min(remaining, cs.reduce((s, c) => s + c.available, 0));
    const r = assignTier(i, take, cs);
    if (!r.ok) return r;
    out.push(...r.clusters.filter((c) => c.replicas > 0));
    remaining -= take;
    if (remaining <= 0) break;
  }
  return remaining > 0 ? { ok: false, reason: 'Unschedulable', message: 'Clusters available replicas are not enough to schedule.' } : { ok: true, clusters: out };
}
