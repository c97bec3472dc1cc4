import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import { retryOnConflict } from '../actuator/conditionalPatch.js';
import type { ApiClient } from '../cluster/apiClient.js';
import { ANNOTATION, REVISION_LABEL } from '../cluster/annotations.js';
import { workloadPath } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { WorkResult } from '../common/workQueue.js';
import type { Metrics } from '../metrics/metrics.js';
import { workloadModel, type ZoneListDeps } from '../placement/model.js';
import type { PlacementSettings } from '../placement/settings.js';
import { resolveWorkload, workloadByKey, workloadKey } from '../placement/workload.js';
import { pauseOf, pauseRecord, rolloutOptedIn, rolloutSettingsOf, rolloutStep, type RolloutDefaults } from '../placement/rolloutPlan.js';
import type { RolloutView } from '../placement/healthRecord.js';
import { reconciler } from '../common/reconciler.js';

/** An eviction through the Eviction API (eviction.ts evictPod, or the zone gate in process): its status and message. */
export type EvictCall = (pod: SlimPod) => Promise<{ status: number; message: string }>;

export interface ZoneRolloutOptions extends RolloutDefaults {
  intervalSeconds: number;
}

/** What the Lease holder last did for an opted-in workload (/debug/rollouts). */
export interface RolloutStatus {
  workload: string;
  at: string;
  decision: 'evicted' | 'refused' | 'error' | 'wait' | 'paused' | 'done' | 'invalid';
  pods?: string[];
  message: string;
  view?: RolloutView;
}

/** Backoff after a refused eviction (a PodDisruptionBudget, the zone budget): doubles from 5 s up to 5 min. */
const BACKOFF_MS = { first: 5_000, max: 300_000 };
/** An eviction this holder made that the watch does not show yet is waited for this long at most. */
const IN_FLIGHT_MS = 60_000;
const NOT_READY_MS = 1000;
/** The StatefulSet's watch behind the API's own: looked at again this soon (its event queues it sooner). */
const LAGGING_MS = 5_000;

/**
 * Zone-by-zone rollouts in the Lease's holder (docs/design.md#zone-by-zone-rollouts), on the work
 * queue by workload: a pod or the workload changing queues it, and all every `intervalSeconds`.
 * Every step is planned from the cluster (pods' revisions and readiness, the pause annotation),
 * so a new holder continues where the last one was; only evictions the watch does not show yet
 * are remembered, so that none is made twice.
 */
export function zoneRolloutController(deps: {
  api: ApiClient; source: SnapshotSource; settings: PlacementSettings; lists: ZoneListDeps; evict: EvictCall;
  events: Pick<EventRecorder, 'record'>; opts: ZoneRolloutOptions; log: Logger; metrics: Metrics; clock?: Timers;
}) {
  const { api, source, evict, events, opts, log, metrics } = deps;
  const clock = deps.clock ?? systemClock;
  const status = new Map<string, RolloutStatus>();
  /** Per workload: pods this holder evicted, by UID, and when. */
  const evicting = new Map<string, Map<string, number>>();
  /** Per workload: when this holder saw a pause end without a new revision (a user resumed it). */
  const resumed = new Map<string, number>();
  const pausedSeen = new Set<string>();
  const queue = reconciler({
    keys: function *() { for (const w of source.snapshot.allWorkloads()) if (rolloutOptedIn(w)) yield workloadKey(w); },
    reconcile: step,
    resyncMs: opts.intervalSeconds * 1000,
    ready: source.ready,
    clock,
    retryBaseMs: BACKOFF_MS.first,
    retryMaxMs: BACKOFF_MS.max,
    onError: (key, err) => log.error({ workload: key, err: err.message }, 'zone rollout step failed'),
  });
  source.store.onPod((_type, pod) => {
    if (!queue.running()) return;
    const resolved = resolveWorkload(pod, source.snapshot);
    if (resolved?.object && rolloutOptedIn(resolved.object)) queue.add(workloadKey(resolved.ref));
  });
  source.store.onWorkload((w) => { if (queue.running() && (rolloutOptedIn(w) || status.has(workloadKey(w)))) queue.add(workloadKey(w)); });

  const note = (s: Omit<RolloutStatus, 'at'>) => status.set(s.workload, { ...s, at: new Date(clock.now()).toISOString() });
  const forget = (key: string) => {
    status.delete(key);
    evicting.delete(key);
    resumed.delete(key);
    pausedSeen.delete(key);
  };

  /**
   * Writes the pause annotation while the updateRevision is still `revision` and the annotation is still `over`
   * (absent, or an earlier revision's record it replaces); removes it (null) while it is still `over`, or with
   * no `over` once the updateRevision is another.
   */
  async function writePause(w: SlimWorkload, revision: string, value: string | null, over?: string): Promise<boolean> {
    return retryOnConflict<boolean>(api, workloadPath(w), {
      describe: `${w.kind} ${w.namespace}/${w.name}`, timeoutMs: () => 10_000, fail: (m) => new Error(m),
      giveUp: (attempt) => (attempt < 3 ? undefined : new Error(`${w.namespace}/${w.name}: still conflicting`)),
    }, (obj) => {
      const now = obj?.metadata?.annotations?.[ANNOTATION.zoneRolloutPaused];
      const rev = obj?.status?.updateRevision;
      if (value !== null && (now !== over || rev !== revision)) return { done: false };
      if (value === null && (over !== undefined ? now !== over : now === undefined || rev === revision)) return { done: false };
      return { annotations: { [ANNOTATION.zoneRolloutPaused]: value }, result: true };
    });
  }

  /** The update revision as the API holds it now (undefined: the controller has not observed the spec yet). */
  async function liveUpdateRevision(w: SlimWorkload): Promise<string | undefined> {
    const res = await api.request('GET', workloadPath(w), { timeoutMs: 10_000 });
    if (res.status !== 200) throw new Error(`GET ${w.kind} ${w.namespace}/${w.name}: ${res.status}`);
    const obj = JSON.parse(res.body) as { metadata?: { generation?: number }; status?: { observedGeneration?: number; updateRevision?: string } };
    const observed = (obj.status?.observedGeneration ?? 0) >= (obj.metadata?.generation ?? 0);
    return observed ? obj.status?.updateRevision : undefined;
  }

  /** The pod as the API holds it now: its revision, or gone (404, or a successor of the same name: another UID). */
  async function livePod(pod: SlimPod): Promise<{ revision: string | undefined } | 'gone'> {
    const res = await api.request('GET', `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}`, { timeoutMs: 10_000 });
    if (res.status === 404) return 'gone';
    if (res.status !== 200) throw new Error(`GET pod ${pod.namespace}/${pod.name}: ${res.status}`);
    const obj = JSON.parse(res.body) as { metadata?: { uid?: string; labels?: Record<string, string> } };
    return obj.metadata?.uid !== pod.uid ? 'gone' : { revision: obj.metadata?.labels?.[REVISION_LABEL] };
  }

  /** Evictions made and not yet shown by the watch: still in the cache, not terminating. */
  function stillShown(key: string): string[] {
    const made = evicting.get(key);
    if (!made) return [];
    const now = clock.now();
    const shown: string[] = [];
    for (const [uid, at] of made) {
      const pod = source.snapshot.podByUid(uid);
      if (!pod || pod.terminating || now - at > IN_FLIGHT_MS) made.delete(uid);
      else shown.push(pod.name);
    }
    return shown;
  }

  async function step(key: string): Promise<WorkResult> {
    if (!source.ready()) return { againAfterMs: NOT_READY_MS };
    const snapshot = source.snapshot;
    const w = workloadByKey(snapshot, key);
    if (!w || !rolloutOptedIn(w)) return forget(key);
    const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, deps.settings, deps.lists);
    if (model.policy === 'none') return void note({ workload: key, decision: 'invalid', message: model.why });
    const settings = rolloutSettingsOf(w, opts);
    if ('error' in settings) return void note({ workload: key, decision: 'invalid', message: settings.error });
    const pause = pauseOf(w);
    if (pause && !pausedSeen.has(key)) pausedSeen.add(key);
    else if (!pause && pausedSeen.delete(key)) resumed.set(key, clock.now());
    const unseen = stillShown(key);
    if (unseen.length > 0) return void note({ workload: key, decision: 'wait', message: `the watch does not show the eviction of ${unseen.join(', ')} yet` });
    const s = rolloutStep(model, w, snapshot, settings, clock.now(), resumed.get(key));
    if (s.kind !== 'paused' && s.kind !== 'pause' && s.clearPause) {
      const back = s.clearPause === 'pod-available';
      // Resumed by its pod only while the record is the one read: a pause written meanwhile (by a user) holds.
      if (await writePause(w, pause!.revision!, null, back ? w.annotations[ANNOTATION.zoneRolloutPaused] : undefined)) {
        events.record(w, 'Normal', 'ZoneRolloutResumed', back
          ? `revision ${pause!.revision}: pod ${pause!.waitsOn}, which the rollout paused on, is available again`
          : `revision ${w.update!.updateRevision}: the pause for an earlier revision no longer holds`);
        if (back) log.info({ workload: key, revision: pause!.revision, pod: pause!.waitsOn }, 'zone rollout resumed: the pod it paused on is available again');
      } else if (back) {
        return void note({ workload: key, decision: 'paused', message: `${pause!.why} (its pod is available again; the pause changed meanwhile)`, view: s.view });
      }
    }
    if (s.kind === 'none') return void note({ workload: key, decision: 'done', message: s.why, view: s.view });
    if (s.kind === 'paused') return void note({ workload: key, decision: 'paused', message: s.why, view: s.view });
    if (s.kind === 'wait') {
      note({ workload: key, decision: 'wait', message: `${s.why}: waits for ${s.view.waitsFor.join('; ')}`, view: s.view });
      return s.recheckMs !== undefined ? { againAfterMs: Math.max(1, s.recheckMs) } : undefined;
    }
    if (s.kind === 'pause') {
      // A new revision paused at its first step: its record replaces the earlier revision's.
      const over = s.clearPause ? w.annotations[ANNOTATION.zoneRolloutPaused] : undefined;
      if (await writePause(w, s.view.revision, pauseRecord(s.view.revision, clock.now(), s.why, s.waitsOn), over)) {
        metrics.rolloutPauses.inc();
        log.warn({ workload: key, revision: s.view.revision, pod: s.pod }, `zone rollout paused: ${s.why}`);
        events.record(w, 'Warning', 'ZoneRolloutPaused', `${s.why}; ${s.waitsOn !== undefined ? `it resumes when pod ${s.waitsOn} is available, or remove` : 'remove'} ${ANNOTATION.zoneRolloutPaused} to resume`);
      }
      return void note({ workload: key, decision: 'paused', message: s.why, view: s.view });
    }
    // The pods watch may run ahead of the StatefulSet's: a pod of a revision the cache does not show yet is no old pod.
    const live = await liveUpdateRevision(w);
    if (live !== s.view.revision) {
      note({ workload: key, decision: 'wait', message: `the StatefulSet's update revision is ${live ?? 'not reported yet'} in the API, ${s.view.revision} in the cache: waits for the watch`, view: s.view });
      return { againAfterMs: LAGGING_MS };
    }
    const made = evicting.get(key) ?? evicting.set(key, new Map()).get(key)!;
    const gone: string[] = [];
    for (const pod of s.pods) {
      // No step twice, whatever the cache shows: a pod the API already has on the update revision is not evicted.
      const now = await livePod(pod);
      if (now === 'gone') {
        gone.push(pod.name);
        continue;
      }
      if (now.revision === live) {
        log.warn({ workload: key, pod: pod.name, revision: live }, 'zone rollout: the cache showed an old revision of a pod the API has on the update revision; not evicted');
        note({ workload: key, decision: 'wait', message: `pod ${pod.name} is on revision ${live} in the API, an older one in the cache: waits for the watch`, view: s.view });
        if (gone.length > 0) events.record(w, 'Normal', 'ZoneRolloutStep', `${s.why}: evicted ${gone.join(', ')}`);
        return { againAfterMs: LAGGING_MS };
      }
      const res = await evict(pod);
      // 404, 409: that pod (its UID) is gone already; its successor is the watch's to show.
      if (res.status === 200 || res.status === 201 || res.status === 404 || res.status === 409) {
        if (res.status < 300) {
          made.set(pod.uid, clock.now());
          metrics.rolloutPodsReplaced.inc();
        }
        gone.push(pod.name);
        continue;
      }
      const refused = res.status === 429;
      const message = `${s.why}: evicted ${gone.length > 0 ? gone.join(', ') : 'none'}; ${pod.name} ${refused ? 'refused' : `failed (${res.status || 'no answer'})`}: ${res.message}; next try in ${queue.retryDelay(key) / 1000}s`;
      note({ workload: key, decision: refused ? 'refused' : 'error', pods: gone, message, view: s.view });
      if (!refused) log.warn({ workload: key, pod: pod.name, status: res.status, err: res.message }, 'zone rollout eviction failed');
      if (gone.length > 0) events.record(w, 'Normal', 'ZoneRolloutStep', `${s.why}: evicted ${gone.join(', ')}`);
      return 'retry';
    }
    log.info({ workload: key, zone: s.view.zone, step: s.view.step, pods: gone, revision: s.view.revision }, 'zone rollout batch evicted');
    events.record(w, 'Normal', 'ZoneRolloutStep', `${s.why}: evicted ${gone.join(', ')}`);
    note({ workload: key, decision: 'evicted', pods: gone, message: s.why, view: s.view });
    queue.forget(key);
  }

  return {
    start: () => queue.start(),
    async stop() {
      await queue.stop();
      // A later term reads everything again; an eviction of this one the watch shows by then.
      evicting.clear();
      resumed.clear();
      pausedSeen.clear();
    },
    idle: () => queue.idle(),
    status: (): RolloutStatus[] => [...status.values()].sort((a, b) => a.workload.localeCompare(b.workload)),
  };
}
