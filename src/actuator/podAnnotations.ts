import type { Logger } from 'pino';
import { sleep } from '../common/clock.js';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { objectPath, POD_KIND } from '../cluster/kinds.js';
import type { SlimPod } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics.js';
import { resolveWorkload, workloadKey } from '../placement/workload.js';

export interface PacingOptions {
  intervalSeconds: number;
  patchesPerSecond: number;
}

/** One annotation the leader keeps on pods: what it should say, and what else to do per reconcile. */
export interface PodAnnotator {
  /** The metrics label of its writes. */
  action: string;
  annotation: string;
  /** The cached value. */
  current(pod: SlimPod): string | undefined;
  /** The wanted value of pods it manages; `only`: just these workloads (by key). */
  desired(snapshot: Snapshot, only?: ReadonlySet<string>): Iterable<{ pod: SlimPod; value: string }>;
  /** Leader-only work for the same workloads, after the values are queued. */
  alsoReconcile?(snapshot: Snapshot, only?: ReadonlySet<string>): void;
}

/**
 * Keeps an annotation on pods (docs/design.md#scale-down, #instance-ids). Patches only what
 * differs from the cached value, so a restart writes nothing when the values are already
 * right; patches are paced by a token bucket. Runs only while started (the Lease's holder).
 */
export function podAnnotationController(api: ApiClient, source: SnapshotSource, annotator: PodAnnotator, opts: PacingOptions, log: Logger, metrics: Metrics) {
  const queue = new Map<string, { namespace: string; pod: string; value: string }>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  // Off until started: a follower replica never writes.
  let stopped = true;
  let dirty = false;
  /** Workloads with a pod change since the last reconcile; a full reconcile runs every interval. */
  const changed = new Set<string>();
  let lastFull = 0;

  // Values patched that the watch does not show yet: not queued again meanwhile, so a pod is
  // written once per change even when a recompute comes before the watch catches up.
  const written = new Map<string, string>();

  /** Queues every managed pod whose cached value differs; drained while started. Returns how many were queued. */
  function reconcile(only?: ReadonlySet<string>): number {
    const snapshot = source.snapshot;
    let queued = 0;
    const live = new Set<string>();
    for (const { pod, value } of annotator.desired(snapshot, only)) {
      const key = `${pod.namespace}/${pod.name}`;
      live.add(key);
      if (annotator.current(pod) === value) {
        written.delete(key);
        continue;
      }
      if (written.get(key) === value || queue.get(key)?.value === value) continue;
      queue.set(key, { namespace: pod.namespace, pod: pod.name, value });
      queued++;
    }
    if (!only) for (const key of written.keys()) if (!live.has(key)) written.delete(key);
    if (queued > 0 && !stopped) draining ??= drain().finally(() => { draining = undefined; });
    if (!stopped) annotator.alsoReconcile?.(snapshot, only);
    return queued;
  }

  async function drain(): Promise<void> {
    const spacing = 1000 / opts.patchesPerSecond;
    while (queue.size > 0 && !stopped) {
      const [key, item] = queue.entries().next().value as [string, { namespace: string; pod: string; value: string }];
      queue.delete(key);
      // Counted as written from the moment it is sent; forgotten again if it fails.
      written.set(key, item.value);
      const started = Date.now();
      const path = objectPath(POD_KIND, item.namespace, item.pod);
      const body = JSON.stringify({ metadata: { annotations: { [annotator.annotation]: item.value } } });
      try {
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
      const wait = spacing - (Date.now() - started);
      if (wait > 0) await sleep(wait);
    }
  }

  function tick(): void {
    if (stopped) return;
    if (source.synced()) {
      dirty = false;
      // (A little early counts: the interval timer and the wall clock do not tick together.)
      if (Date.now() - lastFull >= opts.intervalSeconds * 1000 - 100) {
        lastFull = Date.now();
        changed.clear();
        reconcile();
      } else if (changed.size > 0) {
        const only = new Set(changed);
        changed.clear();
        reconcile(only);
      }
    }
    timer = setTimeout(tick, dirty ? 200 : opts.intervalSeconds * 1000);
    timer.unref();
  }

  // A pod change is reconciled soon, not at the next full interval, and only its workload.
  source.store.onPod((_type, pod) => {
    if (stopped) return;
    const ref = resolveWorkload(pod, source.snapshot)?.ref;
    if (ref) changed.add(workloadKey(ref));
    if (!dirty) {
      dirty = true;
      clearTimeout(timer);
      timer = setTimeout(tick, 200);
      timer.unref();
    }
  });

  return {
    reconcile,
    /** Starts (or, after stop, restarts: leadership comes and goes) with an empty queue. */
    start() {
      stopped = false;
      lastFull = 0;
      queue.clear();
      clearTimeout(timer);
      timer = setTimeout(tick, 0);
      timer.unref();
    },
    /** No patch starts after this resolves. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await draining;
      queue.clear();
      written.clear();
    },
    /** Resolves when the queued patches are written. */
    async settle() {
      await draining;
    },
  };
}

export type PodAnnotationController = ReturnType<typeof podAnnotationController>;
