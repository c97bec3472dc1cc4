import { LRUCache } from 'lru-cache';
import { keyedBackoff, systemClock, type Timers } from '../common/clock.js';
import { ZonekeeperError } from '../common/errors.js';
import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { retryOnConflict, WRITE_BACKOFF_MS } from './conditionalPatch.js';
import { objectPath, POD_KIND as POD, WORKLOAD_KINDS } from '../cluster/kinds.js';
import { ANNOTATION } from '../cluster/annotations.js';
import { type WorkloadKind } from '../cluster/kinds.js';
import type { Metrics } from '../metrics/metrics.js';
import {
  annotationBytes, ANNOTATIONS_LIMIT, chooseInstanceId, parseAssignment, serializeAssignment, type ChoiceOptions,
} from '../placement/instanceAssignment.js';

export interface AssignRequest {
  /** The workload that stores the map: the Deployment, CloneSet or standalone ReplicaSet. */
  owner: { kind: WorkloadKind; namespace: string; name: string };
  pod: string;
  replicas: number;
  /** Whether a pod named in the map still exists (not deleted, not terminating). */
  live: (pod: string) => boolean;
  /** How the choice is made besides the map (chooseInstanceId). */
  choice?: ChoiceOptions;
  /** False: the caller writes zonekeeper.io/instance-id onto the pod itself (the zone gate, in its one patch). */
  annotatePod?: boolean;
}

export class AssignmentError extends ZonekeeperError {}

/** The API server refused or did not answer a read or write (not a choice that failed). */
class WriteFailed extends AssignmentError {}

/**
 * Writes instance IDs with an optimistic-concurrency check: the patch carries the
 * resourceVersion it was computed from, a 409 means someone else wrote first, so re-read and
 * retry until the deadline. Claims for one owner take turns in this process (a lock, not a
 * queue: each is awaited by the decision that needs it), so our own writes do not conflict with
 * each other. The background hand-overs come here from the pod annotations' paced queue.
 */
export function instanceIdWriter(api: ApiClient, log: Logger, metrics: Metrics, deadlineMs: number, clock: Timers = systemClock) {
  /** The claim last begun per owner: the next one waits for it. */
  const turns = new Map<string, Promise<unknown>>();
  const failing = keyedBackoff(WRITE_BACKOFF_MS.first, WRITE_BACKOFF_MS.max, clock);
  const lastFailure = new LRUCache<string, string>({ max: 10_000 });

  async function assignOnce(req: AssignRequest): Promise<number> {
    const { owner } = req;
    const path = objectPath(WORKLOAD_KINDS[owner.kind], owner.namespace, owner.name);
    const deadline = clock.now() + deadlineMs;
    const named = `${owner.kind} ${owner.namespace}/${owner.name}`;
    let pruned: string[] = [];
    const out = await retryOnConflict<{ id: number; written: boolean }>(api, path, {
      describe: named,
      timeoutMs: () => Math.max(1, Math.ceil(deadline - clock.now())),
      fail: (m) => new WriteFailed(m),
      onConflict: () => metrics.actuatorWrites.inc({ action: 'instance-id', result: 'conflict' }),
      // Read again at once, no sleep: the filter's verdict waits on this claim, and a 409 means another write landed (progress, no livelock).
      giveUp: (attempt) => (clock.now() >= deadline ? new AssignmentError(`${named}: still conflicting after ${attempt} attempts within ${deadlineMs} ms`) : undefined),
    }, async (obj) => {
      const annotations: Record<string, string> = obj.metadata?.annotations ?? {};
      let current;
      try {
        current = parseAssignment(annotations[ANNOTATION.instanceAssignment]);
      } catch (err) {
        throw new AssignmentError((err as Error).message, { cause: err });
      }
      let choice = chooseInstanceId(current, req.pod, req.replicas, () => true, req.choice);
      if (choice.kind === 'full') {
        // Free the IDs of gone pods. The cache may not show a pod created a moment ago,
        // so a pod it does not show is asked about before its ID is taken away.
        const gone = new Set<string>();
        for (const name of current.values()) if (!req.live(name) && await podGone(owner.namespace, name)) gone.add(name);
        choice = chooseInstanceId(current, req.pod, req.replicas, (name) => !gone.has(name), req.choice);
      }
      if (choice.kind === 'full') throw new AssignmentError(`${named}: ${choice.reason}`);
      if (choice.kind === 'held') return { done: { id: choice.id, written: false } };
      const value = serializeAssignment(choice.assignment);
      const size = annotationBytes({ ...annotations, [ANNOTATION.instanceAssignment]: value });
      if (size > ANNOTATIONS_LIMIT - 1024) {
        throw new AssignmentError(`${named}: the instance assignment would bring its annotations to ${size} bytes, over the 256 KiB limit`);
      }
      pruned = choice.pruned;
      return { annotations: { [ANNOTATION.instanceAssignment]: value }, result: { id: choice.id, written: true } };
    });
    if (out.written) {
      metrics.actuatorWrites.inc({ action: 'instance-id', result: 'ok' });
      if (pruned.length > 0) log.info({ owner: path, pruned }, 'instance IDs of gone pods freed');
    }
    return out.id;
  }

  async function podGone(namespace: string, pod: string): Promise<boolean> {
    const res = await api.request('GET', objectPath(POD, namespace, pod), { timeoutMs: 5000 });
    if (res.status === 404) return true;
    if (res.status !== 200) return false;
    return !!JSON.parse(res.body).metadata?.deletionTimestamp;
  }

  async function annotatePod(namespace: string, pod: string, id: number): Promise<void> {
    const path = objectPath(POD, namespace, pod);
    const body = JSON.stringify({ metadata: { annotations: { [ANNOTATION.instanceId]: String(id) } } });
    const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs: 5000 });
    if (res.status !== 200) throw new WriteFailed(`PATCH pod ${namespace}/${pod}: ${res.status} ${statusMessage(res.body)}`);
  }

  return {
    /** The pod's instance ID, assigned and written if it had none; the pod is annotated with it (unless annotatePod is false). */
    async assign(req: AssignRequest): Promise<number> {
      const key = `${req.owner.kind}/${req.owner.namespace}/${req.owner.name}`;
      // Writes that the API server refuses are not tried at every filter: the pod waits, answered at once.
      const wait = failing.waitLeft(key);
      if (wait > 0) throw new AssignmentError(`writes to ${req.owner.kind} ${req.owner.namespace}/${req.owner.name} are failing (${lastFailure.get(key) ?? 'unknown'}); next try in ${Math.ceil(wait / 1000)}s`);
      const previous = turns.get(key) ?? Promise.resolve();
      const mine = previous.catch(() => {}).then(async () => {
        const id = await assignOnce(req);
        if (req.annotatePod !== false) await annotatePod(req.owner.namespace, req.pod, id);
        return id;
      });
      turns.set(key, mine);
      try {
        const id = await mine;
        failing.succeeded(key);
        lastFailure.delete(key);
        return id;
      } catch (err) {
        metrics.actuatorWrites.inc({ action: 'instance-id', result: 'error' });
        if (err instanceof WriteFailed || !(err instanceof AssignmentError)) {
          const ms = failing.failed(key);
          lastFailure.set(key, (err as Error).message.slice(0, 200));
          log.warn({ owner: key, err: (err as Error).message, retryInSeconds: ms / 1000 }, 'instance ID not written; backing off');
        }
        throw err;
      } finally {
        if (turns.get(key) === mine) turns.delete(key);
      }
    },
  };
}
