import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import type { ApiClient } from '../cluster/apiClient.js';
import type { FederationView } from '../cluster/memberClusters.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { Config } from '../common/config.js';
import type { WorkResult } from '../common/workQueue.js';
import { reconciler } from '../common/reconciler.js';
import { tokenBucket } from '../common/tokenBucket.js';
import type { Metrics } from '../metrics/metrics.js';
import type { FederationService, ScheduledCondition } from '../decision/bindingDecisions.js';
import { scheduledStatus, templateRef, writeClusters, writeOrdinals, writeScheduled, type WriteResult } from './bindingWrites.js';

// The Karmada transport (docs/design.md#across-clusters): zonekeeper as the scheduler of the bindings
// that name it. A binding is queued by the changes that can change its plan (the binding, a cluster,
// a member's nodes and pods, a policy, its ordinal ranges); each turn decodes nothing but the key, asks
// the decision service once, and writes its answer. Runs only in the Lease holder.

export interface BindingScheduler {
  start(): void;
  stop(): Promise<void>;
  idle(): Promise<void>;
  /** A write to a binding is under way: its Events wait (they report what these write). */
  writing(): boolean;
}

export interface BindingSchedulerDeps {
  service: FederationService;
  view: FederationView;
  api: ApiClient;
  events: EventRecorder;
  config: Config['karmada'];
  log: Logger;
  metrics: Metrics;
  clock?: Timers;
}

/** A binding whose write met a conflict is planned again this soon (the watch brings the newer version meanwhile). */
const CONFLICT_AGAIN_MS = 200;

/** A burst of member events is one plan per binding. */
const GATHER_MS = 1000;

/** What this process wrote for a binding that its later turns must know (the view lags behind its own writes). */
interface Written {
  /** When it wrote a StatefulSet's ordinal ranges: the clusters wait until Karmada has had time to read them. */
  rangesAt?: number;
  /** The status it wrote for this uid and generation (`statusSaid`), until the view shows that generation observed. */
  said?: { uid: string; generation: number; text: string };
  /** Its status test by generation failed (422): the next status goes by resourceVersion. */
  byVersion?: boolean;
}

/** The status a plan says, as one string. */
const statusSaid = (w: { condition: ScheduledCondition; affinityName: string | undefined }): string =>
  JSON.stringify([w.condition.status, w.condition.reason, w.condition.message, w.affinityName ?? null]);

export function bindingScheduler(d: BindingSchedulerDeps): BindingScheduler {
  const clock = d.clock ?? systemClock;
  const settleMs = d.config.overrideSettleSeconds * 1000;
  const written = new Map<string, Written>();
  // The client-side pace is of bindings written, not of turns: a turn that finds the plan unchanged (most of them:
  // each write's own watch event, a resync, a member's pods changing) costs the API server nothing and waits for nothing.
  const pace = tokenBucket(d.config.bindingsPerSecond, 2 * d.config.bindingsPerSecond, clock.now);
  /** 0: the binding may write now (its token taken); else how long until it may, its key queued again then (no worker waits). */
  const turnIn = (): number => {
    const ms = pace.wait();
    if (ms > 0) pace.giveBack();
    return ms;
  };
  let writes = 0;
  /** One write, counted and timed by what it writes. */
  const write = async (what: 'ordinals' | 'clusters' | 'status', w: Promise<WriteResult>): Promise<WriteResult> => {
    const from = clock.now();
    writes++;
    const r = await w.finally(() => writes--);
    d.metrics.federationWriteSeconds.observe({ write: what }, (clock.now() - from) / 1000);
    d.metrics.federationWrites.inc({ write: what, result: r.ok ? 'ok' : r.stale ? 'conflict' : 'error' });
    return r;
  };

  const failed = (key: string, what: string, r: Extract<WriteResult, { ok: false }>): WorkResult => {
    // 409: the binding changed since the plan was made (Karmada's taint manager and detector write it too): planned
    // again shortly from what it is now, not after a growing backoff, which held 1,000 bindings off a lost member for minutes.
    if (r.status === 409) return { againAfterMs: CONFLICT_AGAIN_MS };
    d.log.warn({ binding: key, status: r.status, err: r.message }, `${what} not written`);
    return 'retry';
  };

  async function reconcile(key: string): Promise<WorkResult> {
    const v = d.service.plan(key);
    if (v.outcome === 'wait') return 'retry';
    if (v.outcome === 'skip') {
      if (v.why === 'gone') {
        d.service.forget(key);
        written.delete(key);
      }
      return;
    }
    if (v.outcome === 'unchanged') return undefined;
    const b = v.binding;
    const w = v.writes;
    if (w.ordinals) {
      // Ranges first: a member's StatefulSet must never exist without its range (renaming is deletion).
      const wait = turnIn();
      if (wait > 0) return { againAfterMs: wait };
      const r = await write('ordinals', writeOrdinals(d.api, b, w.ordinals.starts, w.ordinals.resourceVersion));
      if (!r.ok) return failed(key, 'ordinal ranges', r);
      written.set(key, { rangesAt: clock.now() });
      d.events.record(b, 'Normal', 'OrdinalRanges', `ordinal ranges: ${Object.entries(w.ordinals.starts).map(([c, s]) => `${c} from ${s}`).join(', ')}`);
      return; // the OverridePolicy's own event queues the binding again
    }
    const mine = written.get(key) ?? {};
    if (mine.rangesAt !== undefined && clock.now() - mine.rangesAt < settleMs) return { againAfterMs: settleMs - (clock.now() - mine.rangesAt) };
    delete mine.rangesAt;
    if (mine.said && (mine.said.uid !== b.uid || b.observedGeneration >= mine.said.generation)) delete mine.said;
    if (w.clusters === undefined && !w.events.length) {
      // A refusal already on the binding, said again; or the status this process wrote, not yet back through the watch
      // (each spec patch's own event would otherwise write it twice): nothing to write, nothing taken from the pace.
      const again = mine.said?.generation === b.generation && mine.said.text === statusSaid(w);
      if (again || !scheduledStatus(b, b.generation, w.condition, w.affinityName, clock.now())) return undefined;
    }
    const wait = turnIn();
    if (wait > 0) return { againAfterMs: wait };
    let at: { resourceVersion: string; generation: number } = b;
    if (w.clusters !== undefined) {
      const spec = await write('clusters', writeClusters(d.api, b, w.clusters));
      if (!spec.ok) return failed(key, 'spec.clusters', spec);
      at = spec;
      d.log.info({ binding: key, plan: v.why }, 'binding scheduled');
    }
    // Karmada's events go on the binding and on the resource template, where its users and tools look.
    for (const e of w.events) {
      d.events.record(b, e.type, e.reason, e.message);
      if (!w.bindingOnly) d.events.record(templateRef(b), e.type, e.reason, e.message);
    }
    // The status follows the spec it reports; a refused status is written on the next turn.
    const status = scheduledStatus(b, at.generation, w.condition, w.affinityName, clock.now());
    if (!status) return undefined;
    const byVersion = mine.byVersion === true;
    const r = await write('status', writeScheduled(d.api, b, at, status, byVersion));
    if (r.ok) {
      written.set(key, w.condition.status === 'True' ? { said: { uid: b.uid, generation: at.generation, text: statusSaid(w) } } : {});
      return undefined;
    }
    if (r.stale && r.status === 422) {
      // The spec moved past the generation planned for (Karmada's taint manager, a scale): planned again from it, its
      // status then by resourceVersion, so that a 422 of any other cause is not sent again every CONFLICT_AGAIN_MS.
      written.set(key, { byVersion: true });
      return { againAfterMs: CONFLICT_AGAIN_MS };
    }
    return failed(key, 'Scheduled condition', r);
  }

  const reconcilerOf = reconciler({
    keys: () => d.service.keys(), reconcile, resyncMs: d.config.resyncSeconds * 1000, ready: () => d.view.ready(),
    retryBaseMs: 500, retryMaxMs: 30_000, clock,
    workers: d.config.workers,
    onError: (key, err) => d.log.warn({ binding: key, err: err.message }, 'binding plan failed'),
  });

  // A member's pods and nodes change often: one pass over the bindings per burst, not one per event.
  let gathering = false;
  d.view.onChange((what, key) => {
    if (what === 'binding') return reconcilerOf.add(key);
    if (what === 'override') {
      // A binding's ordinal ranges changed: only that namespace's bindings can read them.
      for (const k of d.service.keys()) if (k.startsWith(`${key.split('/')[0]}/`)) reconcilerOf.add(k);
      return;
    }
    if (gathering || !reconcilerOf.running()) return;
    gathering = true;
    clock.after(GATHER_MS, () => {
      gathering = false;
      for (const k of d.service.keys()) reconcilerOf.add(k);
    });
  });

  const c = reconcilerOf.controller(() => written.clear());
  return { start: c.start, stop: c.stop, idle: c.idle, writing: () => writes > 0 };
}
