import type { SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { systemClock, type Timers } from '../common/clock.js';

/** Owners created just before their pods: the watch may show a pod's review before its controller. */
const CREATED_WITH_PODS = new Set(['ReplicaSet', 'StatefulSet']);
/** Reviews waiting at once: beyond this, a review is decided without waiting (connections bound it first). */
const MAX_WAITING = 1_000;

/**
 * A Deployment's new ReplicaSet (a StatefulSet) creates its first pods at once, so their reviews
 * may come before the watch shows it; undecided, such a pod would be gated, and a gated pod's
 * WorkloadSpread subset patch can no longer be applied (Kruise's webhook reads the owner from the
 * API server). Admission waits for the watch to show the pod's controller, at most `maxMs`
 * (docs/design.md#admission).
 */
export function ownerArrival(source: SnapshotSource, maxMs: number, clock: Timers = systemClock): (pod: SlimPod) => Promise<void> {
  const waiting = new Map<string, Set<() => void>>();
  let count = 0;
  source.store.onWorkload((w) => {
    const key = `${w.kind}/${w.namespace}/${w.name}`;
    for (const done of waiting.get(key) ?? []) done();
  });
  return (pod) => {
    const owner = pod.owner;
    if (!owner || !CREATED_WITH_PODS.has(owner.kind) || count >= MAX_WAITING || !source.synced()) return Promise.resolve();
    if (source.snapshot.workload(owner.kind as 'ReplicaSet' | 'StatefulSet', pod.namespace, owner.name)) return Promise.resolve();
    const key = `${owner.kind}/${pod.namespace}/${owner.name}`;
    return new Promise<void>((resolve) => {
      const set = waiting.get(key) ?? waiting.set(key, new Set()).get(key)!;
      count++;
      const done = () => {
        cancel();
        count--;
        set.delete(done);
        if (set.size === 0 && waiting.get(key) === set) waiting.delete(key);
        resolve();
      };
      set.add(done);
      const cancel = clock.after(maxMs, done);
    });
  };
}
