import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import { systemClock, type Timers } from '../common/clock.js';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { statusDigest, type SlimWorkloadSpread } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ZoneListDeps } from '../placement/model.js';
import { workloadSpreadStatus } from '../placement/policies/workloadSpread/status.js';
import type { ReservationView } from '../placement/reservations.js';
import type { PlacementSettings } from '../placement/settings.js';
import { reconciler } from './reconciler.js';

export interface StatusOptions {
  intervalSeconds: number;
  /** Admission applies subsets' patches (docs/design.md#admission): nothing to warn about. */
  patchesApplied: boolean;
}

/** How long a WorkloadSpread waits after a pod change of its namespace, gathering a burst, before its status is reconciled. */
const GATHER_MS = 500;

/**
 * Standalone mode (no OpenKruise controller, workloadSpread.writeStatus): the leader keeps each
 * WorkloadSpread's status as Kruise's controller would, through the status subresource, and,
 * without admission, warns once per generation that a subset's `patch` is not applied (docs/design.md#workloadspread).
 * On the work queue by WorkloadSpread: a pod change queues those of its namespace, and all are
 * queued every `intervalSeconds`. Writes only what differs from the cached status.
 */
export function workloadSpreadStatusController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, reservations: ReservationView, events: Pick<EventRecorder, 'record'>,
  opts: StatusOptions, log: Logger, metrics: Metrics, lists: ZoneListDeps = {}, clock: Timers = systemClock,
) {
  /** Digests written that the watch may not show yet, by WorkloadSpread key. */
  const written = new Map<string, string>();
  const warned = new Set<string>();
  const queue = reconciler({
    keys: function *() { for (const ws of source.snapshot.allWorkloadSpreads()) yield `${ws.namespace}/${ws.name}`; },
    reconcile,
    resyncMs: opts.intervalSeconds * 1000,
    ready: source.synced,
    clock,
    onError: (key, err) => log.warn({ workloadSpread: key, err: err.message }, 'WorkloadSpread status pass failed'),
  });

  async function write(ws: SlimWorkloadSpread, status: object, digest: string, key: string): Promise<void> {
    const [group, version] = ws.apiVersion.split('/');
    const path = `/apis/${group}/${version}/namespaces/${encodeURIComponent(ws.namespace)}/workloadspreads/${encodeURIComponent(ws.name)}/status`;
    written.set(key, digest);
    try {
      const res = await api.request('PATCH', path, { body: JSON.stringify({ status }), contentType: 'application/merge-patch+json', timeoutMs: 10_000 });
      const ok = res.status === 200;
      metrics.actuatorWrites.inc({ action: 'workloadspread-status', result: ok ? 'ok' : 'error' });
      if (!ok) {
        written.delete(key);
        if (res.status !== 404) log.warn({ workloadSpread: key, status: res.status, err: statusMessage(res.body) }, 'WorkloadSpread status not written');
      }
    } catch (err) {
      written.delete(key);
      metrics.actuatorWrites.inc({ action: 'workloadspread-status', result: 'error' });
      log.warn({ workloadSpread: key, err: (err as Error).message }, 'WorkloadSpread status not written');
    }
  }

  async function reconcile(key: string): Promise<void> {
    const snapshot = source.snapshot;
    const [namespace, name] = key.split('/');
    let ws: SlimWorkloadSpread | undefined;
    for (const x of snapshot.workloadSpreads(namespace!)) if (x.name === name) ws = x;
    if (!ws) {
      written.delete(key);
      return;
    }
    if (!opts.patchesApplied && ws.patches.size > 0 && !warned.has(`${ws.uid}/${ws.generation}`)) {
      if (warned.size >= 10_000) warned.clear();
      warned.add(`${ws.uid}/${ws.generation}`);
      events.record(ws, 'Warning', 'SubsetPatchIgnored',
        `subsets ${[...ws.patches.keys()].join(', ')} have a patch: zonekeeper applies subset patches only at admission (admission.listen), which is off`);
    }
    const status = workloadSpreadStatus(ws, snapshot, settings, reservations, lists);
    if (!status) return;
    const digest = statusDigest(status.observedGeneration, status.subsetStatuses);
    if (digest === ws.statusDigest) {
      written.delete(key);
      return;
    }
    if (written.get(key) === digest) return;
    await write(ws, status, digest, key);
  }

  // A pod change shows in its namespace's statuses within half a second, not at the next interval.
  source.store.onPod((_type, pod) => {
    if (!queue.running()) return;
    for (const ws of source.snapshot.workloadSpreads(pod.namespace)) queue.addAfter(`${ws.namespace}/${ws.name}`, GATHER_MS);
  });

  return queue.controller(() => written.clear());
}
