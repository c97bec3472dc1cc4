import type { ClusterPreferences, SlimBinding, SlimMemberCluster, TargetCluster } from '../cluster/karmada.js';
import type { AffinityTerm, Placement } from '../cluster/karmadaPlacement.js';
import {
  memberShare, stateWhy, type BindingPlan, type DivisionSettings, type MemberInput, type MemberShare, type MemberState, type PlanFailure,
} from './clusterDivision.js';
import { clusterMatches } from './clusterMatching.js';
import { assignReplicas } from './karmadaAssignment.js';
import { selectClusters, type Candidate } from './karmadaSpread.js';
import { divide } from './planner.js';

// One binding's plan (docs/design.md#across-clusters): karmada-scheduler's pipeline (affinity terms in order, filters,
// spread constraints, replica assignment) over zonekeeper's own reading of each member; seed 002's preferences,
// where the policy's annotation gives them, divide the chosen members' replicas instead.

type Share = Omit<MemberShare, 'replicas' | 'why'>;

/** States in which a member passes the filters (an unknown one keeps what it has; a tainted one, too). */
const FITS: ReadonlySet<MemberState> = new Set(['ready', 'full', 'pending', 'unknown', 'no-schedule']);
/** States the placement itself decides: a binding none of whose members fits for these reasons runs nowhere, as in Karmada. */
const PLACEMENT_STATES: ReadonlySet<MemberState> = new Set(['not-allowed', 'untolerated', 'evicting', 'deleting', 'no-field', 'no-execute']);

type Attempt =
  | { ok: true; clusters: TargetCluster[]; unplaced: number; states: Map<string, MemberState> }
  | { ok: false; reason: PlanFailure; message: string; states: Map<string, MemberState>; clear: boolean };

/** 0: the term's own affinity; i+1: its i-th overflow term (workloads only, as in Karmada); undefined: outside. */
function overflowOrder(term: AffinityTerm, c: SlimMemberCluster, workload: boolean): number | undefined {
  if (clusterMatches(term.affinity, c)) return 0;
  const i = workload ? term.overflow.findIndex((o) => clusterMatches(o.affinity, c)) : -1;
  return i >= 0 ? i + 1 : undefined;
}

/** Karmada's SpreadConstraint filter: a member must have the field each constraint groups by. */
const hasSpreadFields = (p: Placement, c: SlimMemberCluster) =>
  p.spread.every((s) => (s.field === 'provider' ? !!c.provider : s.field === 'region' ? !!c.region : s.field === 'zone' ? c.zones.length > 0 : true));

/** Seed 002's division over the chosen members: the annotation's entries, a missing weight taken from the policy's static weight. */
function preferenceDivision(
  b: SlimBinding, prefs: ClusterPreferences, chosen: readonly Candidate[], shares: ReadonlyMap<string, Share>, fresh: boolean,
): { clusters: TargetCluster[]; unplaced: number } {
  const entry = (name: string) => prefs.clusters[name] ?? prefs.clusters['*'];
  const sch = b.placement.scheduling;
  if (sch.type === 'Duplicated') {
    const clusters = chosen.filter((c) => entry(c.cluster.name))
      .map((c) => ({ name: c.cluster.name, replicas: Math.min(b.replicas, entry(c.cluster.name)!.maxReplicas ?? Infinity) }));
    return { clusters, unplaced: 0 };
  }
  const staticWeight = (c: SlimMemberCluster) => (sch.type === 'StaticWeight' && sch.weights.length
    ? Math.max(0, ...sch.weights.filter((w) => clusterMatches(w.target, c)).map((w) => w.weight)) : 0);
  const frozen = chosen.filter((c) => shares.get(c.cluster.name)!.state === 'unknown');
  const kept = frozen.map((c) => ({ name: c.cluster.name, replicas: Math.min(shares.get(c.cluster.name)!.assigned, b.replicas) }));
  const open = chosen.filter((c) => !frozen.includes(c));
  const keptSum = kept.reduce((n, c) => n + c.replicas, 0);
  const { plan } = divide({
    replicas: Math.max(0, b.replicas - keptSum), places: open.map((c) => c.cluster.name), rebalance: prefs.rebalance || fresh,
    key: `${b.resource.namespace}/${b.resource.name}`,
    shareOf: (name) => {
      const e = entry(name);
      const c = open.find((x) => x.cluster.name === name)!.cluster;
      return e && { minReplicas: e.minReplicas, maxReplicas: e.maxReplicas, weight: e.weight ?? staticWeight(c) };
    },
    capacity: Object.fromEntries(open.filter((c) => c.available !== Infinity).map((c) => [c.cluster.name, c.available])),
    existing: Object.fromEntries(open.map((c) => {
      const sh = shares.get(c.cluster.name)!;
      return [c.cluster.name, sh.bound + sh.pending || sh.assigned];
    })),
  });
  const clusters = [...kept, ...Object.entries(plan).map(([name, replicas]) => ({ name, replicas }))].filter((c) => c.replicas > 0);
  return { clusters, unplaced: Math.max(0, b.replicas - clusters.reduce((n, c) => n + c.replicas, 0)) };
}

function attempt(b: SlimBinding, prefs: ClusterPreferences | undefined, shares: readonly Share[], clusters: ReadonlyMap<string, SlimMemberCluster>,
  term: AffinityTerm, s: DivisionSettings, fresh: boolean): Attempt {
  const states = new Map<string, MemberState>();
  const cands: Candidate[] = [];
  const cap = s.stride ?? Infinity;
  for (const sh of shares) {
    const c = clusters.get(sh.cluster)!;
    const order = overflowOrder(term, c, b.workload);
    if (order === undefined) states.set(sh.cluster, 'not-allowed');
    else if (FITS.has(sh.state) && !hasSpreadFields(b.placement, c)) states.set(sh.cluster, 'no-field');
    else if (FITS.has(sh.state)) {
      // Room Karmada would estimate; where nothing bounds it, the replicas themselves (its MaxInt32 rule).
      const room = Math.min(sh.capacity ?? Infinity, cap);
      const score = b.clusters.some((t) => t.name === c.name) ? 100 : 0;
      cands.push({ cluster: c, score, available: room === Infinity ? b.replicas : room, overflowOrder: order });
    }
  }
  if (cands.length === 0) {
    const reasons = new Map<string, number>();
    for (const sh of shares) {
      const why = stateWhy[states.get(sh.cluster) ?? sh.state];
      reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
    const listed = shares.filter((sh) => sh.assigned > 0 || b.clusters.some((t) => t.name === sh.cluster));
    return {
      ok: false, reason: 'NoClusterFit', states,
      message: `0/${shares.length} clusters are available: ${[...reasons].map(([why, n]) => `${n} ${why}`).sort().join(', ') || 'no cluster exists'}.`,
      clear: listed.every((sh) => PLACEMENT_STATES.has(states.get(sh.cluster) ?? sh.state)),
    };
  }
  const duplicated = b.placement.scheduling.type === 'Duplicated';
  const chosen = selectClusters(b.placement, cands, b.replicas, duplicated ? -1 : b.workload ? b.replicas : 0, !!prefs);
  if (!chosen.ok) return { ok: false, reason: 'SchedulerError', message: `failed to select clusters: ${chosen.message}`, states, clear: false };
  for (const c of cands) if (!chosen.clusters.includes(c)) states.set(c.cluster.name, 'not-selected');
  if (prefs && b.workload) {
    const byName = new Map(shares.map((sh) => [sh.cluster, sh]));
    return { ok: true, states, ...preferenceDivision(b, prefs, chosen.clusters, byName, fresh) };
  }
  const overflow = b.placement.grouped && term.overflow.length > 0;
  const a = assignReplicas({
    scheduling: b.placement.scheduling, replicas: b.replicas, workload: b.workload, uid: b.resource.uid, clusters: chosen.clusters,
    previous: b.clusters, fresh, overflow, placementChanged: b.appliedPlacement !== b.placementText,
  });
  if (!a.ok) return { ok: false, reason: a.reason, message: `failed to assign replicas: ${a.message}`, states, clear: false };
  const over = a.clusters.find((c) => c.replicas > cap);
  if (over) {
    const message = `${over.name} would hold ${over.replicas} replicas of a StatefulSet, above its ordinal range of ${cap} (karmada.ordinalStride)`;
    return { ok: false, reason: 'SchedulerError', message, states, clear: false };
  }
  const placed = a.clusters.reduce((n, c) => n + c.replicas, 0);
  return { ok: true, states, clusters: a.clusters, unplaced: duplicated || !b.workload ? 0 : Math.max(0, b.replicas - placed) };
}

/**
 * The plan for one binding: the clusterAffinities terms from the observed one on (from the first when a
 * WorkloadRebalancer asks), each member's share and why; the same inputs give the same plan.
 */
export function planBinding(
  b: SlimBinding, prefs: ClusterPreferences | undefined, members: readonly MemberInput[], s: DivisionSettings, now: number,
): BindingPlan {
  const fresh = b.rescheduleTriggeredAt > b.lastScheduledTime;
  const sorted = [...members].sort((x, y) => (x.cluster.name < y.cluster.name ? -1 : 1));
  const shares = sorted.map((m) => memberShare(b, m, s, now));
  const clusters = new Map(sorted.map((m) => [m.cluster.name, m.cluster]));
  const terms = b.placement.terms;
  const observed = terms.findIndex((t) => t.name === b.observedAffinity);
  let first: Extract<Attempt, { ok: false }> | undefined;
  for (let i = fresh || observed < 0 ? 0 : observed; i < terms.length; i++) {
    const r = attempt(b, prefs, shares, clusters, terms[i]!, s, fresh);
    const members = withWhy(shares, r.states, r.ok ? r.clusters : undefined, prefs);
    const affinityName = terms[i]!.name;
    if (r.ok) return { ok: true, clusters: r.clusters, members, unplaced: r.unplaced, rebalance: !!prefs?.rebalance || fresh, affinityName };
    if (!first) first = r;
    if (i === terms.length - 1) {
      const members = withWhy(shares, first.states, undefined, prefs);
      return { ok: false, reason: first.reason, message: first.message, members, affinityName: b.observedAffinity, clear: first.clear };
    }
  }
  return { ok: false, reason: 'SchedulerError', message: 'the placement has no cluster affinity term', members: [], affinityName: b.observedAffinity, clear: false };
}

function withWhy(
  shares: readonly Share[], states: ReadonlyMap<string, MemberState>, clusters: readonly TargetCluster[] | undefined, prefs: ClusterPreferences | undefined,
): MemberShare[] {
  return shares.map((sh) => {
    const state = states.get(sh.cluster) ?? sh.state;
    const replicas = clusters ? clusters.find((c) => c.name === sh.cluster)?.replicas ?? 0 : sh.assigned;
    const entry = prefs && (prefs.clusters[sh.cluster] ?? prefs.clusters['*']);
    const limits = !prefs ? '' : entry
      ? `; weight ${entry.weight ?? 'from the policy'}${entry.minReplicas ? `, min ${entry.minReplicas}` : ''}${entry.maxReplicas !== undefined ? `, max ${entry.maxReplicas}` : ''}` : '; no entry';
    const room = sh.capacity === undefined || sh.state === 'unknown' || !FITS.has(state) ? '' : `, room for ${sh.capacity}`;
    return { ...sh, state, replicas, why: `${stateWhy[state]}${limits}${room}` };
  });
}
