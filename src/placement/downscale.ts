import { ownedThrough, workloadKindSpec } from '../cluster/kinds.js';
import type { SlimPod } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { workloadModel, type SpreadModel, type WorkloadModel, type ZoneListDeps } from './model.js';
import type { PlacementSettings } from './verdict.js';
import { resolveMax, subsetOfPod } from './workloadSpread.js';
import { resolveWorkload } from './workload.js';
import { zoneSequence } from './zoneSequence.js';
import { zoneOf } from './zones.js';

// Scale-down (design §7): which pods to remove so that what remains is still a good layout.
// One removal at a time, as the workload shrinks: the pod of the zone (or WorkloadSpread
// subset) furthest over its target for the new size; within it the highest ordinal or
// instance ID, then not-ready pods, then the newest.

/** Lower sorts first, is removed first. Equal keys are equally good. */
type Key = number[];

const compare = (a: Key, b: Key) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
};

/** One workload's pods while the simulated scale-down removes them one by one. */
interface Shrinking {
  remaining: Map<string, SlimPod>;
  /** Recomputes targets and counts for `remaining`; once per removal step. */
  prepare(): void;
  /** The removal key of `pod` if it were the next one removed from `remaining`. */
  keyOf(pod: SlimPod): Key;
}

/** Within a zone or subset: highest seat first, then not ready, then newest. */
function withinKey(pod: SlimPod, model: WorkloadModel): Key {
  return [-model.seat(pod).index, pod.ready ? 1 : 0, -pod.createdAt];
}

/**
 * Kruise's deletion cost for a WorkloadSpread pod (design §5): subset i of N keeps
 * 100·(N−i) for its first maxReplicas pods, the pods over its max get −100·(i+1), and pods
 * in no subset −100·(N+1). Which pods of a subset are over its max: those removed first.
 */
export function workloadSpreadCosts(model: SpreadModel, pods: Iterable<SlimPod>, replicas: number, snapshot: Snapshot): Map<string, number> {
  const { ws } = model;
  const n = ws.subsets.length;
  const bySubset = new Map<string, SlimPod[]>();
  const costs = new Map<string, number>();
  for (const p of pods) {
    const s = subsetOfPod(p, ws, snapshot);
    if (s === undefined || !ws.subsets.some((x) => x.name === s)) costs.set(p.name, -100 * (n + 1));
    else (bySubset.get(s) ?? bySubset.set(s, []).get(s)!).push(p);
  }
  ws.subsets.forEach((subset, i) => {
    const members = (bySubset.get(subset.name) ?? []).sort((a, b) => compare(withinKey(a, model), withinKey(b, model)) || a.name.localeCompare(b.name));
    const over = Math.max(0, members.length - resolveMax(subset.maxReplicas, replicas));
    members.forEach((p, j) => costs.set(p.name, j < over ? -100 * (i + 1) : 100 * (n - i)));
  });
  return costs;
}

function shrinking(model: WorkloadModel, snapshot: Snapshot): Shrinking {
  const remaining = new Map<string, SlimPod>();
  for (const p of model.pods()) if (p.nodeName) remaining.set(p.name, p);
  if (model.policy === 'workloadspread') {
    let costs = new Map<string, number>();
    return {
      remaining,
      prepare() {
        costs = workloadSpreadCosts(model, remaining.values(), remaining.size - 1, snapshot);
      },
      keyOf: (pod) => [costs.get(pod.name) ?? 0, ...withinKey(pod, model)],
    };
  }
  const list = model.zones();
  // Targets from the prefix-stable sequence, for every kind: the planner's rounding up would
  // leave a zone empty at small sizes (4 over 3 zones plans 2/2/0), the sequence gives 2/1/1.
  const sequence = zoneSequence(list.zones, remaining.size, model.preferences.sequence);
  const targets = (size: number): Record<string, number> => {
    const t: Record<string, number> = Object.fromEntries(list.zones.map((z) => [z, 0]));
    for (const z of sequence.slice(0, size)) t[z]!++;
    return t;
  };
  const zoneOfPod = (p: SlimPod) => {
    const node = snapshot.node(p.nodeName);
    return node ? zoneOf(node, list.topologyKey) : undefined;
  };
  let target: Record<string, number> = {};
  const counts = new Map<string | undefined, number>();
  return {
    remaining,
    prepare() {
      target = targets(remaining.size - 1);
      counts.clear();
      for (const p of remaining.values()) counts.set(zoneOfPod(p), (counts.get(zoneOfPod(p)) ?? 0) + 1);
    },
    keyOf(pod) {
      const zone = zoneOfPod(pod);
      // A pod outside the zone list (or on an unknown node) is as far over as it gets.
      const excess = zone !== undefined && zone in target ? counts.get(zone)! - target[zone]! : Number.MAX_SAFE_INTEGER;
      return [-excess, ...withinKey(pod, model)];
    },
  };
}

export interface PickResult {
  chosen_pods: string[];
  tied_pods: string[];
  warnings?: string[];
}

/**
 * The downscale pod picker (KEP-3189 contract): at least `n` of the candidates, or all of
 * them when there are fewer; `tied_pods` are equally good for the last places. The same
 * cluster state always gives the same answer.
 */
export function pickPodsToRemove(
  namespace: string, n: number, candidates: string[], snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {},
): PickResult {
  const unique = [...new Set(candidates)];
  const unknown: string[] = [];
  const warnings: string[] = [];
  const groups = new Map<string, Shrinking>();
  const known: { pod: SlimPod; group: Shrinking }[] = [];
  for (const name of unique) {
    const pod = snapshot.pod(namespace, name);
    if (!pod || !pod.nodeName) {
      unknown.push(name);
      warnings.push(`${namespace}/${name} ${pod ? 'is not bound' : 'is not in the cache'}: chosen first`);
      continue;
    }
    const resolved = resolveWorkload(pod, snapshot);
    const model = workloadModel(resolved?.ref ?? { kind: 'Pod', namespace, name }, resolved?.object, snapshot, settings, lists);
    let group = groups.get(model.key);
    if (!group) groups.set(model.key, (group = shrinking(model, snapshot)));
    if (!group.remaining.has(pod.name)) group.remaining.set(pod.name, pod);
    known.push({ pod, group });
  }
  unknown.sort();
  if (unknown.length >= n) {
    return { chosen_pods: unknown.slice(0, n), tied_pods: unknown.length > n ? unknown.slice(n) : [], warnings };
  }

  // Remove one pod at a time until n are gone; remember each removal's key.
  const wanted = Math.min(n - unknown.length, known.length);
  const left = new Set(known);
  const picks: { name: string; key: Key }[] = [];
  let lastTies: string[] = [];
  for (let step = 0; step < wanted; step++) {
    for (const g of groups.values()) g.prepare();
    let best: Key | undefined;
    let bestOnes: { pod: SlimPod; group: Shrinking }[] = [];
    for (const c of left) {
      const k = c.group.keyOf(c.pod);
      const cmp = best === undefined ? -1 : compare(k, best);
      if (cmp < 0) { best = k; bestOnes = [c]; } else if (cmp === 0) bestOnes.push(c);
    }
    bestOnes.sort((a, b) => a.pod.name.localeCompare(b.pod.name));
    const pick = bestOnes[0]!;
    left.delete(pick);
    pick.group.remaining.delete(pick.pod.name);
    picks.push({ name: pick.pod.name, key: best! });
    lastTies = bestOnes.map((c) => c.pod.name);
  }
  const last = picks[picks.length - 1];
  if (!last) return { chosen_pods: unknown, tied_pods: [], ...(warnings.length ? { warnings } : {}) };
  // Picks as good as the last one, and the candidates still tied with it, are the tie.
  const tiedPicks = picks.filter((p) => compare(p.key, last.key) === 0).map((p) => p.name);
  const tied = [...new Set([...tiedPicks, ...lastTies])];
  let chosen = [...unknown, ...picks.filter((p) => compare(p.key, last.key) !== 0).map((p) => p.name)];
  let tiedOut = tied;
  if (chosen.length + tied.length === n || tied.length === tiedPicks.length) {
    chosen = [...chosen, ...tiedPicks];
    tiedOut = [];
  }
  return { chosen_pods: chosen, tied_pods: tiedOut.sort(), ...(warnings.length ? { warnings } : {}) };
}

/**
 * Deletion costs that make the native controller remove the workload's pods in the order
 * the picker would: WorkloadSpread workloads get Kruise's values, others their rank in the
 * full removal order (0 = removed first).
 */
export function deletionCosts(model: WorkloadModel, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}): Map<string, number> {
  const pods = [...model.pods()].filter((p) => p.nodeName);
  if (model.policy === 'workloadspread') return workloadSpreadCosts(model, pods, model.workload?.replicas ?? pods.length, snapshot);
  const order = pickPodsToRemove(model.ref.namespace, pods.length, pods.map((p) => p.name), snapshot, settings, lists);
  const ranked = [...order.chosen_pods, ...order.tied_pods];
  return new Map(ranked.map((name, i) => [name, i]));
}

/**
 * Workloads whose ReplicaSet pods get deletion costs: Deployments and standalone ReplicaSets
 * with instance IDs, zone preferences, or a WorkloadSpread. Nothing else is touched.
 */
export function* costManagedWorkloads(snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}): Iterable<WorkloadModel> {
  for (const w of snapshot.allWorkloads()) {
    // A Deployment's ReplicaSets are covered by the Deployment.
    if (!workloadKindSpec(w.kind)?.deletionCost || ownedThrough(w)) continue;
    const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings, lists);
    if (model.policy !== 'none') yield model;
  }
}
