import type { Logger } from 'pino';
import { liftGate, type LiftResult } from './lift.js';
import type { EventRecorder } from '../actuator/events.js';
import { evictPod, type EvictionGate } from '../controllers/eviction.js';
import { ANNOTATION } from '../cluster/annotations.js';
import type { ApiClient } from '../cluster/apiClient.js';
import type { SlimNode, SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { systemClock, type Timers } from '../common/clock.js';
import { ExpiringMap } from '../common/expiringMap.js';
import type { WorkResult } from '../common/workQueue.js';
import type { Metrics } from '../metrics/metrics.js';
import { changedWorkloadKey, resolveWorkload, workloadKey } from '../placement/workload.js';
import type { SpecDecision, GateFallback } from '../decision/spec.js';
import { reconciler } from '../common/reconciler.js';

interface GateOptions {
  /** How often every gated pod is queued (a resync): a pod whose decision waits is decided again then if no event woke it sooner. */
  intervalSeconds: number;
  patchesPerSecond: number;
  /** Adaptive fallback: at most this many pods deleted per minute; with dryRun none, an Event says which. */
  fallbackEvictionsPerMinute: number;
  fallbackDryRun: boolean;
}

export interface GateKeeperDeps {
  api: ApiClient;
  source: SnapshotSource;
  /** The decision service's decision for a gated pod (specDecisionOf.ts). */
  decide(pod: SlimPod): Promise<SpecDecision>;
  /** A pod given `fb` was deleted for not being scheduled in time: its successor skips what it was given. */
  skipForSuccessor(fb: GateFallback): void;
  events: Pick<EventRecorder, 'record'>;
  /** zonekeeper owns WorkloadSpreads (no OpenKruise): the keeper writes what a stored pod takes of a subset's patch, and reports the rest. */
  subsetPatchesOwned?: boolean;
  /** Why admission applied no subset patch whole, naming the setting that would (gatedSubsetPatch.ts subsetPatchSetting): said wherever one is not. */
  subsetPatchSetting?: string;
  /** The zone disruption budget, judged before an adaptive fallback's eviction. */
  evictionGate?: EvictionGate;
  opts: GateOptions;
  log: Logger;
  metrics: Metrics;
  clock?: Timers;
}

/** Gate writes under way at once: each is a PATCH, mostly waiting on the API server. */
const GATE_WRITES_IN_FLIGHT = 32;
/** How long a lifted pod is not decided again while the watch does not show it ungated. */
const LIFTED_KEPT_MS = 60_000;
/** How many characters of subset keys the gate remembers having told (about 4 MiB). */
const TOLD_CHARS = 2 * 1024 * 1024;

/** A pod that waits, and what can end its wait (kube-scheduler's EventsToRegister). */
interface Waiting { why: string; claims: readonly string[]; workload: string | undefined }

/**
 * Lifts the zone gate of gated pods (docs/design.md#the-zone-gate) on a reconciler: each pod
 * (by UID) is decided by the filter's policy code, then one conditional patch writes the zone
 * and removes the gate; each pod queued takes its turn from the queue's token bucket, so the
 * decision is as fresh as its write. Runs only while started (the Lease's holder). A pod whose
 * decision waits is decided again when something that can end its wait happens: a claim of its
 * own bound or given a volume, a node turning Ready or joining, a pod of its workload going
 * away, its workload changed; else at the resync, every `intervalSeconds`.
 * Pods lifted under an adaptive fallback go on a second reconciler, due when their time is up
 * or an autoscaler refuses them a node, paced by the eviction budget.
 */
export function zoneGateKeeper(deps: GateKeeperDeps) {
  const { api, source, decide, events, opts, log, metrics } = deps;
  const clock = deps.clock ?? systemClock;
  /** Lifted, the watch not showing it yet: not decided again meanwhile. */
  const lifted = new ExpiringMap<string, true>({ max: 100_000, ttlMs: LIFTED_KEPT_MS, clock });
  /** Every gated pod the cache shows, kept while not the holder too: a new holder starts from it. */
  const gated = new Set<string>();
  const waiting = new Map<string, Waiting>();
  /** Pods lifted under an adaptive fallback, until they bind: deleted if they do not in time. */
  const placed = new Map<string, { pod: Pick<SlimPod, 'namespace' | 'name'>; fallback: GateFallback; at: number }>();
  /** WorkloadSpread generations and subsets already told that part of a patch was not applied. */
  const toldSpreads = new Set<string>();
  /** The characters of toldSpreads' keys, which hold a tenant's subset names: at most TOLD_CHARS. */
  let toldChars = 0;
  const queueOpts = {
    resyncMs: opts.intervalSeconds * 1000, ready: source.ready, clock, retryBaseMs: 200, retryMaxMs: opts.intervalSeconds * 1000,
    onError: (key: string, err: Error) => log.error({ pod: key, err: err.message }, 'zone gate: deciding a pod failed'),
  };
  const gates = reconciler({
    ...queueOpts, keys: function *() { for (const uid of gated) if (!lifted.get(uid)) yield uid; }, reconcile: gate, workers: GATE_WRITES_IN_FLIGHT,
    // Writes in bursts of up to a tenth of a second's.
    pace: { perSecond: opts.patchesPerSecond, burst: Math.max(1, opts.patchesPerSecond / 10) },
  });
  // The eviction budget (at most fallbackEvictionsPerMinute, spread over the minute) is the queue's pace: each pod due takes its turn.
  const fallbacks = reconciler({
    ...queueOpts, keys: fallbacksDue, reconcile: evictUnscheduled, workers: 1,
    pace: { perSecond: opts.fallbackEvictionsPerMinute / 60, burst: opts.fallbackEvictionsPerMinute },
  });
  let liftedSince = 0;
  let stopReport: (() => void) | undefined;

  // Gated pods arrive on the queue; a pod no longer gated or gone leaves every record.
  source.store.onPod((type, pod) => {
    if (type === 'upsert' && pod.gated) {
      gated.add(pod.uid);
      gates.add(pod.uid);
      return;
    }
    gated.delete(pod.uid);
    waiting.delete(pod.uid);
    lifted.delete(pod.uid);
    gates.forget(pod.uid);
    if (type === 'delete' || pod.nodeName) {
      placed.delete(pod.uid);
      fallbacks.forget(pod.uid);
    }
    // A pod of a workload going away (or placed) frees a zone's limit for the ones waiting on it.
    if (type === 'delete' && waiting.size > 0) {
      const key = workloadOf(pod);
      if (key !== undefined) wake((w) => w.workload === key);
    }
  });
  source.store.onClaim((namespace, claim) => {
    const key = `${namespace}/${claim}`;
    wake((w) => w.claims.includes(key));
  });
  source.store.onNode((before, after) => {
    if (after && after.ready && !after.unschedulable && !(before && before.ready && !before.unschedulable && sameShape(before, after))) wake(() => true);
  });
  source.store.onWorkload((w) => {
    const key = changedWorkloadKey(w);
    wake((x) => x.workload === key);
  });
  // An autoscaler's refusal for a pod lifted under an adaptive fallback: the seat moves on now.
  source.store.onScaleReport((r) => {
    if (placed.has(r.pod.uid)) fallbacks.add(r.pod.uid);
  });

  function workloadOf(pod: SlimPod): string | undefined {
    const ref = resolveWorkload(pod, source.snapshot)?.ref;
    return ref && workloadKey(ref);
  }

  /** Queues the waiting pods `ends` says an event may have freed. */
  function wake(ends: (w: Waiting) => boolean): void {
    if (!gates.running()) return;
    for (const [uid, w] of waiting) if (ends(w)) gates.add(uid);
  }

  /** Decides one gated pod and writes the decision. */
  async function gate(uid: string): Promise<WorkResult> {
    if (!source.ready()) return 'retry'; // never decided blind
    const cached = source.snapshot.podByUid(uid);
    if (!cached?.gated || lifted.get(uid)) return;
    const d = await decide(cached);
    if (d.kind === 'wait') {
      const before = waiting.get(uid)?.why;
      waiting.set(uid, { why: d.why, claims: cached.claims.map((c) => `${cached.namespace}/${c}`), workload: workloadOf(cached) });
      metrics.gateDecisions.inc({ outcome: 'waiting' });
      if (before !== d.why) events.record(cached, 'Warning', 'ZoneGateWaiting', `zonekeeper keeps the pod gated: ${d.why}`);
      return;
    }
    lifted.set(uid, true);
    let r: LiftResult;
    try {
      // With OpenKruise its webhook owns patches: the keeper writes none.
      r = await liftGate(api, cached, d.kind === 'subset' && !deps.subsetPatchesOwned ? { ...d, patch: undefined } : d);
    } catch (err) {
      lifted.delete(uid);
      metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: 'error' });
      log.warn({ pod: `${cached.namespace}/${cached.name}`, err: (err as Error).message }, 'zone gate not lifted');
      waiting.set(uid, { why: (err as Error).message, claims: [], workload: undefined });
      return 'retry';
    }
    metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: r.result === 'lifted' ? 'ok' : r.result });
    // Changed since read (another writer, a hand-over): decided again from the cache.
    if (r.result === 'conflict') {
      lifted.delete(uid);
      return { againAfterMs: 50 };
    }
    if (r.result !== 'lifted') return;
    waiting.delete(uid);
    // Looked at again once `lifted` expires, should the watch never show the pod ungated.
    gates.addAfter(uid, LIFTED_KEPT_MS);
    if (d.kind !== 'as-is' && d.fallback) {
      placed.set(uid, { pod: { namespace: cached.namespace, name: cached.name }, fallback: d.fallback, at: clock.now() });
      fallbacks.addAfter(uid, d.fallback.afterMs);
    }
    metrics.gateDecisions.inc({ outcome: d.kind });
    if (liftedSince++ === 0) stopReport = clock.after(1000, reportLifted);
    log.debug({ pod: `${cached.namespace}/${cached.name}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined, subset: d.kind === 'subset' ? d.subset : undefined }, 'zone gate lifted');
    if (d.kind === 'as-is') events.record(cached, 'Normal', 'ZoneGateLifted', `zonekeeper lifted the gate without a zone: ${d.why}`);
    if (d.kind === 'subset' && r.patchNotApplied) patchNotApplied(cached, d.workloadSpread, d.subset, r.patchNotApplied);
    if (r.unwritable) events.record(cached, 'Warning', 'ZoneGateLifted', `zonekeeper lifted the gate but could not write ${d.kind === 'zone' ? d.zone : 'the zone'}: ${r.unwritable}`);
  }

  /**
   * Part of a subset's patch a gated pod could not take (docs/design.md#the-zone-gate): said on the
   * pod, and once per generation of its WorkloadSpread on the WorkloadSpread and on its workload, with the setting that would apply it.
   */
  function patchNotApplied(pod: SlimPod, workloadSpread: string, subset: string, fields: string): void {
    const why = deps.subsetPatchSetting ? `; ${deps.subsetPatchSetting}` : '';
    events.record(pod, 'Warning', 'SubsetPatchNotApplied', `WorkloadSpread ${workloadSpread} subset ${subset}: decided by the zone gate after the pod's `
    + 'creation: it wrote only what narrows where the pod runs (node selector keys added, node affinity); tolerations, labels, annotations and images apply '
    + `at admission only (docs/security.md#workloadspread-editors); not applied: ${fields}${why}`);
    for (const ws of source.snapshot.workloadSpreads(pod.namespace)) {
      const key = `${ws.uid}/${ws.generation}/${subset}`;
      if (ws.name !== workloadSpread || toldSpreads.has(key)) continue;
      if (toldSpreads.size >= 10_000 || toldChars + key.length > TOLD_CHARS) {
        toldSpreads.clear();
        toldChars = 0;
      }
      toldSpreads.add(key);
      toldChars += key.length;
      const told = `subset ${subset}: pods decided by the zone gate after their creation do not get ${fields} of its patch `
        + `(only admission applies all of it); they carry the annotation ${ANNOTATION.subsetPatchNotApplied}, and zonekeeper audit lists them${why}`;
      events.record(ws, 'Warning', 'SubsetPatchNotApplied', told);
      const owner = resolveWorkload(pod, source.snapshot)?.object;
      if (owner) events.record(owner, 'Warning', 'SubsetPatchNotApplied', `WorkloadSpread ${workloadSpread} ${told}`);
    }
  }

  /** One line of log a second while gates are lifted; each pod's lift is at debug. */
  function reportLifted(): void {
    log.info({ lifted: liftedSince, waiting: waiting.size, queued: gates.length() }, 'zone gates lifted');
    liftedSince = 0;
  }

  /** An autoscaler's refusal of a node to a pod lifted under an adaptive fallback, since it was lifted. */
  const refusal = (uid: string, p: { at: number }) => source.snapshot.scaleReports(uid).find((r) => r.at >= p.at - 1000);

  /** Pods lifted under an adaptive fallback whose time is up or that an autoscaler refused: what a resync queues (each takes a turn of the budget). */
  function *fallbacksDue(): Iterable<string> {
    for (const [uid, p] of placed) if (p.at + p.fallback.afterMs <= clock.now() || refusal(uid, p)) yield uid;
  }

  /**
   * Adaptive fallback (docs/design.md#the-zone-gate): a pod lifted with a zone or subset that is
   * still not scheduled after its time, or that an autoscaler refused a node, is evicted
   * (PodDisruptionBudgets decide; within the budget), and what it was given is skipped by its
   * successor. In a dry run, an Event only.
   */
  async function evictUnscheduled(uid: string): Promise<WorkResult> {
    const p = placed.get(uid);
    const cached = source.snapshot.podByUid(uid);
    if (!p || !cached || cached.nodeName || cached.terminating) {
      placed.delete(uid);
      return;
    }
    const refused = refusal(uid, p);
    const left = p.at + p.fallback.afterMs - clock.now();
    if (!refused && left > 0) return { againAfterMs: left };
    const what = refused
      ? `pod ${p.pod.name} was given ${p.fallback.given} and ${refused.source} will not add a node for it (${refused.message})`
      : `pod ${p.pod.name} was not scheduled in ${p.fallback.given} within ${Math.round(p.fallback.afterMs / 1000)}s`;
    const owner = resolveWorkload(cached, source.snapshot)?.object;
    if (opts.fallbackDryRun) {
      placed.delete(uid);
      metrics.gateFallbacks.inc({ result: 'would-delete' });
      events.record(cached, 'Normal', 'ZoneFallbackWouldDelete', `gate.fallbackDryRun: ${what}; would delete it so that its successor goes elsewhere`);
      return;
    }
    const res = await evictPod(api, p.pod, log, deps.evictionGate && { judge: deps.evictionGate, by: 'zonekeeper adaptive fallback' });
    if (res.status === 200 || res.status === 201 || res.status === 404) {
      placed.delete(uid);
      deps.skipForSuccessor(p.fallback);
      metrics.gateFallbacks.inc({ result: res.status === 404 ? 'gone' : 'deleted' });
      log.info({ pod: `${p.pod.namespace}/${p.pod.name}`, given: p.fallback.given, workload: p.fallback.workload }, 'adaptive fallback: evicted a pod not scheduled in time');
      if (owner) events.record(owner, 'Normal', 'ZoneFallback', `${what}: evicted; its successor skips ${p.fallback.given}`);
      return;
    }
    // A PodDisruptionBudget refused (429) or the call failed: tried again with backoff.
    metrics.gateFallbacks.inc({ result: res.status === 429 ? 'refused' : 'error' });
    return 'retry';
  }

  return {
    /** Gated pods the cache shows, and why each one waiting still waits. */
    view(): { gated: number; waiting: { pod: string; why: string }[] } {
      const out: { pod: string; why: string }[] = [];
      for (const [uid, w] of waiting) {
        const p = source.snapshot.podByUid(uid);
        if (p && out.length < 100) out.push({ pod: `${p.namespace}/${p.name}`, why: w.why });
      }
      return { gated: gated.size, waiting: out };
    },
    /** Why this pod is still gated, if it is. */
    reason: (uid: string) => waiting.get(uid)?.why,
    /** Takes every gated pod the cache shows (a new holder takes those gated before it): the first resync. */
    start() {
      waiting.clear();
      gates.start();
      fallbacks.start();
    },
    async stop() {
      await Promise.all([gates.stop(), fallbacks.stop()]);
      stopReport?.();
      if (liftedSince > 0) reportLifted();
    },
  };
}

/** Labels and taints unchanged: a node whose shape is the same cannot end a wait by itself. */
function sameShape(a: SlimNode, b: SlimNode): boolean {
  return a.taints.length === b.taints.length && Object.keys(a.labels).length === Object.keys(b.labels).length
    && Object.keys(a.labels).every((k) => a.labels[k] === b.labels[k]);
}
