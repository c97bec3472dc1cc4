import { ownedThrough, workloadKindSpec } from '../cluster/kinds.js';
import type { SlimPod } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { workloadModel, type SpreadModel, type WorkloadModel, type ZoneListDeps } from './model.js';
import type { PlacementSettings } from './verdict.js';
import { resolveMax, subsetOfPod } from './workloadSpread.js';
import { resolveWorkload, workloadKey } from './workload.js';
import { zoneSequence } from './zoneSequence.js';
import { zoneOf } from '../cluster/objects.js';

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
  /** The workload's bound pods (and candidates): what targets and counts are taken over. */
  remaining: Map<string, SlimPod>;
  addCandidate(pod: SlimPod): void;
  /** Called once, after every candidate is added. */
  start(): void;
  /** The candidate to remove next from this workload, with its removal key. */
  best(): { pod: SlimPod; key: Key } | undefined;
  /** Every candidate whose key is `key` now (a scan: asked once, for the last place). */
  tiedWith(key: Key): SlimPod[];
  remove(pod: SlimPod): void;
}

function better(a: { pod: SlimPod; key: Key }, b: { pod: SlimPod; key: Key } | undefined): boolean {
  if (!b) return true;
  const c = compare(a.key, b.key);
  return c < 0 || (c === 0 && a.pod.name.localeCompare(b.pod.name) < 0);
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
    const members = bySubset.get(subset.name) ?? [];
    // Keys once per pod, not once per comparison.
    const keys = new Map(members.map((p) => [p, withinKey(p, model)]));
    members.sort((a, b) => compare(keys.get(a)!, keys.get(b)!) || a.name.localeCompare(b.name));
    const over = Math.max(0, members.length - resolveMax(subset.maxReplicas, replicas));
    members.forEach((p, j) => costs.set(p.name, j < over ? -100 * (i + 1) : 100 * (n - i)));
  });
  return costs;
}

/**
 * WorkloadSpread subsets: at each step the removal key is Kruise's cost (workloadSpreadCosts
 * for the workload one pod smaller), then the within-subset order. Within a subset the cost
 * only rises along that order, so its best candidate is its first one left; and the pods
 * removed from it are exactly its candidates before that one. So a pod's place among the
 * subset's remaining pods is its place in the sorted subset less the removals: O(n log n) for
 * a whole workload's removal order, where recomputing the costs at every step was O(n² log n)
 * (2,000 pods: 0.5 s of the event loop the extender shares).
 */
function spreadShrinking(model: SpreadModel, snapshot: Snapshot, remaining: Map<string, SlimPod>): Shrinking {
  const { ws } = model;
  const n = ws.subsets.length;
  // By name: the pods drawn are `remaining`'s, whichever object the candidate came as.
  const candidates = new Set<string>();
  const within = new Map<SlimPod, Key>();
  /** Per subset, and last the pods in none: its pods in removal order, and where its candidates are. */
  const queues = Array.from({ length: n + 1 }, () => ({ members: [] as SlimPod[], candidateAt: [] as number[], removed: 0 }));
  const queueOf = new Map<SlimPod, number>();
  let size = 0;
  const costAt = (i: number, at: number): number => {
    if (i === n) return -100 * (n + 1);
    const q = queues[i]!;
    const over = Math.max(0, q.members.length - q.removed - resolveMax(ws.subsets[i]!.maxReplicas, size - 1));
    return at - q.removed < over ? -100 * (i + 1) : 100 * (n - i);
  };
  const keyAt = (i: number, at: number): Key => {
    const pod = queues[i]!.members[at]!;
    return [costAt(i, at), ...within.get(pod)!];
  };
  return {
    remaining,
    addCandidate: (pod) => candidates.add(pod.name),
    start() {
      for (const p of remaining.values()) {
        const s = subsetOfPod(p, ws, snapshot);
        const i = s === undefined ? -1 : ws.subsets.findIndex((x) => x.name === s);
        queueOf.set(p, i < 0 ? n : i);
        queues[i < 0 ? n : i]!.members.push(p);
        within.set(p, withinKey(p, model));
      }
      for (const q of queues) {
        q.members.sort((a, b) => compare(within.get(a)!, within.get(b)!) || a.name.localeCompare(b.name));
        q.members.forEach((p, at) => { if (candidates.has(p.name)) q.candidateAt.push(at); });
      }
      size = remaining.size;
    },
    best() {
      let best: { pod: SlimPod; key: Key } | undefined;
      queues.forEach((q, i) => {
        const at = q.candidateAt[q.removed];
        if (at === undefined) return;
        const c = { pod: q.members[at]!, key: keyAt(i, at) };
        if (better(c, best)) best = c;
      });
      return best;
    },
    tiedWith(key) {
      const out: SlimPod[] = [];
      queues.forEach((q, i) => {
        for (let c = q.removed; c < q.candidateAt.length; c++) if (compare(keyAt(i, q.candidateAt[c]!), key) === 0) out.push(q.members[q.candidateAt[c]!]!);
      });
      return out;
    },
    remove(pod) {
      const q = queues[queueOf.get(pod) ?? n]!;
      // The picker removes what best() chose: this subset's first candidate left.
      if (q.members[q.candidateAt[q.removed]!] !== pod) throw new Error(`WorkloadSpread shrinking: ${pod.name} is not its subset's next candidate`);
      q.removed++;
      remaining.delete(pod.name);
      size--;
    },
  };
}

/**
 * Zone targets: the pod of the zone furthest over its target for the new size goes first.
 * Kept incrementally (candidates sorted once per zone, counts and targets updated per
 * removal), so a whole workload's removal order costs O(n log n + n·zones), not O(n²).
 */
function zoneShrinking(model: WorkloadModel, snapshot: Snapshot, remaining: Map<string, SlimPod>): Shrinking {
  const list = model.zones();
  const zoneOfPod = new Map<SlimPod, string | undefined>();
  const zoneOfCached = (p: SlimPod) => {
    if (!zoneOfPod.has(p)) {
      const node = snapshot.node(p.nodeName);
      zoneOfPod.set(p, node ? zoneOf(node, list.topologyKey) : undefined);
    }
    return zoneOfPod.get(p);
  };
  const perZone = new Map<string | undefined, { pods: SlimPod[]; head: number }>();
  const within = new Map<SlimPod, Key>();
  const counts = new Map<string | undefined, number>();
  const target = new Map<string, number>();
  let sequence: string[] = [];
  let size = 0;
  // A pod outside the zone list (or on an unknown node) is as far over as it gets.
  const excess = (z: string | undefined) => (z !== undefined && target.has(z) ? counts.get(z)! - target.get(z)! : Number.MAX_SAFE_INTEGER);
  const keyOf = (pod: SlimPod): Key => [-excess(zoneOfCached(pod)), ...within.get(pod)!];
  return {
    remaining,
    addCandidate(pod) {
      const z = zoneOfCached(pod);
      const q = perZone.get(z) ?? perZone.set(z, { pods: [], head: 0 }).get(z)!;
      q.pods.push(pod);
      within.set(pod, withinKey(pod, model));
    },
    start() {
      for (const q of perZone.values()) q.pods.sort((a, b) => compare(within.get(a)!, within.get(b)!) || a.name.localeCompare(b.name));
      for (const p of remaining.values()) counts.set(zoneOfCached(p), (counts.get(zoneOfCached(p)) ?? 0) + 1);
      size = remaining.size;
      // Targets from the prefix-stable sequence, for every kind: the planner's rounding up would
      // leave a zone empty at small sizes (4 over 3 zones plans 2/2/0), the sequence gives 2/1/1.
      sequence = zoneSequence(list.zones, size, model.preferences.sequence);
      for (const z of list.zones) target.set(z, 0);
      for (const z of sequence.slice(0, Math.max(0, size - 1))) target.set(z, target.get(z)! + 1);
    },
    best() {
      let best: { pod: SlimPod; key: Key } | undefined;
      for (const q of perZone.values()) {
        const pod = q.pods[q.head];
        if (!pod) continue;
        const c = { pod, key: keyOf(pod) };
        if (better(c, best)) best = c;
      }
      return best;
    },
    tiedWith(key) {
      const out: SlimPod[] = [];
      for (const q of perZone.values()) for (let i = q.head; i < q.pods.length; i++) if (compare(keyOf(q.pods[i]!), key) === 0) out.push(q.pods[i]!);
      return out;
    },
    remove(pod) {
      const z = zoneOfCached(pod);
      const q = perZone.get(z)!;
      const i = q.pods.indexOf(pod, q.head);
      // Removals take the head (best()'s pick): move past it rather than shift the array.
      if (i === q.head) q.head++;
      else q.pods.splice(i, 1);
      counts.set(z, counts.get(z)! - 1);
      remaining.delete(pod.name);
      size--;
      // The target for the next removal is the sequence's first size−1 seats: one seat fewer.
      const dropped = sequence[size - 1];
      if (size >= 1 && dropped !== undefined) target.set(dropped, target.get(dropped)! - 1);
    },
  };
}

function shrinking(model: WorkloadModel, snapshot: Snapshot): Shrinking {
  const remaining = new Map<string, SlimPod>();
  for (const p of model.pods()) if (p.nodeName) remaining.set(p.name, p);
  return model.policy === 'workloadspread' ? spreadShrinking(model, snapshot, remaining) : zoneShrinking(model, snapshot, remaining);
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
  let known = 0;
  for (const name of unique) {
    const pod = snapshot.pod(namespace, name);
    if (!pod || !pod.nodeName) {
      unknown.push(name);
      warnings.push(`${namespace}/${name} ${pod ? 'is not bound' : 'is not in the cache'}: chosen first`);
      continue;
    }
    const resolved = resolveWorkload(pod, snapshot);
    const ref = resolved?.ref ?? { kind: 'Pod', namespace, name };
    let group = groups.get(workloadKey(ref));
    if (!group) groups.set(workloadKey(ref), (group = shrinking(workloadModel(ref, resolved?.object, snapshot, settings, lists), snapshot)));
    if (!group.remaining.has(pod.name)) group.remaining.set(pod.name, pod);
    group.addCandidate(pod);
    known++;
  }
  unknown.sort();
  if (unknown.length >= n) {
    return { chosen_pods: unknown.slice(0, n), tied_pods: unknown.length > n ? unknown.slice(n) : [], warnings };
  }

  // Remove one pod at a time until n are gone; remember each removal's key.
  const wanted = Math.min(n - unknown.length, known);
  for (const g of groups.values()) g.start();
  const picks: { name: string; key: Key }[] = [];
  let lastTies: string[] = [];
  for (let step = 0; step < wanted; step++) {
    let best: { pod: SlimPod; key: Key; group: Shrinking } | undefined;
    for (const group of groups.values()) {
      const b = group.best();
      if (b && better(b, best)) best = { ...b, group };
    }
    if (!best) break;
    // The candidates as good as the last pick, before it is taken: the tie for the last place.
    if (step === wanted - 1) lastTies = [...groups.values()].flatMap((g) => g.tiedWith(best.key)).map((p) => p.name);
    best.group.remove(best.pod);
    picks.push({ name: best.pod.name, key: best.key });
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
export function* costManagedWorkloads(
  snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}, only?: ReadonlySet<string>,
): Iterable<WorkloadModel> {
  for (const w of snapshot.allWorkloads()) {
    if (only && !only.has(workloadKey(w))) continue;
    // A Deployment's ReplicaSets are covered by the Deployment.
    if (!workloadKindSpec(w.kind)?.deletionCost || ownedThrough(w)) continue;
    const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings, lists);
    if (model.policy !== 'none') yield model;
  }
}
