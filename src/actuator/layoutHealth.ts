import type { Logger } from 'pino';
import type { SlimWorkload } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { workloadKindNamed } from '../cluster/kinds.js';
import { byRisk, fleetHealth, workloadHealth, type WorkloadHealth } from '../placement/health.js';
import { workloadModel } from '../placement/model.js';
import type { DecisionState } from '../placement/policy.js';
import { resolveWorkload, workloadKey } from '../placement/workload.js';
import type { EventType } from './events.js';

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
  /** Record LayoutAtRisk / LayoutRestored Events from now on (the Lease's holder). */
  startEvents(): void;
  stopEvents(): Promise<void>;
  start(): void;
  stop(): void;
  /** Recompute what changed now (tests; the timer does it every tick). */
  flush(): void;
}

/**
 * Keeps health per workload: a pod or workload change marks its workload, recomputed at the
 * next tick (only it); every `intervalSeconds` all are recomputed, which covers node, volume
 * and settle-time changes. Transitions of `atRisk` become Events while `startEvents` holds.
 */
export function healthTracker(
  source: SnapshotSource, state: DecisionState, record: (w: SlimWorkload, type: EventType, reason: string, message: string) => void,
  opts: HealthTrackerOptions, log: Logger,
): HealthTracker {
  const current = new Map<string, WorkloadHealth>();
  const changed = new Set<string>();
  let sorted: WorkloadHealth[] | undefined;
  let lastFull = 0;
  let events = false;
  let timer: NodeJS.Timeout | undefined;
  const healthOptions = () => ({ now: Date.now(), settleSeconds: opts.settleSeconds });

  function transition(before: WorkloadHealth | undefined, after: WorkloadHealth | undefined): void {
    if (!events || !after || (before?.atRisk ?? false) === after.atRisk) return;
    const w = source.snapshot.workload(workloadKindNamed(after.ref.kind)!, after.ref.namespace, after.ref.name);
    if (!w) return;
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

  function flush(): void {
    if (!source.synced()) return;
    if (Date.now() - lastFull >= opts.intervalSeconds * 1000) {
      lastFull = Date.now();
      changed.clear();
      const started = Date.now();
      const all = fleetHealth(source.snapshot, state, healthOptions());
      const seen = new Set<string>();
      for (const h of all) {
        seen.add(h.key);
        set(h.key, h);
      }
      for (const key of [...current.keys()]) if (!seen.has(key)) set(key, undefined);
      log.debug({ workloads: all.length, ms: Date.now() - started }, 'health recomputed');
      return;
    }
    for (const key of changed) set(key, one(key));
    changed.clear();
  }

  const mark = (key: string) => { changed.add(key); };
  source.store.onPod((_type, pod) => {
    const ref = resolveWorkload(pod, source.snapshot)?.ref;
    if (ref) mark(workloadKey(ref));
  });
  source.store.onWorkload((w) => {
    // A ReplicaSet's change (a rollout) is its Deployment's.
    mark(w.owner && w.owner.kind === 'Deployment' ? `${w.namespace}/Deployment/${w.owner.name}` : workloadKey(w));
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
          flush();
        } catch (err) {
          log.error({ err: (err as Error).message }, 'health not recomputed');
        }
        timer = setTimeout(tick, opts.tickMs ?? 1000);
        timer.unref();
      };
      tick();
    },
    stop() { clearTimeout(timer); },
    flush,
  };
}
