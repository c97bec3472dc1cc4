import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { systemClock, type Timers } from '../common/clock.js';
import type { WorkResult } from '../common/workQueue.js';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { retryOnConflict, StillConflicting, WRITE_BACKOFF_MS, type PatchStep } from './conditionalPatch.js';
import { ANNOTATION } from '../cluster/annotations.js';
import { type SlimWorkload } from '../cluster/objects.js';
import { workloadPath, WORKLOAD_KINDS } from '../cluster/kinds.js';
import type { ClusterStore } from '../cluster/store.js';
import type { Metrics } from '../metrics/metrics.js';
import { chooseInstanceId, parseAssignment, serializeAssignment } from '../placement/instanceAssignment.js';
import type { PendingFreezes, PendingList } from '../placement/fleet.js';
import { workloadKey } from '../placement/workload.js';
import { parseZoneList } from '../placement/zones.js';
import { eventRecorder, logRecorder, type EventRecorder } from './events.js';
import { AssignmentError, instanceIdWriter, type AssignRequest } from './instanceIdWriter.js';
// The freezes are a background writer like the controllers': on the one reconciler (common/ below it only).
import { reconciler } from '../common/reconciler.js';

/** Every write zonekeeper makes to the cluster goes through here (docs/design.md#data-flow). */
export interface Actuator {
  /** Freezes the derived zone list onto the workload; fire and forget, deduplicated. `adopted`: how many placed seats it keeps in place. */
  freezeZones(workload: SlimWorkload, zones: string[], adopted?: { agree: number; seats: number }): void;
  /** Every list being frozen that the watch may not show yet, by workload key, for the model and fleet balance (a read-only view). */
  readonly pendingFreezes: PendingFreezes;
  /** The pod's instance ID, written to its owner and the pod if it had none (docs/design.md#instance-ids). */
  assignInstanceId(req: AssignRequest): Promise<number>;
  /**
   * The eviction gate's record on the workload (docs/design.md#zone-at-a-time): `decide` reads the
   * approvals as the API server has them now and says what to write; written conditionally on what
   * was read, decided again after a conflict, durable before the answer.
   */
  recordApprovals<T>(w: SlimWorkload, decide: (recorded: string | undefined) => PatchStep<T> | Promise<PatchStep<T>>): Promise<T>;
  /** A pod as the API server has it now (undefined: gone), for what an eviction's answer must not take from the cache alone. */
  livePod(namespace: string, name: string): Promise<LivePod | undefined>;
  /** A Kubernetes Event on the workload, deduplicated and rate-limited (events.ts). */
  recordEvent: EventRecorder['record'];
  /** Resolves when every write started so far has finished. */
  settle(): Promise<void>;
}

/** What a live read of a pod tells the eviction gate (docs/design.md#clocks-and-the-cache). */
interface LivePod { uid: string; resourceVersion: string; terminating: boolean; ready: boolean }

/** A live read of a pod answers within this: the webhook answers within 10 s, its approval's writes within 8 s. */
const LIVE_POD_TIMEOUT_MS = 2_000;

/** A workload's status changes often while it scales: a few re-reads win the race. */
const FREEZE_ATTEMPTS = 5;
/**
 * The freeze queue's backoff per workload, after lost races or a refusal alike: short at first,
 * since races end once the workload stops changing; up to WRITE_BACKOFF_MS.max for a write the
 * API server keeps refusing.
 */
const FREEZE_RETRY_MS = { first: 100, max: WRITE_BACKOFF_MS.max };
/** Freezes asked for and not written are looked at again this often, should a retry have been lost. */
const FREEZE_RESYNC_MS = 5 * 60_000;

/** The workload is gone: nothing to freeze. */
class WorkloadGone extends Error {}

interface Writer {
  /** Freezes `zones` unless a list is frozen already; resolves to the list that is frozen now. */
  write(w: SlimWorkload, zones: string[]): Promise<string[]>;
  assign(req: AssignRequest): Promise<number>;
  recordApprovals: Actuator['recordApprovals'];
  livePod: Actuator['livePod'];
}

function actuator(writer: Writer, events: EventRecorder, log: Logger, metrics: Metrics, clock: Timers): Actuator {
  // Kept until the watch shows the annotation; the TTL bounds a write the watch never confirms.
  const pending = new LRUCache<string, PendingList>({ max: 10_000, ttl: 5 * 60_000 });
  // The freeze asked for, by workload, until written (or the workload is gone): what the queue's worker writes.
  const wanted = new Map<string, { w: SlimWorkload; zones: string[]; adopted?: { agree: number; seats: number } }>();
  const entry = (w: SlimWorkload, list: string[]): PendingList => ({ namespace: w.namespace, kind: w.kind, name: w.name, zones: list });

  async function freeze(key: string): Promise<WorkResult> {
    const want = wanted.get(key);
    if (!want) return;
    const { w, zones, adopted } = want;
    pending.set(key, entry(w, zones));
    let frozen: string[];
    try {
      frozen = await writer.write(w, zones);
    } catch (err) {
      metrics.actuatorWrites.inc({ action: 'freeze-zones', result: 'error' });
      if (err instanceof WorkloadGone) {
        wanted.delete(key);
        pending.delete(key);
        return;
      }
      // Lost races (the workload's status moving as it scales) and refusals are tried again by
      // the queue after its backoff step, with no further placement needed; while a refused one
      // waits, the derived list is read, and a placement only brings its list up to date.
      if (err instanceof StillConflicting) {
        log.info({ workload: key, err: (err as Error).message }, 'zone list freeze lost its races; trying again');
      } else {
        pending.delete(key);
        log.warn({ workload: key, err: (err as Error).message, retryInSeconds: queue.retryDelay(key) / 1000 }, 'could not freeze zone list; will retry');
      }
      return 'retry';
    }
    wanted.delete(key);
    metrics.actuatorWrites.inc({ action: 'freeze-zones', result: 'ok' });
    // Another replica may have frozen first: its list is the one, until the watch shows it.
    pending.set(key, entry(w, frozen));
    const ours = frozen.join(',') === zones.join(',');
    log.info({ workload: key, zones: frozen.join(','), ours }, 'froze zone list onto workload');
    if (ours && adopted) {
      events.record(w, 'Normal', 'ZoneListAdopted', `zone list ${zones.join(',')} written to ${ANNOTATION.zones}, ordered after the pods and volumes already placed: ${adopted.agree} of ${adopted.seats} seats are in their zone`);
    } else if (ours) {
      events.record(w, 'Normal', 'ZoneListFrozen', `zone list ${zones.join(',')} written to ${ANNOTATION.zones}: seat i now stays in the zone the list gives it, whatever zones are added later`);
    }
  }
  // Writes to distinct workloads go together, as placements ask for them; in every replica (placements ask in each).
  const queue = reconciler({
    keys: () => wanted.keys(), reconcile: freeze, resyncMs: FREEZE_RESYNC_MS, ready: () => true, workers: 16, clock,
    retryBaseMs: FREEZE_RETRY_MS.first, retryMaxMs: FREEZE_RETRY_MS.max, onError: (key, err) => log.warn({ workload: key, err: err.message }, 'zone list freeze failed'),
  });
  queue.start();

  const freezeZones: Actuator['freezeZones'] = (w, zones, adopted) => {
    const key = workloadKey(w);
    if (pending.has(key) || w.annotations[ANNOTATION.zones]) return;
    // A refused write is not tried again at every placement (its queue retries it after a backoff
    // step, the list staying derived meanwhile): the placement only brings what it will write up to date.
    if (wanted.has(key)) {
      wanted.set(key, { w, zones, adopted });
      return;
    }
    wanted.set(key, { w, zones, adopted });
    // Read as pending at once: the placements that follow read the list being frozen.
    pending.set(key, entry(w, zones));
    queue.add(key);
  };
  return {
    freezeZones,
    pendingFreezes: { get: (key) => pending.get(key), values: () => pending.values() },
    assignInstanceId: (req) => writer.assign(req),
    recordApprovals: (w, decide) => writer.recordApprovals(w, decide),
    livePod: (namespace, name) => writer.livePod(namespace, name),
    recordEvent: (w, type, reason, message) => events.record(w, type, reason, message),
    async settle() {
      await Promise.all([queue.idle(), events.settle()]);
    },
  };
}

/** An approval lost to another writer this many times in a row is refused (the client retries, as after a PDB's 429). */
const APPROVAL_ATTEMPTS = 3;
/** All of an approval's reads and writes within this, under the webhook's 10 s: a late one would be kube-apiserver's 500, not a 429. */
const APPROVAL_DEADLINE_MS = 8_000;

export function kubeActuator(api: ApiClient, log: Logger, metrics: Metrics, assignDeadlineMs = 2000, clock: Timers = systemClock): Actuator {
  const ids = instanceIdWriter(api, log, metrics, assignDeadlineMs, clock);
  return actuator({
    assign: ids.assign,
    // Conditional on the workload's resourceVersion: two approvals in two zones at the same instant
    // cannot both be written, the second reads the first's and is judged again.
    async recordApprovals(w, decide) {
      const path = workloadPath(w);
      let writes = false;
      const count = (result: string) => metrics.actuatorWrites.inc({ action: 'disruption-approval', result });
      const deadline = clock.now() + APPROVAL_DEADLINE_MS;
      try {
        const done = await retryOnConflict(api, path, {
          describe: path, timeoutMs: () => Math.max(250, deadline - clock.now()), fail: (m) => new Error(m), onConflict: () => count('conflict'),
          giveUp: (attempt) => (attempt < APPROVAL_ATTEMPTS && clock.now() < deadline ? undefined
            : new StillConflicting(`${path}: approvals still conflicting after ${attempt} attempts`)),
        }, async (obj) => {
          const step = await decide(obj.metadata?.annotations?.[ANNOTATION.disruptionApprovals]);
          writes = !('done' in step);
          return step;
        });
        if (writes) count('ok');
        return done;
      } catch (err) {
        if (!(err instanceof StillConflicting)) count('error');
        throw err;
      }
    },
    async livePod(namespace, name) {
      const res = await api.request('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`, { timeoutMs: LIVE_POD_TIMEOUT_MS });
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw new Error(`GET pod ${namespace}/${name}: ${res.status} ${statusMessage(res.body)}`);
      const pod = JSON.parse(res.body);
      const conditions: { type?: string; status?: string }[] = Array.isArray(pod.status?.conditions) ? pod.status.conditions : [];
      return {
        uid: String(pod.metadata?.uid ?? ''), resourceVersion: String(pod.metadata?.resourceVersion ?? ''),
        terminating: !!pod.metadata?.deletionTimestamp, ready: conditions.some((c) => c?.type === 'Ready' && c?.status === 'True'),
      };
    },
    // Conditional on the workload's resourceVersion, so two replicas can never freeze two
    // different lists: the second one's patch conflicts, it reads again and finds the first's.
    async write(w, zones) {
      const path = workloadPath(w);
      return retryOnConflict<string[]>(api, path, {
        describe: path, timeoutMs: () => 10_000, fail: (m, status) => (status === 404 ? new WorkloadGone(m) : new Error(m)),
        onConflict: () => metrics.actuatorWrites.inc({ action: 'freeze-zones', result: 'conflict' }),
        giveUp: (attempt) => (attempt < FREEZE_ATTEMPTS ? undefined : new StillConflicting(`${path}: still conflicting after ${FREEZE_ATTEMPTS} attempts`)),
      }, (obj) => {
        const existing = parseZoneList(obj.metadata?.annotations?.[ANNOTATION.zones] ?? '');
        return existing.length > 0 ? { done: existing } : { annotations: { [ANNOTATION.zones]: zones.join(','), [ANNOTATION.zonesFrozenAt]: new Date(clock.now()).toISOString() }, result: zones };
      });
    },
  }, eventRecorder(api, log, metrics, { clock }), log, metrics, clock);
}

/** For file sources: there is no API server, so the annotation lands in the in-memory store. */
export function memoryActuator(store: ClusterStore, log: Logger, metrics: Metrics, clock: Timers = systemClock): Actuator {
  // A merge of one key into the stored object, as a merge patch would: a CloneSet holds both
  // its zone list and its instance IDs, and the caller's copy may predate the other write.
  const annotate = (w: SlimWorkload, key: string, value: string | null) => {
    const current = store.workload(w.kind, w.namespace, w.name) ?? w;
    const { [key]: _, ...others } = current.annotations;
    store.upsert(WORKLOAD_KINDS[w.kind].plural, { ...current, annotations: value === null ? others : { ...others, [key]: value } });
  };
  return actuator({
    async livePod(namespace, name) {
      const pod = store.pod(namespace, name);
      return pod && { uid: pod.uid, resourceVersion: '', terminating: pod.terminating, ready: pod.ready };
    },
    // Conditional as the API server's write is: a record changed while `decide` ran is read and decided again.
    async recordApprovals(w, decide) {
      const read = () => store.workload(w.kind, w.namespace, w.name)?.annotations[ANNOTATION.disruptionApprovals];
      for (;;) {
        const recorded = read();
        const step = await decide(recorded);
        if (read() !== recorded) continue;
        if ('done' in step) return step.done;
        for (const [k, v] of Object.entries(step.annotations)) annotate(w, k, v);
        return step.result;
      }
    },
    async write(w, zones) {
      annotate(w, ANNOTATION.zones, zones.join(','));
      annotate(w, ANNOTATION.zonesFrozenAt, new Date(clock.now()).toISOString());
      return zones;
    },
    async assign(req) {
      const owner = store.workload(req.owner.kind, req.owner.namespace, req.owner.name);
      if (!owner) throw new AssignmentError(`${req.owner.kind} ${req.owner.namespace}/${req.owner.name} is not in the snapshot`);
      const choice = chooseInstanceId(parseAssignment(owner.annotations[ANNOTATION.instanceAssignment]), req.pod, req.replicas, req.live, req.choice);
      if (choice.kind === 'full') throw new AssignmentError(choice.reason);
      if (choice.kind === 'new') annotate(owner, ANNOTATION.instanceAssignment, serializeAssignment(choice.assignment));
      const pod = store.pod(req.owner.namespace, req.pod);
      if (pod) store.upsert('pods', { ...pod, instanceId: choice.id });
      return choice.id;
    },
  }, logRecorder(log), log, metrics, clock);
}
