import { zoneOf, type SlimPod } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { WorkloadFacts } from './workloadFacts.js';
import { zoneSequence } from './zoneSequence.js';

// Scale-down (docs/design.md#scale-down): one removal at a time, as the workload shrinks. A
// policy says how its workload shrinks (WorkloadSpread: by Kruise's costs); the default is the
// zone furthest over its target for the new size. Within a zone or subset: the highest ordinal
// or instance ID, then not-ready pods, then the newest.

/** Lower sorts first, is removed first. Equal keys are equally good. */
export type Key = number[];

export const compare = (a: Key, b: Key) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
};

/** One workload's pods while the simulated scale-down removes them one by one. */
export interface Shrinking {
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

export function better(a: { pod: SlimPod; key: Key }, b: { pod: SlimPod; key: Key } | undefined): boolean {
  if (!b) return true;
  const c = compare(a.key, b.key);
  return c < 0 || (c === 0 && a.pod.name.localeCompare(b.pod.name) < 0);
}

/** Within a zone or subset: highest seat first, then not ready, then newest. */
export function withinKey(pod: SlimPod, model: Pick<WorkloadFacts, 'seat'>): Key {
  return [-model.seat(pod).index, pod.ready ? 1 : 0, -pod.createdAt];
}

interface Candidate { pod: SlimPod; zone: string | undefined; within: Key }

/**
 * Zone targets: the pod of the zone furthest over its target for the new size goes first.
 * Kept incrementally (candidates sorted once per zone, counts and targets updated per
 * removal), so a whole workload's removal order costs O(n log n + n·zones), not O(n²).
 */
export function zoneShrinking(model: WorkloadFacts, snapshot: Snapshot, remaining: Map<string, SlimPod>): Shrinking {
  const list = model.zones();
  // Zones by node name: a workload's pods share nodes, and each is asked for again in start().
  const zoneOfNode = new Map<string, string | undefined>();
  const zoneOfPod = (p: SlimPod) => {
    if (zoneOfNode.has(p.nodeName)) return zoneOfNode.get(p.nodeName);
    const node = snapshot.node(p.nodeName);
    const z = node ? zoneOf(node, list.topologyKey) : undefined;
    zoneOfNode.set(p.nodeName, z);
    return z;
  };
  const perZone = new Map<string | undefined, { members: Candidate[]; head: number }>();
  const candidateOf = new Map<SlimPod, Candidate>();
  const counts = new Map<string | undefined, number>();
  const target = new Map<string, number>();
  let sequence: string[] = [];
  let size = 0;
  // A pod outside the zone list (or on an unknown node) is as far over as it gets.
  const excess = (z: string | undefined) => (z !== undefined && target.has(z) ? counts.get(z)! - target.get(z)! : Number.MAX_SAFE_INTEGER);
  const keyOf = (c: Candidate, over = excess(c.zone)): Key => [-over, ...c.within];
  return {
    remaining,
    addCandidate(pod) {
      const c: Candidate = { pod, zone: zoneOfPod(pod), within: withinKey(pod, model) };
      const q = perZone.get(c.zone) ?? perZone.set(c.zone, { members: [], head: 0 }).get(c.zone)!;
      q.members.push(c);
      candidateOf.set(pod, c);
    },
    start() {
      for (const q of perZone.values()) q.members.sort((a, b) => compare(a.within, b.within) || a.pod.name.localeCompare(b.pod.name));
      for (const p of remaining.values()) {
        const z = zoneOfPod(p);
        counts.set(z, (counts.get(z) ?? 0) + 1);
      }
      size = remaining.size;
      // Targets from the prefix-stable sequence, for every kind: the planner's rounding up would
      // leave a zone empty at small sizes (4 over 3 zones plans 2/2/0), the sequence gives 2/1/1.
      sequence = zoneSequence(list.zones, size, model.preferences.sequence);
      for (const z of list.zones) target.set(z, 0);
      for (const z of sequence.slice(0, Math.max(0, size - 1))) target.set(z, target.get(z)! + 1);
    },
    best() {
      // As `better` over each zone's head, without a key per head: only the pick gets one.
      let best: Candidate | undefined;
      let bestOver = 0;
      for (const q of perZone.values()) {
        const c = q.members[q.head];
        if (!c) continue;
        const over = excess(c.zone);
        const order = !best ? -1 : over !== bestOver ? bestOver - over : compare(c.within, best.within);
        if (order < 0 || (order === 0 && c.pod.name.localeCompare(best!.pod.name) < 0)) {
          best = c;
          bestOver = over;
        }
      }
      return best && { pod: best.pod, key: keyOf(best, bestOver) };
    },
    tiedWith(key) {
      const out: SlimPod[] = [];
      for (const q of perZone.values()) {
        for (let i = q.head; i < q.members.length; i++) if (compare(keyOf(q.members[i]!), key) === 0) out.push(q.members[i]!.pod);
      }
      return out;
    },
    remove(pod) {
      const c = candidateOf.get(pod)!;
      const q = perZone.get(c.zone)!;
      const i = q.members.indexOf(c, q.head);
      // Removals take the head (best()'s pick): move past it rather than shift the array.
      if (i === q.head) q.head++;
      else q.members.splice(i, 1);
      counts.set(c.zone, counts.get(c.zone)! - 1);
      remaining.delete(pod.name);
      size--;
      // The target for the next removal is the sequence's first size−1 seats: one seat fewer.
      const dropped = sequence[size - 1];
      if (size >= 1 && dropped !== undefined) target.set(dropped, target.get(dropped)! - 1);
    },
  };
}
