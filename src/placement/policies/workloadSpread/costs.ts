import type { SlimPod } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { better, compare, withinKey, type Key, type Shrinking } from '../../shrinking.js';
import { resolveMax, subsetOfPod } from './subsets.js';
import type { SpreadModel } from './subsets.js';

/**
 * Kruise's deletion cost for a WorkloadSpread pod (docs/design.md#workloadspread): subset i of N keeps
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
export function spreadShrinking(model: SpreadModel, snapshot: Snapshot, remaining: Map<string, SlimPod>): Shrinking {
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
