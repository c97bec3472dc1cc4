import type { Logger } from 'pino';
import { keyedBackoff } from '../common/clock.js';
import type { ApiClient } from '../cluster/apiClient.js';
import { workloadKindNamed } from '../cluster/kinds.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Metrics } from '../metrics.js';
import { workloadModel } from '../placement/model.js';
import type { DecisionState } from '../placement/policy.js';
import { rebalanceRequested, repairStep } from '../placement/repair.js';
import type { EventRecorder } from './events.js';
import type { HealthTracker } from './layoutHealth.js';
import { evictPod, perMinuteBudget } from './eviction.js';
import { zoneStability } from './zoneStability.js';

export interface RepairOptions {
  dryRun: boolean;
  evictionsPerMinute: number;
  zoneStableSeconds: number;
  intervalSeconds: number;
}

/** What repair last decided for a workload (/debug/repair). */
export interface RepairStatus {
  workload: string;
  at: string;
  decision: 'evicted' | 'would-evict' | 'refused' | 'error' | 'wait';
  pod?: string;
  message: string;
}

/** Backoff after a refused or failed eviction, per workload: doubles from 5 s up to 5 min. */
const BACKOFF_MS = { first: 5_000, max: 300_000 };

/**
 * Repair in the Lease's holder (docs/design.md#repair): for each opted-in workload off its
 * layout, at most one eviction at a time through the Eviction API (PodDisruptionBudgets
 * decide; a 429 backs off), within a global budget per minute, or only `WouldEvict` Events in
 * a dry run.
 */
export function repairController(
  api: ApiClient, source: SnapshotSource, health: Pick<HealthTracker, 'all'>, state: DecisionState,
  events: Pick<EventRecorder, 'record'>, opts: RepairOptions, log: Logger, metrics: Metrics,
) {
  const zones = zoneStability(source.store, Date, [state.settings.topologyKey]);
  const evicted = new Map<string, { uid: string; name: string }>();
  const backoff = keyedBackoff(BACKOFF_MS.first, BACKOFF_MS.max);
  const announced = new Set<string>();
  const status = new Map<string, RepairStatus>();
  const budget = perMinuteBudget(opts.evictionsPerMinute);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  const note = (s: Omit<RepairStatus, 'at'>) => status.set(s.workload, { ...s, at: new Date().toISOString() });

  async function reconcile(): Promise<void> {
    if (!source.ready()) return;
    const snapshot = source.snapshot;
    const live = new Set<string>();
    for (const h of health.all()) {
      if (stopped) return;
      const kind = workloadKindNamed(h.ref.kind);
      const w = kind && snapshot.workload(kind, h.ref.namespace, h.ref.name);
      if (!w || !rebalanceRequested(w)) continue;
      live.add(h.key);
      if (backoff.waitLeft(h.key) > 0) continue;
      const model = workloadModel(h.ref, w, snapshot, state.settings, state);
      const step = repairStep(model, w, h, snapshot, { now: Date.now(), zoneStableSeconds: opts.zoneStableSeconds, zones, evicted: evicted.get(h.key) });
      if (step.kind === 'none') {
        evicted.delete(h.key);
        status.delete(h.key);
        continue;
      }
      if (step.kind === 'wait') {
        note({ workload: h.key, decision: 'wait', message: step.reason });
        continue;
      }
      evicted.delete(h.key);
      const what = `pod ${step.pod.name} from ${step.from ?? 'no zone'} towards ${step.to}: ${step.why}`;
      if (opts.dryRun) {
        note({ workload: h.key, decision: 'would-evict', pod: step.pod.name, message: what });
        if (announced.has(step.pod.uid)) continue;
        announced.add(step.pod.uid);
        metrics.rebalanceEvictions.inc({ result: 'would-evict' });
        events.record(w, 'Normal', 'WouldEvict', `rebalance.dryRun: would evict ${what}`);
        events.record(step.pod, 'Normal', 'WouldEvict', `rebalance.dryRun: would evict this pod for ${h.key}: ${step.why}`);
        continue;
      }
      if (!budget.take()) {
        note({ workload: h.key, decision: 'wait', message: `rebalance.evictionsPerMinute (${opts.evictionsPerMinute}) spent: next round` });
        continue;
      }
      const res = await evictPod(api, step.pod, log);
      if (res.status === 201 || res.status === 200) {
        backoff.succeeded(h.key);
        evicted.set(h.key, { uid: step.pod.uid, name: step.pod.name });
        metrics.rebalanceEvictions.inc({ result: 'evicted' });
        note({ workload: h.key, decision: 'evicted', pod: step.pod.name, message: what });
        const key = model.zones().topologyKey;
        const stableFor = Object.fromEntries(Object.keys(h.perZone).map((z) => [z, Math.round((Date.now() - zones.stableSince(key, z)) / 1000)]));
        log.info({ workload: h.key, pod: step.pod.name, from: step.from, to: step.to, stableForSeconds: stableFor }, 'evicted a pod off its zone');
        events.record(w, 'Normal', 'Rebalanced', `evicted ${what}`);
        events.record(step.pod, 'Normal', 'Rebalanced', `evicted by zonekeeper for ${h.key}: ${step.why}`);
      } else if (res.status === 404) {
        note({ workload: h.key, decision: 'wait', message: `pod ${step.pod.name} is already gone` });
      } else {
        const refused = res.status === 429;
        const ms = backoff.failed(h.key);
        metrics.rebalanceEvictions.inc({ result: refused ? 'refused' : 'error' });
        const message = `${refused ? 'refused (a PodDisruptionBudget allows no disruption now)' : `failed (${res.status || 'no answer'})`}: ${res.message}; next try in ${ms / 1000}s`;
        note({ workload: h.key, decision: refused ? 'refused' : 'error', pod: step.pod.name, message });
        if (!refused) log.warn({ workload: h.key, pod: step.pod.name, status: res.status, err: res.message }, 'eviction failed');
      }
    }
    for (const key of [...status.keys()]) if (!live.has(key)) status.delete(key);
  }

  function tick(): void {
    if (stopped) return;
    running = reconcile().catch((err: Error) => log.error({ err: err.message }, 'repair round failed')).finally(() => {
      running = undefined;
      if (stopped) return;
      timer = setTimeout(tick, opts.intervalSeconds * 1000);
      timer.unref();
    });
  }

  return {
    start() {
      stopped = false;
      tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    status: (): RepairStatus[] => [...status.values()].sort((a, b) => a.workload.localeCompare(b.workload)),
  };
}
