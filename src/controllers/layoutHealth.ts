import type { Logger } from 'pino';
import type { EventType } from '../actuator/events.js';
import type { SlimWorkload } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { ownedThrough, workloadKindNamed } from '../cluster/kinds.js';
import { byRisk, workloadHealth, type WorkloadHealth } from '../placement/health.js';
import { UNBLOCK } from '../placement/healthRecord.js';
import { workloadModel } from '../placement/model.js';
import type { DecisionState } from '../placement/policy.js';
import { changedWorkloadKey, resolveWorkload, workloadByKey, workloadKey } from '../placement/workload.js';
import { systemClock, yieldTurn, type Timers } from '../common/clock.js';
import { reconciler } from '../common/reconciler.js';
import type { RolloutDefaults } from '../placement/rolloutPlan.js';

/** How long one slice of a sweep may hold the event loop (ms). */
const SLICE_MS = 20;

export interface HealthTrackerOptions {
  settleSeconds: number;
  intervalSeconds: number;
  /** How long a changed workload waits, gathering more changes, before it is recomputed (ms). */
  tickMs?: number;
  clock?: Timers;
  /** Zone-by-zone rollouts' defaults (config zoneRollout); undefined: rollouts are off, none is shown. */
  rollout?: RolloutDefaults;
}

/** Every managed workload's health, kept from cache events (docs/design.md#health). */
export interface HealthTracker {
  /** At risk first, then by namespace, kind, name. */
  all(): readonly WorkloadHealth[];
  get(key: string): WorkloadHealth | undefined;
  /** Calls `listener` with a workload's key each time its health is recomputed (repair). */
  onChange(listener: (key: string) => void): void;
  /** Record LayoutAtRisk / LayoutRestored / NoEligibleNode Events from now on (the Lease's holder). */
  startEvents(): void;
  stopEvents(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  /** Resolves once the workloads queued so far are recomputed. */
  idle(): Promise<void>;
  /** Recomputes every workload now, in one go (tests; the work queue does it a slice at a time). */
  flush(): void;
}

/**
 * Keeps health per workload on the work queue: a pod, workload or autoscaler-report change
 * queues its workload (after `tickMs`, gathering the changes of a burst); every
 * `intervalSeconds` all are queued, which covers node, volume and settle-time changes. A
 * recompute yields the event loop every SLICE_MS, so the extender sharing it never waits for a
 * sweep of thousands. Transitions of `atRisk`, of the zones no node fits, of the zones left
 * out and of autoscaler refusals become Events while `startEvents` holds.
 */
export function healthTracker(
  source: SnapshotSource, state: DecisionState, record: (w: SlimWorkload, type: EventType, reason: string, message: string) => void,
  opts: HealthTrackerOptions, log: Logger,
): HealthTracker {
  const clock = opts.clock ?? systemClock;
  const current = new Map<string, WorkloadHealth>();
  const listeners: ((key: string) => void)[] = [];
  let sorted: WorkloadHealth[] | undefined;
  let events = false;
  let sliceStarted = clock.now();
  const healthOptions = () => ({ now: clock.now(), settleSeconds: opts.settleSeconds, rollout: opts.rollout });
  const queue = reconciler({
    keys: allKeys,
    async reconcile(key) {
      if (clock.now() - sliceStarted >= SLICE_MS) {
        await yieldTurn();
        sliceStarted = clock.now();
      }
      set(key, one(key));
    },
    resyncMs: opts.intervalSeconds * 1000,
    ready: source.synced,
    clock,
    onError: (key, err) => log.error({ workload: key, err: err.message }, 'health not recomputed'),
    // A failure is a bug in the health code: the next resync tries again, not a retry loop.
    retryBaseMs: opts.intervalSeconds * 1000,
    retryMaxMs: opts.intervalSeconds * 1000,
  });

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
      record(w, 'Warning', 'NoEligibleNode', `no node in ${unusable} fits the pods' node selector, affinity and tolerations, and none can be added: pods pinned there wait (zonekeeper.io/zones lists it); ${UNBLOCK}`);
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
    for (const l of listeners) l(key);
  }

  function one(key: string): WorkloadHealth | undefined {
    const snapshot = source.snapshot;
    const w = workloadByKey(snapshot, key);
    if (!w) return undefined;
    const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, state.settings, state);
    if (model.policy === 'none') return undefined;
    return workloadHealth(model, w, snapshot, state, healthOptions());
  }

  /** Every cached workload that could be managed (a Deployment's ReplicaSets are its own), and every one kept (gone ones leave). */
  function allKeys(): Set<string> {
    const keys = new Set(current.keys());
    for (const w of source.snapshot.allWorkloads()) if (!ownedThrough(w)) keys.add(workloadKey(w));
    return keys;
  }

  const mark = (key: string) => queue.addAfter(key, opts.tickMs ?? 1000);
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
    start: () => queue.start(),
    stop: () => queue.stop(),
    idle: () => queue.idle(),
    onChange: (listener) => { listeners.push(listener); },
    flush() {
      if (source.synced()) for (const key of allKeys()) set(key, one(key));
    },
  };
}
