/** Per-zone preferences, the Federated ReplicaSet form (docs/design.md#zone-list-zone-sequence-fleet-balance). */
export interface ZonePreference {
  minReplicas: number;
  maxReplicas: number | undefined;
  weight: number;
}

export type ZonePreferences = (zone: string) => ZonePreference;

const EQUAL: ZonePreference = Object.freeze({ minReplicas: 0, maxReplicas: undefined, weight: 1 });
export const EQUAL_WEIGHTS: ZonePreferences = () => EQUAL;

/**
 * The zone of every seat, built one seat at a time so that every prefix is the best
 * layout for that many replicas: first zones below minReplicas, then the zone with the
 * largest weight / (2·count + 1) among zones under maxReplicas (Sainte-Laguë); ties go
 * to the earlier zone of the list. Equal weights give a,b,c,a,b,c.
 * Shorter than `length` when every zone is at its maximum.
 */
export function zoneSequence(zones: readonly string[], length: number, prefs: ZonePreferences = EQUAL_WEIGHTS): string[] {
  // Plain loops over columns: health and scale-down ask for a sequence per workload.
  const n = zones.length;
  const min = new Array<number>(n);
  const max = new Array<number>(n);
  const weight = new Array<number>(n);
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    const p = prefs(zones[i]!);
    min[i] = p.minReplicas;
    max[i] = p.maxReplicas ?? Infinity;
    weight[i] = p.weight;
  }
  const seq: string[] = [];
  while (seq.length < length) {
    let pick = -1;
    for (let i = 0; i < n; i++) {
      if (counts[i]! < min[i]! && counts[i]! < max[i]!) { pick = i; break; }
    }
    if (pick < 0) {
      let best = -1;
      for (let i = 0; i < n; i++) {
        if (weight[i]! <= 0 || counts[i]! >= max[i]!) continue;
        const priority = weight[i]! / (2 * counts[i]! + 1);
        if (priority > best) { best = priority; pick = i; }
      }
    }
    if (pick < 0) break;
    counts[pick]!++;
    seq.push(zones[pick]!);
  }
  return seq;
}

/**
 * Zone-steps a weighted sequence may be simulated for one seat (seats × zones). An index
 * comes from a pod (name suffix, label, annotation): the work it causes must not follow it.
 */
export const SEQUENCE_WORK_LIMIT = 2_000_000;

export type SeatZone = { zone: string; reason?: undefined } | { zone?: undefined; reason: string };

function uniform(p: ZonePreference[]): boolean {
  const w = p[0]?.weight ?? 0;
  return w > 0 && p.every((x) => x.minReplicas === 0 && x.maxReplicas === undefined && x.weight === w);
}

/**
 * Weights alone (no minimum, no maximum) repeat with period Σweights: after that many seats
 * every zone holds exactly its weight and the comparisons start over. Undefined otherwise.
 */
function periodOf(p: ZonePreference[]): number | undefined {
  if (!p.every((x) => x.minReplicas === 0 && x.maxReplicas === undefined)) return undefined;
  return p.reduce((s, x) => s + Math.max(0, x.weight), 0);
}

/**
 * The zone of seat `index` of zoneSequence, without building the sequence up to it.
 * Equal weights: L[index mod |L|] in O(zones). Weights alone repeat with period Σweights
 * (after Σw seats every zone holds exactly its weight, and the comparisons start over), so
 * the index is reduced first. Minimums and maximums are simulated, within the work limit.
 */
export function seatZone(zones: readonly string[], index: number, prefs: ZonePreferences = EQUAL_WEIGHTS): SeatZone {
  return seatZones(zones, prefs)(index);
}

/** `seatZone` for many seats of one list: the preferences are read once. */
export function seatZones(zones: readonly string[], prefs: ZonePreferences = EQUAL_WEIGHTS): (index: number) => SeatZone {
  const p = zones.map(prefs);
  const equal = uniform(p);
  const period = equal ? undefined : periodOf(p);
  let known: readonly string[] = [];
  // Equal weights: one answer per zone, shared by every seat asked (health asks one per pod).
  let pins: SeatZone[] | undefined;
  return (index) => {
    if (!Number.isSafeInteger(index) || index < 0) return { reason: `seat ${index} is not a valid index` };
    if (zones.length === 0) return { reason: 'no zone to seat it in' };
    if (equal) return (pins ??= zones.map((zone) => ({ zone })))[index % zones.length]!;
    let at = index;
    if (period === 0) return { reason: 'every zone has weight 0' };
    if (period !== undefined) at = index % period;
    if ((at + 1) * zones.length > SEQUENCE_WORK_LIMIT) {
      return { reason: `seat ${index} is too far into a weighted sequence of ${zones.length} zones to compute (limit ${SEQUENCE_WORK_LIMIT} zone-steps)` };
    }
    // The sequence is prefix-stable: one computed for a later seat serves every earlier one.
    if (at >= known.length) known = zoneSequence(zones, at + 1, prefs);
    const zone = known[at];
    return zone === undefined ? { reason: `no zone has a seat for index ${index}: every zone is at its maximum` } : { zone };
  };
}

/** Preferences with each zone's maximum lowered to what it can hold (capacity is a total). */
export function cappedBy(prefs: ZonePreferences, capacity: Readonly<Record<string, number>>): ZonePreferences {
  return (zone) => {
    const p = prefs(zone);
    const cap = capacity[zone];
    return cap === undefined ? p : { ...p, maxReplicas: Math.min(p.maxReplicas ?? Infinity, Math.max(0, cap)) };
  };
}

/**
 * Zone-steps keptCounts may take in all its rounds for one decision: ten sequences at the limit
 * (about 0.1 s of one core, test/bench/tenantLayout.ts), well under the webhook's 5 s.
 */
export const KEPT_WORK_LIMIT = 10 * SEQUENCE_WORK_LIMIT;

/** Zone-steps done by sequenceCounts and keptCounts since the process started: what tests and benches count. */
export const sequenceWork = { steps: 0 };

/**
 * Targets for `n` replicas when pods already sit in zones and are not moved: a zone holding
 * more than its share keeps what it holds, and the other zones share what is left by the
 * sequence, again until no zone is over (seed 002's scenario 7: A has 20 of 50, B and C get
 * 15 each). Every round together does at most KEPT_WORK_LIMIT zone-steps (a round
 * costs its zones, plus seats × zones where it simulates); undefined beyond it.
 */
export function keptCounts(
  zones: readonly string[], n: number, prefs: ZonePreferences, held: Readonly<Record<string, number>>,
): Record<string, number> | undefined {
  const kept = new Map<string, number>();
  let keptTotal = 0;
  let open: readonly string[] = zones;
  let budget = KEPT_WORK_LIMIT;
  for (;;) {
    const round = sequenceCountsWithin(open, Math.max(0, n - keptTotal), prefs, budget);
    if (!round) return undefined;
    budget -= round.work;
    const plan = round.counts;
    const still: string[] = [];
    for (const z of open) {
      const h = held[z] ?? 0;
      if (h > plan[z]!) {
        kept.set(z, h);
        keptTotal += h;
      } else still.push(z);
    }
    if (still.length === open.length) return Object.fromEntries(zones.map((z) => [z, kept.get(z) ?? plan[z]!]));
    open = still;
  }
}

/**
 * Seats per zone among the first `n` of the sequence: the layout for n replicas. Equal
 * weights in closed form; weights alone as whole periods plus a simulated remainder; with
 * minimums, maximums or capacities simulated, within the work limit (undefined beyond it).
 */
export function sequenceCounts(zones: readonly string[], n: number, prefs: ZonePreferences = EQUAL_WEIGHTS): Record<string, number> | undefined {
  return sequenceCountsWithin(zones, n, prefs, SEQUENCE_WORK_LIMIT)?.counts;
}

/** sequenceCounts within `budget` zone-steps, and the zone-steps it took (its zones, plus seats × zones simulated). */
function sequenceCountsWithin(
  zones: readonly string[], n: number, prefs: ZonePreferences, budget: number,
): { counts: Record<string, number>; work: number } | undefined {
  const counts: Record<string, number> = Object.fromEntries(zones.map((z) => [z, 0]));
  let work = zones.length;
  const done = () => {
    sequenceWork.steps += work;
    return { counts, work };
  };
  if (work > budget) return undefined;
  if (zones.length === 0 || n <= 0) return done();
  const p = zones.map(prefs);
  if (uniform(p)) {
    zones.forEach((z, i) => { counts[z] = Math.floor(n / zones.length) + (i < n % zones.length ? 1 : 0); });
    return done();
  }
  let rest = n;
  const period = periodOf(p);
  if (period === 0) return done();
  if (period !== undefined) {
    const whole = Math.floor(n / period);
    zones.forEach((z, i) => { counts[z] = whole * Math.max(0, p[i]!.weight); });
    rest = n % period;
  }
  work += rest * zones.length;
  if (rest * zones.length > SEQUENCE_WORK_LIMIT || work > budget) return undefined;
  for (const z of zoneSequence(zones, rest, prefs)) counts[z]!++;
  return done();
}

/**
 * The most pods a zone may hold, whatever the replica count: its maxReplicas; a weight-0
 * zone's minReplicas (it takes nothing beyond); 0 for a zone without an entry (no "*").
 */
export function zoneLimit(p: ZonePreference): number {
  const max = p.maxReplicas ?? Infinity;
  return p.weight > 0 ? max : Math.min(p.minReplicas, max);
}

/** A zone's limit as a reason says it: "max 2", "min 2 at weight 0", "no limit", "no entry". */
export function describeLimit(p: ZonePreference): string {
  if (p.weight <= 0 && p.minReplicas === 0) return 'limit 0 (no entry, or weight 0)';
  if (p.weight <= 0) return `limit ${zoneLimit(p)} (min ${p.minReplicas} at weight 0)`;
  return p.maxReplicas === undefined ? 'no limit' : `limit ${p.maxReplicas} (max)`;
}
