import type { SlimPod } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { better, compare, withinKey, type Key, type Shrinking } from '../../shrinking.js';
import { resolveMax, subsetOfPod } from './subsets.js';
import { latestVersion, podVersion, subsetRank } from './versions.js';
import type { SpreadModel } from './subsets.js';

/**
 * Kruise's deletion cost for a WorkloadSpread pod (docs/design.md#workloadspread), per revision of
 * the pod template: within the current revision subset i of N keeps 100·(N−i) for its first
 * maxReplicas pods and the pods over its max get −100·(i+1); within an older revision the
 * subsets count from the last (i becomes N−1−i), so a rollout's scale-down empties the old
 * revision's capped subsets first while the new revision fills them. Pods in no subset: −100·(N+1).
 * Which pods of a subset are over its max: those removed first.
 */
export function workloadSpreadCosts(model: SpreadModel, pods: Iterable<SlimPod>, replicas: number, snapshot: Snapshot): Map<string, number> {
  const { ws } = model;
  const n = ws.subsets.length;
  const latest = latestVersion(model, snapshot);
  const groups = new Map<string, { subset: number; rank: number; members: SlimPod[] }>();
  const costs = new Map<string, number>();
  for (const p of pods) {
    const s = subsetOfPod(p, ws, snapshot);
    const i = s === undefined ? -1 : ws.subsets.findIndex((x) => x.name === s);
    if (i < 0) {
      costs.set(p.name, -100 * (n + 1));
      continue;
    }
    const version = podVersion(p);
    const key = `${version}\n${i}`;
    (groups.get(key) ?? groups.set(key, { subset: i, rank: subsetRank(i, n, version, latest), members: [] }).get(key)!).members.push(p);
  }
  for (const { subset: i, rank, members } of groups.values()) {
    const subset = ws.subsets[i]!;
    // Keys once per pod, not once per comparison.
    const keys = new Map(members.map((p) => [p, withinKey(p, model)]));
    members.sort((a, b) => compare(keys.get(a)!, keys.get(b)!) || a.name.localeCompare(b.name));
    const over = Math.max(0, members.length - resolveMax(subset.maxReplicas, replicas));
    members.forEach((p, j) => costs.set(p.name, j < over ? -100 * (rank + 1) : 100 * (n - rank)));
  }
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
  const latest = latestVersion(model, snapshot);
  // By name: the pods drawn are `remaining`'s, whichever object the candidate came as.
  const candidates = new Set<string>();
  const within = new Map<SlimPod, Key>();
  /** Per revision and subset (subset −1: the pods in none): its pods in removal order, and where its candidates are. */
  interface Queue { subset: number; rank: number; members: SlimPod[]; candidateAt: number[]; removed: number }
  const queues = new Map<string, Queue>();
  const queueOf = new Map<SlimPod, Queue>();
  let size = 0;
  const costAt = (q: Queue, at: number): number => {
    if (q.subset < 0) return -100 * (n + 1);
    const over = Math.max(0, q.members.length - q.removed - resolveMax(ws.subsets[q.subset]!.maxReplicas, size - 1));
    return at - q.removed < over ? -100 * (q.rank + 1) : 100 * (n - q.rank);
  };
  const keyAt = (q: Queue, at: number): Key => [costAt(q, at), ...within.get(q.members[at]!)!];
  return {
    remaining,
    addCandidate: (pod) => candidates.add(pod.name),
    start() {
      for (const p of remaining.values()) {
        const s = subsetOfPod(p, ws, snapshot);
        const i = s === undefined ? -1 : ws.subsets.findIndex((x) => x.name === s);
        const version = i < 0 ? '' : podVersion(p);
        const key = `${version}\n${i}`;
        const rank = i < 0 ? n : subsetRank(i, n, version, latest);
        const q = queues.get(key) ?? queues.set(key, { subset: i, rank, members: [], candidateAt: [], removed: 0 }).get(key)!;
        queueOf.set(p, q);
        q.members.push(p);
        within.set(p, withinKey(p, model));
      }
      for (const q of queues.values()) {
        q.members.sort((a, b) => compare(within.get(a)!, within.get(b)!) || a.name.localeCompare(b.name));
        q.members.forEach((p, at) => { if (candidates.has(p.name)) q.candidateAt.push(at); });
      }
      size = remaining.size;
    },
    best() {
      let best: { pod: SlimPod; key: Key } | undefined;
      for (const q of queues.values()) {
        const at = q.candidateAt[q.removed];
        if (at === undefined) continue;
        const c = { pod: q.members[at]!, key: keyAt(q, at) };
        if (better(c, best)) best = c;
      }
      return best;
    },
    tiedWith(key) {
      const out: SlimPod[] = [];
      for (const q of queues.values()) {
        for (let c = q.removed; c < q.candidateAt.length; c++) if (compare(keyAt(q, q.candidateAt[c]!), key) === 0) out.push(q.members[q.candidateAt[c]!]!);
      }
      return out;
    },
    remove(pod) {
      const q = queueOf.get(pod);
      // The picker removes what best() chose: its queue's first candidate left.
      if (!q || q.members[q.candidateAt[q.removed]!] !== pod) throw new Error(`WorkloadSpread shrinking: ${pod.name} is not its subset's next candidate`);
      q.removed++;
      remaining.delete(pod.name);
      size--;
    },
  };
}
