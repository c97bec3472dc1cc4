import type { Logger } from 'pino';
import { liftGate, type LiftResult } from '../actuator/podGate.js';
import type { EventRecorder } from '../actuator/events.js';
import type { ApiClient } from '../cluster/apiClient.js';
import type { SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { sleep } from '../common/clock.js';
import { ExpiringMap } from '../common/expiringMap.js';
import type { Metrics } from '../metrics.js';
import { resolveWorkload } from '../placement/workload.js';
import type { GateDecision, GateFallback } from '../placement/zoneGate.js';
import { evictPod, perMinuteBudget } from '../actuator/eviction.js';
import { tokenBucket } from '../common/tokenBucket.js';

export interface GateOptions {
  /** How often pods whose decision waits are decided again. */
  intervalSeconds: number;
  patchesPerSecond: number;
  /** Adaptive fallback: at most this many pods deleted per minute; with dryRun none, an Event says which. */
  fallbackEvictionsPerMinute: number;
  fallbackDryRun: boolean;
}

export interface GateKeeperDeps {
  api: ApiClient;
  source: SnapshotSource;
  /** The filter's decision for a gated pod (ExtenderService.decideGate). */
  decide(pod: SlimPod): Promise<GateDecision>;
  /** A pod given `fb` was deleted for not being scheduled in time: its successor skips what it was given. */
  fellBack(fb: GateFallback): void;
  events: Pick<EventRecorder, 'record'>;
  opts: GateOptions;
  log: Logger;
  metrics: Metrics;
}

/** Gate writes under way at once: each is a GET and a PATCH, mostly waiting on the API server. */
const GATE_WRITES_IN_FLIGHT = 32;

/** What the keeper remembers of a gated pod the cache shows. */
interface Gated { namespace: string; name: string; uid: string }

/**
 * Lifts the zone gate of gated pods (docs/design.md#the-zone-gate): each is decided by the
 * filter's policy code (`decide`), then one conditional patch writes the zone and removes the
 * gate. Runs only while started (the Lease's holder); a pod is written once (a lifted one is
 * remembered until the watch shows it ungated), patches are paced, and a conflict or a
 * hand-over means deciding again from the cache, never writing twice.
 */
export function zoneGateKeeper(deps: GateKeeperDeps) {
  const { api, source, decide, events, opts, log, metrics } = deps;
  const gated = new Map<string, Gated>();
  /**
   * Gated pods to decide, in arrival order: a pass visits these, not every gated pod, so pods
   * arriving during a pass cost it their own work, not a scan of the rest. Each pass starts by
   * taking in every gated pod that is due (its wait over, a lift the watch never showed).
   */
  const due = new Set<string>();
  /** Lifted, the watch not showing it yet: not decided again meanwhile. */
  const lifted = new ExpiringMap<string, true>({ max: 100_000, ttlMs: 60_000 });
  /** Why a pod still waits (its last reason), and when it is decided next. */
  const waiting = new Map<string, { why: string; next: number }>();
  /** Pods lifted under an adaptive fallback, until they bind: deleted if they do not in time. */
  const placed = new Map<string, { pod: Gated; fallback: GateFallback; at: number }>();
  const budget = perMinuteBudget(opts.fallbackEvictionsPerMinute);
  // Writes in bursts of up to a tenth of a second's: a sleep per write would cap the rate at the timer's granularity.
  const pace = tokenBucket(opts.patchesPerSecond, Math.max(1, opts.patchesPerSecond / 10));
  let stopped = true;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  source.store.onPod((type, pod) => {
    if (type === 'upsert' && pod.gated) {
      gated.set(pod.uid, { namespace: pod.namespace, name: pod.name, uid: pod.uid });
      due.add(pod.uid);
      soon();
      return;
    }
    gated.delete(pod.uid);
    due.delete(pod.uid);
    lifted.delete(pod.uid);
    waiting.delete(pod.uid);
    if (type === 'delete' || pod.nodeName) placed.delete(pod.uid);
  });

  // An autoscaler's refusal for a pod lifted under an adaptive fallback: the seat moves on now.
  source.store.onScaleReport((r) => {
    if (placed.has(r.pod.uid)) soon();
  });

  /** Pods arrived during a pass: taken in it, or by the next one right after it. */
  let again = false;
  /** Wakes a pass waiting on its writes: a pod arrived. */
  let arrived: (() => void) | undefined;
  /** Gates lifted in the running pass: one line of log per pass, each pod at debug. */
  let liftedInPass = 0;

  function soon(): void {
    if (stopped) return;
    if (running) {
      again = true;
      arrived?.();
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(round, 0);
    timer.unref();
  }

  /** One pass over the gated pods due now, paced; then the next pass is scheduled. */
  function round(): void {
    if (stopped) return;
    running = pass().catch((err) => log.error({ err: (err as Error).message }, 'zone gate pass failed')).finally(() => {
      running = undefined;
      if (stopped) return;
      timer = setTimeout(round, again ? 50 : opts.intervalSeconds * 1000);
      again = false;
      timer.unref();
    });
  }

  /** Writes one decision; a pod lifted is not decided again until the watch shows it. */
  async function lift(pod: Gated, cached: SlimPod, d: Exclude<GateDecision, { kind: 'wait' }>): Promise<void> {
    let r: LiftResult;
    try {
      r = await liftGate(api, cached, d);
    } catch (err) {
      lifted.delete(pod.uid);
      metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: 'error' });
      log.warn({ pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message }, 'zone gate not lifted');
      waiting.set(pod.uid, { why: (err as Error).message, next: Date.now() + opts.intervalSeconds * 1000 });
      return;
    }
    metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: r.result === 'lifted' ? 'ok' : r.result });
    if (r.result === 'conflict') {
      // Changed since read (another writer, a hand-over): decided again from the cache, soon.
      lifted.delete(pod.uid);
      due.add(pod.uid);
      again = true;
    }
    if (r.result !== 'lifted') return;
    waiting.delete(pod.uid);
    if (d.kind !== 'as-is' && d.fallback) placed.set(pod.uid, { pod, fallback: d.fallback, at: Date.now() });
    metrics.gateDecisions.inc({ outcome: d.kind });
    liftedInPass++;
    log.debug({ pod: `${pod.namespace}/${pod.name}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined, subset: d.kind === 'subset' ? d.subset : undefined }, 'zone gate lifted');
    if (d.kind === 'as-is') events.record(cached, 'Normal', 'ZoneGateLifted', `zonekeeper lifted the gate without a zone: ${d.why}`);
    if (r.unwritable) events.record(cached, 'Warning', 'ZoneGateLifted', `zonekeeper lifted the gate but could not write ${d.kind === 'zone' ? d.zone : 'the zone'}: ${r.unwritable}`);
  }

  /**
   * The gated pods due now: decided one after another (each decision sees the reservations of
   * the ones before), written GATE_WRITES_IN_FLIGHT at a time, started at most patchesPerSecond.
   * Pods that arrive while writes are in flight are taken at once, in the same pass.
   */
  async function pass(): Promise<void> {
    const inflight = new Set<Promise<void>>();
    const started = Date.now();
    liftedInPass = 0;
    if (gated.size > 0) log.debug({ gated: gated.size, waiting: waiting.size, ready: source.ready() }, 'zone gate pass');
    const now = Date.now();
    for (const [uid] of gated) if (!lifted.has(uid) && (waiting.get(uid)?.next ?? 0) <= now) due.add(uid);
    while (!stopped) {
      again = false;
      await visitDue(inflight);
      if (again) continue;
      if (inflight.size === 0) break;
      // A write done or a pod arrived: whichever is first.
      await Promise.race([...inflight, new Promise<void>((resolve) => { arrived = resolve; })]);
      arrived = undefined;
    }
    await Promise.all(inflight);
    if (liftedInPass > 0) log.info({ lifted: liftedInPass, ms: Date.now() - started, gated: gated.size, waiting: waiting.size }, 'zone gates lifted');
    await fallBack();
  }

  async function visitDue(inflight: Set<Promise<void>>): Promise<void> {
    // A Set's iteration also visits what is added to it meanwhile: pods arriving during the pass.
    for (const uid of due) {
      if (stopped || !source.ready()) return; // never decided blind: the next pass tries again
      due.delete(uid);
      const pod = gated.get(uid);
      if (!pod || lifted.has(uid) || (waiting.get(uid)?.next ?? 0) > Date.now()) continue;
      const cached = source.snapshot.podByUid(pod.uid);
      if (!cached?.gated) continue;
      const d = await decide(cached);
      if (d.kind === 'wait') {
        const before = waiting.get(pod.uid)?.why;
        waiting.set(pod.uid, { why: d.why, next: Date.now() + opts.intervalSeconds * 1000 });
        metrics.gateDecisions.inc({ outcome: 'waiting' });
        if (before !== d.why) events.record(cached, 'Warning', 'ZoneGateWaiting', `zonekeeper keeps the pod gated: ${d.why}`);
        continue;
      }
      while (inflight.size >= GATE_WRITES_IN_FLIGHT) await Promise.race(inflight);
      const wait = pace.wait();
      if (wait > 0) await sleep(wait);
      lifted.set(pod.uid, true);
      const write: Promise<void> = lift(pod, cached, d).finally(() => inflight.delete(write));
      inflight.add(write);
    }
  }

  /**
   * Adaptive fallback (docs/design.md#the-zone-gate): a pod lifted with a zone or subset that is
   * still not scheduled after its time is evicted (PodDisruptionBudgets decide; within the
   * budget), and what it was given is skipped by its successor. In a dry run, an Event only.
   */
  async function fallBack(): Promise<void> {
    const now = Date.now();
    for (const [uid, p] of [...placed]) {
      if (stopped) return;
      const cached = source.snapshot.podByUid(uid);
      if (!cached || cached.nodeName || cached.terminating) {
        placed.delete(uid);
        continue;
      }
      // An autoscaler said, since the lift, that it will not add a node for it: no need to wait out the time.
      const refused = source.snapshot.scaleReports(uid).find((r) => r.at >= p.at - 1000);
      if (!refused && now - p.at < p.fallback.afterMs) continue;
      const what = refused
        ? `pod ${p.pod.name} was given ${p.fallback.given} and ${refused.source} will not add a node for it (${refused.message})`
        : `pod ${p.pod.name} was not scheduled in ${p.fallback.given} within ${Math.round(p.fallback.afterMs / 1000)}s`;
      const owner = ownerOf(cached);
      if (opts.fallbackDryRun) {
        placed.delete(uid);
        metrics.gateFallbacks.inc({ result: 'would-delete' });
        events.record(cached, 'Normal', 'ZoneFallbackWouldDelete', `gate.fallbackDryRun: ${what}; would delete it so that its successor goes elsewhere`);
        continue;
      }
      if (!budget.take()) return;
      const res = await evictPod(api, p.pod, log);
      if (res.status === 200 || res.status === 201 || res.status === 404) {
        placed.delete(uid);
        deps.fellBack(p.fallback);
        metrics.gateFallbacks.inc({ result: res.status === 404 ? 'gone' : 'deleted' });
        log.info({ pod: `${p.pod.namespace}/${p.pod.name}`, given: p.fallback.given, workload: p.fallback.workload }, 'adaptive fallback: evicted a pod not scheduled in time');
        if (owner) events.record(owner, 'Normal', 'ZoneFallback', `${what}: evicted; its successor skips ${p.fallback.given}`);
      } else {
        // A PodDisruptionBudget refused (429) or the call failed: tried again at the next pass.
        metrics.gateFallbacks.inc({ result: res.status === 429 ? 'refused' : 'error' });
      }
    }
  }

  /** The workload a pod's Events about its fallback go on. */
  function ownerOf(pod: SlimPod) {
    const ref = resolveWorkload(pod, source.snapshot);
    return ref?.object;
  }

  return {
    /** Gated pods the cache shows, and why each one waiting still waits. */
    view(): { gated: number; waiting: { pod: string; why: string }[] } {
      const out: { pod: string; why: string }[] = [];
      for (const [uid, w] of waiting) {
        const p = gated.get(uid);
        if (p && out.length < 100) out.push({ pod: `${p.namespace}/${p.name}`, why: w.why });
      }
      return { gated: gated.size, waiting: out };
    },
    /** Why this pod is still gated, if it is. */
    reason: (uid: string) => waiting.get(uid)?.why,
    start() {
      stopped = false;
      waiting.clear();
      clearTimeout(timer);
      timer = setTimeout(round, 0);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type ZoneGateKeeper = ReturnType<typeof zoneGateKeeper>;

