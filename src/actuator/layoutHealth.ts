import type { Logger } from 'pino';
import type { SlimWorkload } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { ownedThrough, workloadKindNamed } from '../cluster/kinds.js';
import { byRisk, workloadHealth, type WorkloadHealth } from '../placement/health.js';
import { workloadModel } from '../placement/model.js';
import type { DecisionState } from '../placement/policy.js';
import { changedWorkloadKey, resolveWorkload, workloadKey } from '../placement/workload.js';
import type { EventType } from './events.js';

/** How long one slice of a sweep may hold the event loop (ms). */
const SLICE_MS = 20;

export interface HealthTrackerOptions {
  settleSeconds: number;
  intervalSeconds: number;
  /** How often changed workloads are recomputed (ms). */
  tickMs?: number;
}

/** Every managed workload's health, kept from cache events (docs/design.md#health). */
export interface HealthTracker {
  /** At risk first, then by namespace, kind, name. */
  all(): readonly WorkloadHealth[];
  get(key: string): WorkloadHealth | undefined;
  /** Record LayoutAtRisk / LayoutRestored / NoEligibleNode Events from now on (the Lease's holder). */
  startEvents(): void;
  stopEvents(): Promise<void>;
  start(): void;
  stop(): void;
  /** Recompute what changed, and finish any sweep, now (tests; the timer does it in slices). */
  flush(): void;
}

/**
 * Keeps health per workload: a pod or workload change marks its workload, recomputed at the
 * next tick (only it); every `intervalSeconds` all are recomputed in slices, which covers node,
 * volume and settle-time changes. Transitions of `atRisk`, and of the listed zones no node fits,
 * become Events while `startEvents` holds.
 */
export function healthTracker(
  source: SnapshotSource, state: DecisionState, record: (w: SlimWorkload, type: EventType, reason: string, message: string) => void,
  opts: HealthTrackerOptions, log: Logger,
): HealthTracker {
  const current = new Map<string, WorkloadHealth>();
  const changed = new Set<string>();
  let sorted: WorkloadHealth[] | undefined;
  let lastFull = 0;
  let sweep: { keys: string[]; at: number; seen: Set<string>; started: number } | undefined;
  let events = false;
  let timer: NodeJS.Timeout | undefined;
  const healthOptions = () => ({ now: Date.now(), settleSeconds: opts.settleSeconds });

  function transition(before: WorkloadHealth | undefined, after: WorkloadHealth | undefined): void {
    if (!events || !after) return;
    const unusable = after.unusableZones.join(', ');
    const unusableChanged = unusable !== (before?.unusableZones.join(', ') ?? '');
    const leftOut = after.leftOutZones.join(', ');
    const leftOutChanged = leftOut !== (before?.leftOutZones.join(', ') ?? '');
    const refused = after.cannotGrow.map((c) => `${c.pod}@${c.zone ?? ''}`).join(',');
    const refusedChanged = refused !== (before?.cannotGrow.map((c) => `${c.pod}@${c.zone ?? ''}`).join(',') ?? '');
    const risk = (before?.atRisk ?? false) !== after.atRisk;
    if (!risk && !unusableChanged && !leftOutChanged && !refusedChanged) return;
    const w = source.snapshot.workload(workloadKindNamed(after.ref.kind)!, after.ref.namespace, after.ref.name);
    if (!w) return;
    // Once per change of the set: a listed zone whose node group is scaled to zero looks so.
    if (unusableChanged && unusable !== '') {
      record(w, 'Warning', 'NoEligibleNode', `no node in ${unusable} fits the pods' node selector, affinity and tolerations, and none can be added: pods pinned there wait (zonekeeper.io/zones lists it)`);
    }
    if (leftOutChanged && leftOut !== '') {
      record(w, 'Warning', 'ZoneListLeavesOut', `zonekeeper.io/zones was frozen without ${leftOut}, which the pods can use or grow into; zonekeeper never rewrites it: add them, or remove the annotation to derive the list again`);
    }
    if (refusedChanged && refused !== '') {
      const c = after.cannotGrow[0]!;
      record(w, 'Warning', 'CannotGrow', `${after.causes['cannot-grow']} pending pod${after.causes['cannot-grow'] === 1 ? '' : 's'}: the autoscaler will not add a node (${c.pod}${c.zone ? ` in ${c.zone}` : ''}, ${c.source}: ${c.message})`);
    }
    if (!risk) return;
    if (after.atRisk) record(w, 'Warning', 'LayoutAtRisk', `layout at risk: ${after.reason}`);
    else record(w, 'Normal', 'LayoutRestored', `layout restored: ${after.zones} of ${after.wanted} ${after.domain}s hold pods${after.offPin > 0 ? `, ${after.offPin} off pin` : ''}`);
  }

  function set(key: string, h: WorkloadHealth | undefined): void {
    const before = current.get(key);
    if (h) current.set(key, h);
    else current.delete(key);
    transition(before, h);
    sorted = undefined;
  }

  function one(key: string): WorkloadHealth | undefined {
    const [namespace, kindText, name] = key.split('/');
    const kind = workloadKindNamed(kindText ?? '');
    const snapshot = source.snapshot;
    const w = kind && snapshot.workload(kind, namespace!, name!);
    if (!w || !kind) return undefined;
    const model = workloadModel({ kind, namespace: namespace!, name: name! }, w, snapshot, state.settings, state);
    return model.policy === 'none' ? undefined : workloadHealth(model, w, snapshot, state, healthOptions());
  }

  /** Every cached workload that could be managed (a Deployment's ReplicaSets are its own). */
  function workloadKeys(): string[] {
    const keys: string[] = [];
    for (const w of source.snapshot.allWorkloads()) if (!ownedThrough(w)) keys.push(workloadKey(w));
    return keys;
  }

  /**
   * The changed workloads, then as much of the running sweep over all of them as `budgetMs`
   * allows: a sweep of thousands of workloads runs in slices, so the extender that shares
   * the event loop never waits for all of it (docs/performance.md).
   */
  function step(budgetMs: number): void {
    if (!source.synced()) return;
    const started = performance.now();
    for (const key of changed) set(key, one(key));
    changed.clear();
    if (!sweep && Date.now() - lastFull >= opts.intervalSeconds * 1000) {
      lastFull = Date.now();
      sweep = { keys: workloadKeys(), at: 0, seen: new Set(), started };
    }
    if (!sweep) return;
    while (sweep.at < sweep.keys.length && performance.now() - started < budgetMs) {
      const key = sweep.keys[sweep.at++]!;
      const h = one(key);
      if (h) sweep.seen.add(key);
      set(key, h);
    }
    if (sweep.at < sweep.keys.length) return;
    for (const key of [...current.keys()]) if (!sweep.seen.has(key)) set(key, undefined);
    log.debug({ workloads: sweep.seen.size, ms: Math.round(performance.now() - sweep.started) }, 'health recomputed');
    sweep = undefined;
  }

  const mark = (key: string) => { changed.add(key); };
  source.store.onPod((_type, pod) => {
    const ref = resolveWorkload(pod, source.snapshot)?.ref;
    if (ref) mark(workloadKey(ref));
  });
  // An autoscaler's word on a pod changes its workload's health (cannot-grow).
  source.store.onScaleReport((r) => {
    const pod = source.snapshot.podByUid(r.pod.uid);
    const ref = pod && resolveWorkload(pod, source.snapshot)?.ref;
    if (ref) mark(workloadKey(ref));
  });
  source.store.onWorkload((w) => {
    // A ReplicaSet's change (a rollout) is its Deployment's.
    mark(changedWorkloadKey(w));
  });

  return {
    all: () => (sorted ??= [...current.values()].sort(byRisk)),
    get: (key) => current.get(key),
    startEvents() {
      // A new holder announces what is at risk now: the old one's Events may be long gone.
      events = true;
      for (const h of current.values()) transition(undefined, h);
    },
    async stopEvents() { events = false; },
    start() {
      const tick = () => {
        try {
          step(SLICE_MS);
        } catch (err) {
          sweep = undefined;
          log.error({ err: (err as Error).message }, 'health not recomputed');
        }
        // A sweep in progress goes on soon; otherwise changes are picked up every tick.
        timer = setTimeout(tick, sweep ? 5 : (opts.tickMs ?? 1000));
        timer.unref();
      };
      tick();
    },
    stop() { clearTimeout(timer); },
    flush: () => step(Infinity),
  };
}
