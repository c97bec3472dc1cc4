import { fnv1_32 } from '../common/hash.js';
import type { ZonePreferencesSpec } from '../cluster/zonePreferences.js';
import { preferenceFor } from './preferences.js';

// The Federated ReplicaSet planner (docs/design.md#one-planner-for-clusters-and-zones): one division of replicas over
// places (a workload's zones, or a federated workload's member clusters) by weights, min and max per place, capacity,
// rebalance; what capacity could not hold is overflow.

export interface PlanInput {
  replicas: number;
  zones: string[];
  preferences: ZonePreferencesSpec;
  /** How many more replicas each zone can hold; absent = unlimited. 0 = offline. */
  capacity?: Record<string, number>;
  /** Replicas already in each zone; kept when rebalance is false. */
  existing?: Record<string, number>;
  /** The workload key, hashed with the zone name to order zones of equal weight. */
  key?: string;
}

export interface Plan {
  plan: Record<string, number>;
  /** What capacity could not hold, per zone; only zones with overflow. */
  overflow: Record<string, number>;
}

/** A place's entry: its own, else "*"'s; undefined when neither exists (the place gets nothing). */
interface PlaceShare { minReplicas: number; maxReplicas?: number | undefined; weight: number }

/** One division of replicas over places: the seed's planner, for zones and for clusters alike. */
export interface Division {
  replicas: number;
  places: readonly string[];
  rebalance: boolean;
  shareOf(place: string): PlaceShare | undefined;
  /** How many replicas each place can hold; absent = unlimited. 0 = offline. */
  capacity?: Record<string, number>;
  /** Replicas already in each place; kept when rebalance is false. */
  existing?: Record<string, number>;
  /** The workload's key, hashed with the place's name to order places of equal weight. */
  key?: string;
}

interface Named { zone: string; hash: number; minReplicas: number; maxReplicas: number | undefined; weight: number }

/** Zones over a workload's zone preferences: the division below, with the annotation's entries. */
export function planReplicas(input: PlanInput): Plan {
  const { preferences } = input;
  return divide({
    replicas: input.replicas, places: input.zones, rebalance: preferences.rebalance, capacity: input.capacity, existing: input.existing, key: input.key,
    shareOf: (zone) => (zone in preferences.zones || '*' in preferences.zones ? preferenceFor(preferences, zone) : undefined),
  });
}

export function divide(input: Division): Plan {
  const { capacity = {}, existing = {}, key = '' } = input;
  const plan: Record<string, number> = {};
  const overflow: Record<string, number> = {};
  let prefs: Named[] = [];
  for (const zone of input.places) {
    const share = input.shareOf(zone);
    if (!share) {
      plan[zone] = 0;
      continue;
    }
    prefs.push({ zone, hash: fnv1_32(zone + key), minReplicas: share.minReplicas, maxReplicas: share.maxReplicas, weight: share.weight });
  }
  // By weight, heaviest first; equal weights in hash order, so the order is stable per workload.
  prefs.sort((a, b) => b.weight - a.weight || a.hash - b.hash);
  const cap = (zone: string) => (zone in capacity ? capacity[zone]! : Infinity);

  let remaining = input.replicas;
  for (const p of prefs) {
    const min = Math.min(p.minReplicas, remaining, cap(p.zone));
    remaining -= min;
    plan[p.zone] = min;
  }

  // rebalance: false keeps the replicas zones already have (up to max and capacity); they are
  // "preallocated" and consumed before the zone takes anything new in the rounds below.
  const preallocated: Record<string, number> = {};
  if (!input.rebalance) {
    for (const p of prefs) {
      const planned = plan[p.zone]!;
      const have = existing[p.zone] ?? 0;
      if (have <= planned) continue;
      const target = Math.min(have, p.maxReplicas ?? Infinity, cap(p.zone));
      const extra = Math.max(0, Math.min(target - planned, remaining));
      remaining -= extra;
      preallocated[p.zone] = extra;
      plan[p.zone] = planned + extra;
    }
  }

  // Rounds: each zone takes ceil(remaining·w/Σw), capped by max and capacity, until nothing moves.
  let modified = true;
  while (modified && remaining > 0) {
    modified = false;
    const weightSum = prefs.reduce((s, p) => s + p.weight, 0);
    if (weightSum <= 0) break;
    const next: Named[] = [];
    const toDistribute = remaining;
    for (const p of prefs) {
      const start = plan[p.zone]!;
      let extra = Math.min(Math.ceil((toDistribute * p.weight) / weightSum), remaining);
      const prealloc = preallocated[p.zone] ?? 0;
      const used = Math.min(extra, prealloc);
      preallocated[p.zone] = prealloc - used;
      extra -= used;
      if (used > 0) modified = true;
      let total = start + extra;
      let full = false;
      if (p.maxReplicas !== undefined && p.maxReplicas <= total) {
        total = p.maxReplicas;
        full = true;
      }
      if (cap(p.zone) <= total) {
        overflow[p.zone] = total - cap(p.zone);
        total = cap(p.zone);
        full = true;
      }
      if (!full) next.push(p);
      remaining -= total - start;
      plan[p.zone] = total;
      if (total > start) modified = true;
    }
    prefs = next;
  }

  // Without rebalance, overflow is only what could not be placed anywhere.
  const reported: Record<string, number> = {};
  for (const [zone, n] of Object.entries(overflow)) {
    const v = input.rebalance ? n : Math.min(n, remaining);
    if (v > 0) reported[zone] = v;
  }
  // Listed in the places' own order, whatever order the rounds visited them in.
  return { plan: Object.fromEntries(input.places.map((z) => [z, plan[z] ?? 0])), overflow: reported };
}
