import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { ApiClient } from '../cluster/apiClient.js';
import { workloadKindNamed } from '../cluster/kinds.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WorkResult } from '../common/workQueue.js';
import { workloadModel } from '../placement/model.js';
import type { DecisionState } from '../placement/policy.js';
import { rebalanceRequested, repairStep, type RepairStep } from '../placement/repairChoice.js';
import { evictionQueue, evictPod, type EvictionGate } from './eviction.js';
import type { HealthTracker } from './layoutHealth.js';
import { reconciler } from '../common/reconciler.js';
import { zoneStability } from './zoneStability.js';

export interface RepairOptions {
  dryRun: boolean;
  evictionsPerMinute: number;
  zoneStableSeconds: number;
  intervalSeconds: number;
  /** The zone disruption budget, judged before each eviction. */
  gate?: EvictionGate;
}

/** What repair last decided for a workload (/debug/repair). */
export interface RepairStatus {
  workload: string;
  at: string;
  decision: 'evicted' | 'would-evict' | 'refused' | 'error' | 'wait';
  pod?: string;
  message: string;
}

/** A repair eviction in words: which pod, from where, to where, and why. */
const moveOf = (step: Extract<RepairStep, { kind: 'evict' }>) => `pod ${step.pod.name} from ${step.from ?? 'no zone'} towards ${step.to}: ${step.why}`;

/** Backoff after a refused or failed eviction, per workload (the queue's): doubles from 5 s up to 5 min. */
const BACKOFF_MS = { first: 5_000, max: 300_000 };
/** While the cache is not ready, a workload is looked at again this soon. */
const NOT_READY_MS = 1000;

/**
 * Repair in the Lease's holder (docs/design.md#repair), on the work queue by workload: a
 * workload is queued when its health is recomputed, and all every `intervalSeconds` (zones
 * becoming stable is time passing). For each opted-in workload off its layout, at most one
 * eviction at a time through the Eviction API (PodDisruptionBudgets decide; a 429 backs off),
 * or only `WouldEvict` Events in a dry run. A workload with a pod to move is queued on a second
 * queue, paced at the global budget per minute, whose turn decides again and evicts.
 */
export function repairController(
  api: ApiClient, source: SnapshotSource, health: Pick<HealthTracker, 'all' | 'get' | 'onChange'>, state: DecisionState,
  events: Pick<EventRecorder, 'record'>, opts: RepairOptions, log: Logger, metrics: Metrics, clock: Timers = systemClock,
) {
  const zones = zoneStability(source.store, clock, [state.settings.topologyKey]);
  const evicted = new Map<string, { uid: string; name: string }>();
  const announced = new Set<string>();
  const status = new Map<string, RepairStatus>();
  /** Workloads queued for an eviction: the decision queue leaves them to the eviction queue while their step is one. */
  const toEvict = new Set<string>();
  const queue = reconciler({
    keys: function *() { for (const h of health.all()) if (concerns(h.key)) yield h.key; },
    reconcile: repair,
    resyncMs: opts.intervalSeconds * 1000,
    ready: source.ready,
    clock,
    retryBaseMs: BACKOFF_MS.first,
    retryMaxMs: BACKOFF_MS.max,
    onError: (key, err) => log.error({ workload: key, err: err.message }, 'repair failed'),
  });
  const evictions = evictionQueue(evict, opts.evictionsPerMinute, {
    clock, retryBaseMs: BACKOFF_MS.first, retryMaxMs: BACKOFF_MS.max,
    onError: (key, err) => log.error({ workload: key, err: err.message }, 'repair failed'),
  });
  health.onChange((key) => { if (queue.running() && concerns(key)) queue.add(key); });

  /** Opted in, or with a status or an eviction of its own to forget. */
  function concerns(key: string): boolean {
    if (status.has(key) || evicted.has(key)) return true;
    const h = health.get(key);
    const kind = h && workloadKindNamed(h.ref.kind);
    const w = kind && source.snapshot.workload(kind, h.ref.namespace, h.ref.name);
    return !!w && rebalanceRequested(w);
  }

  const note = (s: Omit<RepairStatus, 'at'>) => status.set(s.workload, { ...s, at: new Date(clock.now()).toISOString() });
  const forget = (key: string) => {
    evicted.delete(key);
    status.delete(key);
    toEvict.delete(key);
    evictions.forget(key);
  };

  /** `key`'s workload and its next step towards its layout, from the cache now; undefined when it is none of repair's business. */
  function stepOf(key: string) {
    const snapshot = source.snapshot;
    const h = health.get(key);
    const kind = h && workloadKindNamed(h.ref.kind);
    const w = kind && snapshot.workload(kind, h.ref.namespace, h.ref.name);
    if (!h || !w || !rebalanceRequested(w)) return undefined;
    const model = workloadModel(h.ref, w, snapshot, state.settings, state);
    return { h, w, step: repairStep(model, w, h, snapshot, { now: clock.now(), zoneStableSeconds: opts.zoneStableSeconds, zones, evicted: evicted.get(key) }) };
  }

  /** One look at `key`: nothing, a wait, a dry run's announcement, or the workload queued for its eviction. */
  async function repair(key: string): Promise<WorkResult> {
    if (!source.ready()) return { againAfterMs: NOT_READY_MS };
    const found = stepOf(key);
    if (!found || found.step.kind === 'none') return forget(key);
    const { w, step } = found;
    // Queued for an eviction: the eviction queue has it while its step still is one; otherwise it leaves that queue.
    if (toEvict.has(key)) {
      if (step.kind === 'evict') return;
      toEvict.delete(key);
      evictions.forget(key);
    }
    if (step.kind === 'wait') {
      note({ workload: key, decision: 'wait', message: step.reason });
      return;
    }
    evicted.delete(key);
    const what = moveOf(step);
    if (opts.dryRun) {
      note({ workload: key, decision: 'would-evict', pod: step.pod.name, message: what });
      if (announced.has(step.pod.uid)) return;
      if (announced.size >= 10_000) announced.clear();
      announced.add(step.pod.uid);
      metrics.rebalanceEvictions.inc({ result: 'would-evict' });
      events.record(w, 'Normal', 'WouldEvict', `rebalance.dryRun: would evict ${what}`);
      events.record(step.pod, 'Normal', 'WouldEvict', `rebalance.dryRun: would evict this pod for ${key}: ${step.why}`);
      return;
    }
    note({ workload: key, decision: 'wait', pod: step.pod.name, message: `${what}: waits for its turn (rebalance.evictionsPerMinute ${opts.evictionsPerMinute})` });
    toEvict.add(key);
    evictions.add(key);
  }

  /** `key`'s turn: its step decided again from the cache now, and the eviction if it still is one. */
  async function evict(key: string): Promise<WorkResult> {
    const found = source.ready() ? stepOf(key) : undefined;
    if (!found || found.step.kind !== 'evict') {
      toEvict.delete(key);
      queue.add(key);
      return;
    }
    const { h, w, step } = found;
    const what = moveOf(step);
    const res = await evictPod(api, step.pod, log, opts.gate && { judge: opts.gate, by: 'zonekeeper repair' });
    if (res.status === 201 || res.status === 200 || res.status === 404) {
      toEvict.delete(key);
      if (res.status === 404) {
        note({ workload: key, decision: 'wait', message: `pod ${step.pod.name} is already gone` });
        return;
      }
      evicted.set(key, { uid: step.pod.uid, name: step.pod.name });
      metrics.rebalanceEvictions.inc({ result: 'evicted' });
      note({ workload: key, decision: 'evicted', pod: step.pod.name, message: what });
      log.info({ workload: key, pod: step.pod.name, from: step.from, to: step.to, stableForSeconds: step.stableFor }, `evicted a pod off its ${h.domain}`);
      events.record(w, 'Normal', 'Rebalanced', `evicted ${what}`);
      events.record(step.pod, 'Normal', 'Rebalanced', `evicted by zonekeeper for ${key}: ${step.why}`);
      return;
    }
    const refused = res.status === 429;
    // Tried again after the queue's backoff step for this workload (and its turn); no add runs it sooner.
    const ms = evictions.retryDelay(key);
    metrics.rebalanceEvictions.inc({ result: refused ? 'refused' : 'error' });
    const message = `${refused ? 'refused (a PodDisruptionBudget or the zone disruption budget allows no disruption now)' : `failed (${res.status || 'no answer'})`}: ${res.message}; next try in ${ms / 1000}s`;
    note({ workload: key, decision: refused ? 'refused' : 'error', pod: step.pod.name, message });
    if (!refused) log.warn({ workload: key, pod: step.pod.name, status: res.status, err: res.message }, 'eviction failed');
    return 'retry';
  }

  return {
    start: () => {
      evictions.start();
      queue.start();
    },
    stop: async () => {
      await queue.stop();
      await evictions.shutDown();
      toEvict.clear();
    },
    status: (): RepairStatus[] => [...status.values()].sort((a, b) => a.workload.localeCompare(b.workload)),
  };
}
