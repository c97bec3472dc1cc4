import type { Placement, SpreadConstraint } from '../cluster/karmadaPlacement.js';
import type { SlimMemberCluster } from '../cluster/karmada.js';

// Spread constraints as karmada-scheduler v1.19 selects clusters (pkg/scheduler/core/spreadconstraint/), and what it
// leaves undone: by zone, provider or label, groups chosen the same way but only where the chosen members can hold
// the replicas (docs/design.md#across-clusters).

/** A feasible member, as Karmada's ClusterDetailInfo: scored, and its room for this workload. */
export interface Candidate {
  cluster: SlimMemberCluster;
  /** 100 when the binding already has it in spec.clusters (Karmada's ClusterLocality). */
  score: number;
  /** Replicas it can hold, its own current ones included (Karmada's AvailableReplicas). */
  available: number;
  /** 0: the affinity term's own; i+1: its i-th overflowAffinities term. */
  overflowOrder: number;
}

/** Karmada's order: overflow tier, score, room, name. */
function byPreference(a: Candidate, b: Candidate): number {
  const name = a.cluster.name < b.cluster.name ? -1 : a.cluster.name > b.cluster.name ? 1 : 0;
  return a.overflowOrder - b.overflowOrder || b.score - a.score || b.available - a.available || name;
}

export type Selection = { ok: true; clusters: Candidate[] } | { ok: false; message: string };

const WEIGHT_UNIT = 1000;
/** DFS steps over groups before the search stops (groups come from Cluster objects: bounded by the federation). */
const PATH_BUDGET = 100_000;

interface Group { name: string; value: number; weight: number; clusters: Candidate[] }
interface Path { id: number; groups: Group[]; weight: number; value: number }

/** Karmada's calcGroupScore: how well a group holds the workload (clusters in preference order). */
function groupScore(clusters: readonly Candidate[], replicas: number, duplicated: boolean, groupMin: number, clusterMin: number): number {
  if (duplicated) {
    const valid = clusters.filter((c) => c.available >= replicas);
    return valid.length === 0 ? 0 : valid.length * WEIGHT_UNIT + Math.trunc(valid.reduce((s, c) => s + c.score, 0) / valid.length);
  }
  const target = Math.ceil(replicas / groupMin);
  const need = Math.max(clusterMin, groupMin);
  let room = 0, score = 0, n = 0;
  for (const c of clusters) {
    room += c.available;
    score += c.score;
    n++;
    if (n >= need && room >= target) break;
  }
  return room < target ? room * WEIGHT_UNIT + Math.trunc(score / clusters.length) : target * WEIGHT_UNIT + Math.trunc(score / n);
}

/** Karmada's findFeasiblePaths: every set of min..max groups whose clusters reach `target`, depth first. */
function feasiblePaths(groups: Group[], min: number, max: number, target: number): Path[] {
  groups.sort((a, b) => a.value - b.value || b.weight - a.weight || (a.name < b.name ? -1 : 1));
  const paths: Path[] = [];
  const path: Group[] = [];
  let steps = 0;
  const dfs = (sum: number, begin: number): void => {
    if (++steps > PATH_BUDGET) return;
    if (sum >= target && path.length >= min && path.length <= max) {
      const sorted = [...path].sort((a, b) => b.weight - a.weight || (a.name < b.name ? -1 : 1));
      paths.push({ id: paths.length + 1, groups: sorted, weight: sorted.reduce((s, g) => s + g.weight, 0), value: sorted.reduce((s, g) => s + g.value, 0) });
      return;
    }
    if (path.length >= max) return;
    for (let i = begin; i < groups.length; i++) {
      path.push(groups[i]!);
      dfs(sum + groups[i]!.value, i + 1);
      if (groups.length === min) break;
      path.pop();
    }
  };
  dfs(0, 0);
  return paths;
}

/** Karmada's prioritizePaths: heaviest, then most clusters, then first found; a shorter path that starts the pick wins. */
function prioritized(paths: Path[]): Path[] {
  const sorted = [...paths].sort((a, b) => b.weight - a.weight || b.value - a.value || a.id - b.id);
  let pick = sorted[0]!;
  for (const p of sorted.slice(1)) {
    if (p.groups.length < pick.groups.length && p.groups.every((g, i) => pick.groups[i]!.name === g.name)) pick = p;
  }
  return [pick, ...sorted.filter((p) => p !== pick)];
}

/** Karmada's selectClustersByAvailableResource: the first n, swapping in roomier ones from the rest until they hold `need`. */
function byRoom(cands: readonly Candidate[], n: number, need: number): Candidate[] | undefined {
  const ret = cands.slice(0, n);
  const rest = cands.slice(n);
  const sum = () => ret.reduce((s, c) => s + c.available, 0);
  for (let i = n - 1; i >= 0 && sum() < need; i--) {
    let best = -1;
    for (let j = 0; j < rest.length; j++) if (rest[j]!.available > ret[i]!.available && (best < 0 || rest[j]!.available > rest[best]!.available)) best = j;
    if (best >= 0) [ret[i], rest[best]] = [rest[best]!, ret[i]!];
  }
  return sum() < need ? undefined : ret;
}

/** The group keys of a member for a constraint: a member listing several zones is in each. */
function keysOf(c: SlimMemberCluster, s: SpreadConstraint): string[] {
  if (s.label !== undefined) return s.label in c.labels ? [c.labels[s.label]!] : [];
  if (s.field === 'region') return c.region ? [c.region] : [];
  if (s.field === 'provider') return c.provider ? [c.provider] : [];
  if (s.field === 'zone') return [...new Set(c.zones)];
  return [c.name];
}

/** Whether Karmada skips spread constraints for this placement (static weights, or Weighted with no weightPreference). */
const ignoresSpread = (p: Placement): boolean => p.scheduling.type === 'StaticWeight' && p.scheduling.ignoresSpread;

/**
 * The members a binding is spread over: all (no constraint), Karmada's choice by cluster or region, or
 * zonekeeper's by zone, provider or label (the first of them; the others filter only, as in Karmada).
 * `need`: replicas the choice must hold (-1: Duplicated, room not asked). `always`: the constraints hold even where
 * Karmada skips them (static weights): seed 002's preferences divide within them.
 */
export function selectClusters(p: Placement, cands: Candidate[], replicas: number, need: number, always = false): Selection {
  const sorted = [...cands].sort(byPreference);
  if (p.spread.length === 0 || (ignoresSpread(p) && !always)) return { ok: true, clusters: sorted };
  const cluster = p.spread.find((s) => s.field === 'cluster' && s.label === undefined);
  const grouping = p.spread.find((s) => s.field === 'region') ?? p.spread.find((s) => s.field === 'zone') ?? p.spread.find((s) => s.field === 'provider')
    ?? p.spread.find((s) => s.label !== undefined);
  if (!grouping) {
    const c = cluster!;
    if (sorted.length < c.minGroups) return { ok: false, message: 'the number of feasible clusters is less than spreadConstraint.MinGroups' };
    const n = Math.min(sorted.length, c.maxGroups);
    if (need < 0) return n > 0 ? { ok: true, clusters: sorted.slice(0, n) } : { ok: false, message: 'no clusters available to schedule' };
    const chosen = n > 0 ? byRoom(sorted, n, need) : undefined;
    return chosen ? { ok: true, clusters: chosen } : { ok: false, message: `no enough resource when selecting ${n} clusters` };
  }
  const what = grouping.label !== undefined ? `label ${grouping.label}` : grouping.field!;
  const byKey = new Map<string, Candidate[]>();
  for (const c of sorted) for (const k of keysOf(c.cluster, grouping)) (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(c);
  if (byKey.size < grouping.minGroups) return { ok: false, message: `the number of feasible ${what} is less than spreadConstraint.MinGroups` };
  const groups: Group[] = [...byKey].map(([name, cs]) => ({ name, value: cs.length, clusters: cs,
    weight: groupScore(cs, replicas, need < 0, grouping.minGroups || 1, cluster?.minGroups ?? 0) }));
  // Karmada reads a region's maxGroups as it is (unset: no set of regions fits); zonekeeper's groupings cap only when it is set.
  const max = grouping.field === 'region' ? grouping.maxGroups : grouping.maxGroups || Infinity;
  const paths = feasiblePaths(groups, grouping.minGroups, max, cluster?.minGroups ?? 0);
  if (paths.length === 0) return { ok: false, message: 'the number of clusters is less than the cluster spreadConstraint.MinGroups' };
  // Karmada takes the first path; zonekeeper's own groupings take the first whose members can hold the replicas.
  for (const path of grouping.field === 'region' ? [prioritized(paths)[0]!] : prioritized(paths)) {
    const chosen: Candidate[] = [];
    const rest: Candidate[] = [];
    for (const g of path.groups) {
      const [first, ...others] = g.clusters.filter((c) => !chosen.includes(c));
      if (first) chosen.push(first);
      rest.push(...others);
    }
    const extra = [...new Set(rest)].filter((c) => !chosen.includes(c)).sort((a, b) => b.available - a.available || byPreference(a, b));
    // Karmada reads the cluster constraint's maxGroups as it is (0 when unset); zonekeeper's groupings cap only when it is set.
    const n = Math.min(chosen.length + extra.length, grouping.field === 'region' ? cluster?.maxGroups ?? 0 : cluster?.maxGroups || Infinity);
    chosen.push(...extra.slice(0, Math.max(0, n - chosen.length)));
    if (grouping.field === 'region' || need < 0 || chosen.reduce((s, c) => s + c.available, 0) >= need) return { ok: true, clusters: chosen };
  }
  return { ok: false, message: `no set of ${what} groups within minGroups ${grouping.minGroups} and maxGroups ${grouping.maxGroups || 'unset'} can hold ${need} replicas` };
}
