import type { Logger } from 'pino';
import { liftGate, type LiftResult } from '../actuator/podGate.js';
import type { EventRecorder } from '../actuator/events.js';
import type { ApiClient } from '../cluster/apiClient.js';
import type { SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { sleep } from '../common/clock.js';
import { ExpiringMap } from '../common/expiringMap.js';
import type { Metrics } from '../metrics.js';
import type { GateDecision } from '../placement/zoneGate.js';

export interface GateOptions {
  /** How often pods whose decision waits are decided again. */
  intervalSeconds: number;
  patchesPerSecond: number;
}

/** What the keeper remembers of a gated pod the cache shows. */
interface Gated { namespace: string; name: string; uid: string }

/**
 * Lifts the zone gate of gated pods (docs/design.md#the-zone-gate): each is decided by the
 * filter's policy code (`decide`), then one conditional patch writes the zone and removes the
 * gate. Runs only while started (the Lease's holder); a pod is written once (a lifted one is
 * remembered until the watch shows it ungated), patches are paced, and a conflict or a
 * hand-over means deciding again from the cache, never writing twice.
 */
export function zoneGateKeeper(
  api: ApiClient, source: SnapshotSource, decide: (pod: SlimPod) => Promise<GateDecision>,
  events: Pick<EventRecorder, 'record'>, opts: GateOptions, log: Logger, metrics: Metrics,
) {
  const gated = new Map<string, Gated>();
  /** Lifted, the watch not showing it yet: not decided again meanwhile. */
  const lifted = new ExpiringMap<string, true>({ max: 100_000, ttlMs: 60_000 });
  /** Why a pod still waits (its last reason), and when it is decided next. */
  const waiting = new Map<string, { why: string; next: number }>();
  let stopped = true;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  source.store.onPod((type, pod) => {
    if (type === 'upsert' && pod.gated) {
      gated.set(pod.uid, { namespace: pod.namespace, name: pod.name, uid: pod.uid });
      soon();
      return;
    }
    gated.delete(pod.uid);
    lifted.delete(pod.uid);
    waiting.delete(pod.uid);
  });

  function soon(): void {
    if (stopped || running) return;
    clearTimeout(timer);
    timer = setTimeout(round, 50);
    timer.unref();
  }

  /** One pass over the gated pods due now, paced; then the next pass is scheduled. */
  function round(): void {
    if (stopped) return;
    running = pass().catch((err) => log.error({ err: (err as Error).message }, 'zone gate pass failed')).finally(() => {
      running = undefined;
      if (stopped) return;
      timer = setTimeout(round, opts.intervalSeconds * 1000);
      timer.unref();
    });
  }

  async function pass(): Promise<void> {
    const spacing = 1000 / opts.patchesPerSecond;
    if (gated.size > 0) log.debug({ gated: gated.size, waiting: waiting.size, ready: source.ready() }, 'zone gate pass');
    for (const pod of [...gated.values()]) {
      if (stopped) return;
      if (!source.ready()) return; // never decided blind: the next pass tries again
      if (lifted.has(pod.uid) || !gated.has(pod.uid) || (waiting.get(pod.uid)?.next ?? 0) > Date.now()) continue;
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
      const started = Date.now();
      let r: LiftResult;
      try {
        r = await liftGate(api, pod, d);
      } catch (err) {
        metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: 'error' });
        log.warn({ pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message }, 'zone gate not lifted');
        waiting.set(pod.uid, { why: (err as Error).message, next: Date.now() + opts.intervalSeconds * 1000 });
        continue;
      }
      metrics.actuatorWrites.inc({ action: 'lift-zone-gate', result: r.result === 'lifted' ? 'ok' : r.result });
      if (r.result === 'lifted') {
        lifted.set(pod.uid, true);
        waiting.delete(pod.uid);
        metrics.gateDecisions.inc({ outcome: d.kind });
        log.info({ pod: `${pod.namespace}/${pod.name}`, decision: d.kind, zone: d.kind === 'zone' ? d.zone : undefined, subset: d.kind === 'subset' ? d.subset : undefined }, 'zone gate lifted');
        if (d.kind === 'as-is') events.record(cached, 'Normal', 'ZoneGateLifted', `zonekeeper lifted the gate without a zone: ${d.why}`);
        if (r.unwritable) events.record(cached, 'Warning', 'ZoneGateLifted', `zonekeeper lifted the gate but could not write ${d.kind === 'zone' ? d.zone : 'the zone'}: ${r.unwritable}`);
      }
      const wait = spacing - (Date.now() - started);
      if (wait > 0) await sleep(wait);
    }
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
