import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import { systemClock, type Timers } from '../common/clock.js';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { statusDigest, type SlimWorkloadSpread, type SubsetCondition } from '../cluster/objects.js';
import type { WorkResult } from '../common/workQueue.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ZoneListDeps } from '../placement/model.js';
import { kruiseStatusJson, workloadSpreadStatus, type SpreadStatusPass } from '../placement/policies/workloadSpread/status.js';
import type { ReservationView } from '../placement/reservations.js';
import type { PlacementSettings } from '../placement/settings.js';
import { evictionQueue, evictPod, type EvictionGate } from './eviction.js';
import { reconciler } from '../common/reconciler.js';

export interface StatusOptions {
  intervalSeconds: number;
  /** Admission applies subsets' patches (docs/design.md#admission): nothing to warn about. */
  patchesApplied: boolean;
  /**
   * Adaptive: at most this many unscheduled pods deleted (evicted) per minute. With dryRun none, and no
   * subset is marked Schedulable False (placement would skip it): an Event, a log line and a metric say which.
   */
  rescheduleEvictionsPerMinute: number;
  rescheduleDryRun: boolean;
  /** The zone disruption budget, judged before each eviction. */
  evictionGate?: EvictionGate;
}

/** How long a WorkloadSpread waits after a pod change of its namespace, gathering a burst, before its status is reconciled. */
const GATHER_MS = 500;

/**
 * Standalone mode (no OpenKruise controller, workloadSpread.writeStatus): the leader does what
 * Kruise's controller does (docs/design.md#workloadspread): keeps each WorkloadSpread's status through the
 * status subresource (written only when it differs from the cached one), and for Adaptive ones
 * evicts the pods left unscheduled in a subset beyond rescheduleCriticalSeconds once the cache
 * shows the subset marked unschedulable, so that their replacements go to the next subset.
 * Without admission, it warns once per generation that a subset's `patch` is not applied.
 * On the work queue by WorkloadSpread: a pod change queues those of its namespace, time passing
 * (a pod timing out, a recovery window ending) requeues the one it concerns, and all are queued every `intervalSeconds`.
 */
export function workloadSpreadStatusController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, reservations: ReservationView, events: Pick<EventRecorder, 'record'>,
  opts: StatusOptions, log: Logger, metrics: Metrics, lists: ZoneListDeps = {}, clock: Timers = systemClock,
) {
  /** Digests written that the watch may not show yet, by WorkloadSpread key. */
  const written = new Map<string, string>();
  /** The conditions of those writes: the next pass starts from them, not from the cache's, so their times do not move. */
  const writtenConditions = new Map<string, ReadonlyMap<string, SubsetCondition>>();
  const warned = new Set<string>();
  /** Pods evicted or announced (dry run), by UID: not again while the cache still shows them. */
  const rescheduled = new Set<string>();
  /** Pods queued for their eviction, by UID: the WorkloadSpread and subset they were not scheduled in. */
  const toEvict = new Map<string, { ws: SlimWorkloadSpread; subset: string; what: string }>();
  const queue = reconciler({
    keys: function *() { for (const ws of source.snapshot.allWorkloadSpreads()) yield `${ws.namespace}/${ws.name}`; },
    reconcile,
    resyncMs: opts.intervalSeconds * 1000,
    ready: source.synced,
    clock,
    onError: (key, err) => log.warn({ workloadSpread: key, err: err.message }, 'WorkloadSpread status pass failed'),
  });
  const evictions = evictionQueue(evict, opts.rescheduleEvictionsPerMinute, {
    clock, retryBaseMs: 5_000, retryMaxMs: 300_000,
    onError: (uid, err) => log.warn({ pod: uid, err: err.message }, 'Adaptive WorkloadSpread: eviction failed'),
  });

  async function write(ws: SlimWorkloadSpread, status: object, digest: string, key: string): Promise<boolean> {
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
      return ok;
    } catch (err) {
      written.delete(key);
      metrics.actuatorWrites.inc({ action: 'workloadspread-status', result: 'error' });
      log.warn({ workloadSpread: key, err: (err as Error).message }, 'WorkloadSpread status not written');
      return false;
    }
  }

  async function reconcile(key: string): Promise<WorkResult> {
    const snapshot = source.snapshot;
    const [namespace, name] = key.split('/');
    let ws: SlimWorkloadSpread | undefined;
    for (const x of snapshot.workloadSpreads(namespace!)) if (x.name === name) ws = x;
    if (!ws) {
      written.delete(key);
      writtenConditions.delete(key);
      return;
    }
    if (!opts.patchesApplied && ws.patches.size > 0 && !warned.has(`${ws.uid}/${ws.generation}`)) {
      if (warned.size >= 10_000) warned.clear();
      warned.add(`${ws.uid}/${ws.generation}`);
      events.record(ws, 'Warning', 'SubsetPatchIgnored',
        `subsets ${[...ws.patches.keys()].join(', ')} have a patch: zonekeeper applies subset patches only at admission (admission.listen), which is off`);
    }
    const seen = written.has(key) && writtenConditions.has(key) ? { ...ws, schedulable: writtenConditions.get(key)! } : ws;
    const pass = workloadSpreadStatus(seen, snapshot, settings, reservations, clock.now(), lists, !opts.rescheduleDryRun);
    const { status } = pass;
    const digest = statusDigest(status.observedGeneration, status.subsetStatuses);
    if (digest === ws.statusDigest) {
      written.delete(key);
      writtenConditions.delete(key);
    } else if (written.get(key) !== digest && await write(ws, kruiseStatusJson(status, ws.apiVersion), digest, key)) {
      writtenConditions.set(key, new Map(status.subsetStatuses.flatMap((x) => x.conditions.map((c) => [x.name, c] as const))));
      for (const subset of pass.recovered) {
        events.record(ws, 'Normal', 'RecoverSchedulable', `Subset ${subset} of WorkloadSpread ${ws.namespace}/${ws.name} is recovered from unschedulable to schedulable`);
      }
    }
    const waitMs = await reschedule(ws, pass);
    // At most an interval ahead: a timer is never set years ahead by a rescheduleCriticalSeconds of years.
    const next = Math.min(pass.nextCheckMs ?? Infinity, waitMs ?? Infinity, opts.intervalSeconds * 1000);
    return pass.nextCheckMs === undefined && waitMs === undefined ? undefined : { againAfterMs: next };
  }

  /**
   * Kruise's cleanupUnscheduledPods: the unscheduled pods of a subset the cache shows marked
   * unschedulable (the mark is durable first, so that every replica's admission skips the subset
   * for their replacements), queued for their eviction, never one its bound volume holds. In a dry
   * run nothing is marked: each pod is announced once. How long to wait before the rest, if some are left.
   */
  async function reschedule(ws: SlimWorkloadSpread, pass: SpreadStatusPass): Promise<number | undefined> {
    let waitMs: number | undefined;
    for (const { subset, pod, heldByVolume } of pass.unscheduled) {
      if (rescheduled.has(pod.uid) || toEvict.has(pod.uid) || heldByVolume) continue;
      if (!opts.rescheduleDryRun && ws.schedulable.get(subset)?.status !== 'False') {
        waitMs = GATHER_MS;
        continue;
      }
      if (rescheduled.size >= 10_000) rescheduled.clear();
      const what = `pod ${pod.name} was not scheduled in subset ${subset} of WorkloadSpread ${ws.name} within ${ws.rescheduleCriticalSeconds}s`;
      if (opts.rescheduleDryRun) {
        rescheduled.add(pod.uid);
        metrics.actuatorWrites.inc({ action: 'workloadspread-reschedule', result: 'would-delete' });
        log.info({ workloadSpread: `${ws.namespace}/${ws.name}`, subset, pod: pod.name }, 'Adaptive WorkloadSpread, dry run: would mark the subset unschedulable and delete a pod not scheduled in time');
        events.record(pod, 'Normal', 'RescheduleWouldDelete',
          `workloadSpread.rescheduleDryRun: ${what}; would mark the subset Schedulable False and delete the pod so that its replacement goes to the next subset`);
        continue;
      }
      toEvict.set(pod.uid, { ws, subset, what });
      evictions.add(pod.uid);
    }
    return waitMs;
  }

  /** A queued pod's turn (workloadSpread.rescheduleEvictionsPerMinute): evicted if the cache still shows it unscheduled. */
  async function evict(uid: string): Promise<WorkResult> {
    const queued = toEvict.get(uid);
    const pod = source.snapshot.podByUid(uid);
    if (!queued || !pod || pod.nodeName) {
      toEvict.delete(uid);
      return;
    }
    const { ws, subset, what } = queued;
    const res = await evictPod(api, pod, log, opts.evictionGate && { judge: opts.evictionGate, by: 'zonekeeper Adaptive rescheduling' });
    const ok = res.status === 200 || res.status === 201 || res.status === 404;
    metrics.actuatorWrites.inc({ action: 'workloadspread-reschedule', result: ok ? 'ok' : 'error' });
    if (!ok) {
      events.record(ws, 'Warning', 'DeletePodFailed', `Failed to delete unschedulable Pod ${ws.namespace}/${pod.name} in Subset ${subset} of WorkloadSpread ${ws.namespace}/${ws.name}: ${res.message || res.status}`);
      return 'retry';
    }
    toEvict.delete(uid);
    rescheduled.add(uid);
    log.info({ workloadSpread: `${ws.namespace}/${ws.name}`, subset, pod: pod.name }, 'Adaptive WorkloadSpread: deleted a pod not scheduled in time');
    events.record(ws, 'Normal', 'RescheduledPod', `${what}: evicted, its replacement skips the subset`);
  }

  // A pod change shows in its namespace's statuses within half a second, not at the next interval.
  source.store.onPod((type, pod) => {
    if (type === 'delete') {
      rescheduled.delete(pod.uid);
      if (toEvict.delete(pod.uid)) evictions.forget(pod.uid);
    }
    if (!queue.running()) return;
    for (const ws of source.snapshot.workloadSpreads(pod.namespace)) queue.addAfter(`${ws.namespace}/${ws.name}`, GATHER_MS);
  });

  return {
    start() {
      evictions.start();
      queue.start();
    },
    async stop() {
      await queue.stop();
      await evictions.shutDown();
      written.clear();
      writtenConditions.clear();
      rescheduled.clear();
      toEvict.clear();
    },
    idle: async () => {
      await queue.idle();
      await evictions.idle();
    },
  };
}
