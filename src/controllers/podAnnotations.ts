import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { objectPath, ownedThrough, POD_KIND } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { SnapshotSource } from '../cluster/source.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { WorkResult } from '../common/workQueue.js';
import type { Metrics } from '../metrics/metrics.js';
import { resolveWorkload, workloadByKey, workloadKey } from '../placement/workload.js';
import { reconciler } from '../common/reconciler.js';

export interface PacingOptions {
  intervalSeconds: number;
  patchesPerSecond: number;
}

/** What a conditional write reads of the stored pod. */
export interface StoredPod { metadata?: { resourceVersion?: string; annotations?: Record<string, string> }; spec?: { nodeName?: string } }

/** One annotation the leader keeps on pods: what it should say, and what else to do per workload. */
export interface PodAnnotator {
  /** The metrics label of its writes. */
  action: string;
  annotation: string;
  /** The cached value. */
  current(pod: SlimPod): string | undefined;
  /** The wanted value on each pod of `w`; nothing when the annotator does not manage `w`. */
  desired(snapshot: Snapshot, w: SlimWorkload): Iterable<{ pod: SlimPod; value: string }>;
  /** Other writes for the pods of `w`, each by a key of its own: queued after its values, on the same paced queue. */
  otherWrites?(snapshot: Snapshot, w: SlimWorkload): Iterable<{ key: string; write(): Promise<void> }>;
  /**
   * Written only over the pod as the cache showed it: read first, patched with the resourceVersion
   * read and the labels and annotations this returns beside the value; undefined (the stored pod
   * is not what the value was computed from) skips it until the watch brings the change.
   */
  conditional?(pod: SlimPod, value: string, stored: StoredPod): { labels?: Record<string, unknown>; annotations?: Record<string, unknown> } | undefined;
}

/** How long a changed workload waits, gathering the pod changes of a burst, before it is reconciled. */
const GATHER_MS = 200;

/**
 * Keeps an annotation on pods (docs/design.md#scale-down, #instance-ids) on two work queues: by
 * workload, what each pod should say (a pod change queues its workload, and every
 * `intervalSeconds` all are queued); by pod, the writes, a paced queue (each write takes its turn
 * from the token bucket as it is queued, `patchesPerSecond`). Patches only what differs from the
 * cached value, so a restart writes nothing when the values are already right. Runs only while
 * started (the Lease's holder).
 */
export function podAnnotationController(
  api: ApiClient, source: SnapshotSource, annotator: PodAnnotator, opts: PacingOptions, log: Logger, metrics: Metrics, clock: Timers = systemClock,
) {
  // Values patched that the watch does not show yet: not written again meanwhile, so a pod is
  // written once per change even when a reconcile comes before the watch catches up.
  const written = new Map<string, string>();
  /** The writes queued, by key (a pod's, or another write's): the newest wins until its turn comes. */
  const due = new Map<string, () => Promise<void>>();
  const common = {
    resyncMs: opts.intervalSeconds * 1000, ready: source.synced, clock,
    onError: (key: string, err: Error) => log.error({ key, err: err.message }, `${annotator.annotation}: reconcile failed`),
  };
  const queue = reconciler({
    ...common, reconcile,
    keys: function *() { for (const w of source.snapshot.allWorkloads()) if (!ownedThrough(w)) yield workloadKey(w); },
  });
  // One write at a time, in the order queued: a workload's values, then its other writes.
  const writes = reconciler({ ...common, keys: () => due.keys(), reconcile: writeDue, pace: { perSecond: opts.patchesPerSecond, burst: 1 } });

  /** Queues the writes of one workload: its pods' values that differ from the cache, then the annotator's others. */
  async function reconcile(key: string): Promise<WorkResult> {
    const snapshot = source.snapshot;
    const w = workloadByKey(snapshot, key);
    if (!w) return;
    for (const { pod, value } of [...annotator.desired(snapshot, w)]) {
      const podKey = `${pod.namespace}/${pod.name}`;
      if (annotator.current(pod) === value) {
        written.delete(podKey);
        due.delete(podKey);
        continue;
      }
      if (written.get(podKey) !== value) queueWrite(podKey, () => patchIfStill(pod, podKey, value));
    }
    for (const other of annotator.otherWrites?.(snapshot, w) ?? []) queueWrite(other.key, other.write);
  }

  function queueWrite(key: string, write: () => Promise<void>): void {
    due.set(key, write);
    writes.add(key);
  }

  async function writeDue(key: string): Promise<WorkResult> {
    const write = due.get(key);
    due.delete(key);
    await write?.();
  }

  /** Patches `value` computed from the cache's view `pod` unless the cache shows it, or it was written, since. */
  async function patchIfStill(pod: SlimPod, key: string, value: string): Promise<void> {
    const now = source.snapshot.pod(pod.namespace, pod.name);
    if (!now || annotator.current(now) === value || written.get(key) === value) return;
    await patch(pod, key, value);
  }

  /** The merge patch's metadata: the value alone, or (conditional) over the pod read again, undefined when it changed since the cache's view. */
  async function metadataFor(pod: SlimPod, path: string, value: string): Promise<Record<string, unknown> | undefined> {
    const annotations = { [annotator.annotation]: value };
    if (!annotator.conditional) return { annotations };
    const got = await api.request('GET', path, { timeoutMs: 10_000 });
    if (got.status !== 200) throw new Error(`GET ${path}: ${got.status} ${statusMessage(got.body)}`);
    const stored = JSON.parse(got.body) as StoredPod;
    const extra = annotator.conditional(pod, value, stored);
    if (!extra) return undefined;
    const labels = extra.labels ? { labels: extra.labels } : {};
    return { resourceVersion: stored.metadata?.resourceVersion, ...labels, annotations: { ...extra.annotations, ...annotations } };
  }

  async function patch(pod: SlimPod, key: string, value: string): Promise<void> {
    // Counted as written from the moment it is sent; forgotten again if it fails.
    written.set(key, value);
    const path = objectPath(POD_KIND, pod.namespace, pod.name);
    try {
      const metadata = await metadataFor(pod, path, value);
      if (!metadata) {
        // The pod changed since the cache's view: its watch event queues the workload again.
        written.delete(key);
        return;
      }
      const body = JSON.stringify({ metadata });
      const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs: 10_000 });
      const ok = res.status === 200;
      if (!ok) written.delete(key);
      metrics.actuatorWrites.inc({ action: annotator.action, result: ok ? 'ok' : 'error' });
      if (!ok && res.status !== 404) log.warn({ pod: key, status: res.status, err: statusMessage(res.body) }, `${annotator.annotation} not written`);
    } catch (err) {
      written.delete(key);
      metrics.actuatorWrites.inc({ action: annotator.action, result: 'error' });
      log.warn({ pod: key, err: (err as Error).message }, `${annotator.annotation} not written`);
    }
  }

  // A pod change is reconciled soon, not at the next full interval, and only its workload.
  source.store.onPod((_type, pod) => {
    if (!queue.running()) return;
    const ref = resolveWorkload(pod, source.snapshot)?.ref;
    if (ref) queue.addAfter(workloadKey(ref), GATHER_MS);
  });

  // Starts (or, after stop, restarts: leadership comes and goes) with every workload queued; no patch starts after stop resolves.
  return {
    start() {
      writes.start();
      queue.start();
    },
    async stop() {
      await Promise.all([queue.stop(), writes.stop()]);
      written.clear();
      due.clear();
    },
    async idle() {
      await queue.idle();
      await writes.idle();
    },
  };
}
