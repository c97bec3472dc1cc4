import { holdsSeat, type SlimPod } from '../cluster/objects.js';
import type { NodeUsage, Snapshot } from '../cluster/store.js';

// The cluster as it would be once some pods are gone: how preemption's victims are replayed
// against a decision (as kube-scheduler's PodTopologySpread replays them with RemovePod).

/** `snapshot` without the pods whose UIDs are `gone`; everything else read through. */
export function withoutPods(snapshot: Snapshot, gone: ReadonlySet<string>): Snapshot {
  if (gone.size === 0) return snapshot;
  const victims = [...gone].map((uid) => snapshot.podByUid(uid)).filter((p): p is SlimPod => p !== undefined);
  const kept = (p: SlimPod | undefined) => (p && !gone.has(p.uid) ? p : undefined);
  function *filtered(pods: Iterable<SlimPod>): Iterable<SlimPod> {
    for (const p of pods) if (!gone.has(p.uid)) yield p;
  }
  const view: Snapshot = Object.create(snapshot);
  return Object.assign(view, {
    pod: (namespace: string, name: string) => kept(snapshot.pod(namespace, name)),
    podByUid: (uid: string) => kept(snapshot.podByUid(uid)),
    podsOwnedBy: (kind: string, namespace: string, name: string) => filtered(snapshot.podsOwnedBy(kind, namespace, name)),
    podsOnNode: (node: string) => filtered(snapshot.podsOnNode(node)),
    seatedPodsPerNode(kind: string, namespace: string, name: string): ReadonlyMap<string, number> {
      const counts = snapshot.seatedPodsPerNode(kind, namespace, name);
      const mine = victims.filter((p) => p.nodeName && holdsSeat(p) && p.namespace === namespace && p.owner?.kind === kind && p.owner.name === name);
      if (mine.length === 0) return counts;
      const out = new Map(counts);
      for (const p of mine) {
        const n = (out.get(p.nodeName) ?? 0) - 1;
        if (n > 0) out.set(p.nodeName, n);
        else out.delete(p.nodeName);
      }
      return out;
    },
    nodeUsage(node: string): NodeUsage {
      const u = snapshot.nodeUsage(node);
      const here = victims.filter((p) => p.nodeName === node && !p.finished);
      if (here.length === 0) return u;
      return here.reduce((acc, p) => ({ cpuMilli: acc.cpuMilli - p.cpuMilli, memory: acc.memory - p.memory, pods: acc.pods - 1 }), u);
    },
  });
}
