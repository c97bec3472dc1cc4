import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { statusDigest, type SlimWorkloadSpread } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics.js';
import type { ZoneListDeps } from '../placement/model.js';
import { workloadSpreadStatus } from '../placement/policies/workloadSpread/status.js';
import type { ReservationView } from '../placement/reservations.js';
import type { PlacementSettings } from '../placement/settings.js';
import type { EventRecorder } from './events.js';

export interface StatusOptions {
  intervalSeconds: number;
}

/**
 * Standalone mode (no OpenKruise controller, workloadSpread.writeStatus): the leader keeps each
 * WorkloadSpread's status as Kruise's controller would, through the status subresource, and
 * warns once per generation that a subset's `patch` is not applied (docs/design.md#workloadspread).
 * Writes only what differs from the cached status.
 */
export function workloadSpreadStatusController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, reservations: ReservationView, events: Pick<EventRecorder, 'record'>,
  opts: StatusOptions, log: Logger, metrics: Metrics, lists: ZoneListDeps = {},
) {
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let soon = false;
  /** Digests written that the watch may not show yet, by WorkloadSpread key. */
  const written = new Map<string, string>();
  const warned = new Set<string>();

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

  async function reconcile(): Promise<void> {
    if (!source.synced()) return;
    const snapshot = source.snapshot;
    for (const ws of [...snapshot.allWorkloadSpreads()]) {
      if (stopped) return;
      const key = `${ws.namespace}/${ws.name}`;
      if (ws.patchedSubsets.length > 0 && !warned.has(`${ws.uid}/${ws.generation}`)) {
        if (warned.size >= 10_000) warned.clear();
        warned.add(`${ws.uid}/${ws.generation}`);
        events.record(ws, 'Warning', 'SubsetPatchIgnored',
          `subsets ${ws.patchedSubsets.join(', ')} have a patch: zonekeeper places pods in subsets but does not patch them (OpenKruise's webhook does)`);
      }
      const status = workloadSpreadStatus(ws, snapshot, settings, reservations, lists);
      if (!status) continue;
      const digest = statusDigest(status.observedGeneration, status.subsetStatuses);
      if (digest === ws.statusDigest) {
        written.delete(key);
        continue;
      }
      if (written.get(key) === digest) continue;
      await write(ws, status, digest, key);
    }
  }

  function tick(): void {
    if (stopped) return;
    soon = false;
    running ??= reconcile().catch((err: Error) => log.warn({ err: err.message }, 'WorkloadSpread status pass failed')).finally(() => {
      running = undefined;
      schedule(opts.intervalSeconds * 1000);
    });
  }

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, ms);
    timer.unref();
  }

  // A pod change shows in the status within half a second, not at the next interval.
  source.store.onPod(() => {
    if (stopped || soon || running) return;
    soon = true;
    schedule(500);
  });

  return {
    start() {
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      written.clear();
    },
  };
}
