import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { ANNOTATION } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics.js';
import { costManagedWorkloads, deletionCosts } from '../placement/downscale.js';
import type { PlacementSettings } from '../placement/verdict.js';
import { workloadPods } from '../placement/workload.js';

export interface DeletionCostOptions {
  intervalSeconds: number;
  patchesPerSecond: number;
}

/**
 * Keeps controller.kubernetes.io/pod-deletion-cost on the pods of managed ReplicaSets so the
 * native controller scales down in the picker's order (DESIGN §7). Patches only what differs
 * from the cached value, so a restart writes nothing when the costs are already right;
 * patches are paced by a token bucket.
 */
export function deletionCostController(api: ApiClient, source: SnapshotSource, settings: PlacementSettings, opts: DeletionCostOptions, log: Logger, metrics: Metrics) {
  const queue = new Map<string, { namespace: string; pod: string; cost: string }>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  let stopped = false;
  let dirty = false;

  /** Desired costs of every managed pod whose cached cost differs, queued by pod. */
  function reconcile(): number {
    const snapshot = source.snapshot;
    let queued = 0;
    for (const { ref, workload } of costManagedWorkloads(snapshot, settings)) {
      const costs = deletionCosts(ref, workload, snapshot, settings);
      for (const pod of workloadPods(ref, snapshot)) {
        const want = costs.get(pod.name);
        if (want === undefined || pod.deletionCost === String(want)) continue;
        queue.set(`${pod.namespace}/${pod.name}`, { namespace: pod.namespace, pod: pod.name, cost: String(want) });
        queued++;
      }
    }
    if (queued > 0) draining ??= drain().finally(() => { draining = undefined; });
    return queued;
  }

  async function drain(): Promise<void> {
    const spacing = 1000 / opts.patchesPerSecond;
    while (queue.size > 0 && !stopped) {
      const [key, item] = queue.entries().next().value as [string, { namespace: string; pod: string; cost: string }];
      queue.delete(key);
      const started = Date.now();
      const path = `/api/v1/namespaces/${encodeURIComponent(item.namespace)}/pods/${encodeURIComponent(item.pod)}`;
      const body = JSON.stringify({ metadata: { annotations: { [ANNOTATION.deletionCost]: item.cost } } });
      try {
        const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs: 10_000 });
        const ok = res.status === 200;
        metrics.actuatorWrites.inc({ action: 'deletion-cost', result: ok ? 'ok' : 'error' });
        if (!ok && res.status !== 404) log.warn({ pod: key, status: res.status, err: statusMessage(res.body) }, 'deletion cost not written');
      } catch (err) {
        metrics.actuatorWrites.inc({ action: 'deletion-cost', result: 'error' });
        log.warn({ pod: key, err: (err as Error).message }, 'deletion cost not written');
      }
      const wait = spacing - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  function tick(): void {
    if (stopped) return;
    if (source.synced()) {
      dirty = false;
      reconcile();
    }
    timer = setTimeout(tick, dirty ? 200 : opts.intervalSeconds * 1000);
    timer.unref();
  }

  // A pod change is reconciled soon, not at the next full interval.
  source.store.onPod(() => {
    if (!dirty && !stopped) {
      dirty = true;
      clearTimeout(timer);
      timer = setTimeout(tick, 200);
      timer.unref();
    }
  });

  return {
    reconcile,
    start() {
      timer = setTimeout(tick, 0);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await draining;
    },
    /** Resolves when the queued patches are written. */
    async settle() {
      await draining;
    },
  };
}
