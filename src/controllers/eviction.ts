import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import type { SlimPod } from '../cluster/objects.js';
import type { Timers } from '../common/clock.js';
import { workQueue, type WorkQueue, type WorkResult } from '../common/workQueue.js';

// Every pod zonekeeper moves goes through the Eviction API, so PodDisruptionBudgets decide
// (a 429 is their refusal), within a budget per minute, and first through the zone disruption
// budget in process (docs/design.md#zone-at-a-time): repair and rescheduling are disruptions too.

/** The decision service's eviction gate, as zonekeeper's own evictions ask it (`by`: which of them). */
/** `resourceVersion`: allowed only as the pod is now (let go as down already), so the eviction is conditional on it. */
export type EvictionGate = (pod: { namespace: string; name: string }, by: string) => Promise<{ allowed: boolean; why: string; resourceVersion?: string }>;

/**
 * POST pods/eviction once `gate` allows it (a refusal is a 429, as the webhook's); the status and the
 * message (status 0: not sent). With a UID, only that pod goes (409 otherwise): a successor of the
 * same name is never evicted in its place. A pod the gate let go as down already goes only as it
 * was judged (its resourceVersion, as eviction.go makes its own such deletes): turned Ready since, 409.
 */
export async function evictPod(api: ApiClient, pod: Pick<SlimPod, 'namespace' | 'name'> & { uid?: string }, log: Logger,
  gate?: { judge: EvictionGate; by: string }): Promise<{ status: number; message: string }> {
  const judged = gate && await gate.judge(pod, gate.by);
  if (judged && !judged.allowed) return { status: 429, message: judged.why };
  const path = `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/eviction`;
  const preconditions = { ...(pod.uid ? { uid: pod.uid } : {}), ...(judged?.resourceVersion ? { resourceVersion: judged.resourceVersion } : {}) };
  const body = JSON.stringify({
    apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.name, namespace: pod.namespace },
    ...(Object.keys(preconditions).length > 0 ? { deleteOptions: { preconditions } } : {}),
  });
  try {
    const res = await api.request('POST', path, { body, contentType: 'application/json', timeoutMs: 10_000 });
    return { status: res.status, message: res.status < 300 ? '' : statusMessage(res.body) };
  } catch (err) {
    log.warn({ pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message }, 'eviction not sent');
    return { status: 0, message: (err as Error).message };
  }
}

/**
 * The queue a controller's evictions run on, paced at `perMinute` (a burst of as many saved): a key
 * takes its turn when it is queued, a refusal's retry waits the longer of its backoff and its turn.
 */
export function evictionQueue(evict: (key: string) => Promise<WorkResult>, perMinute: number,
  opts: { clock?: Timers; retryBaseMs?: number; retryMaxMs?: number; onError?: (key: string, err: Error) => void }): WorkQueue {
  return workQueue(evict, { ...opts, pace: { perSecond: perMinute / 60, burst: perMinute } });
}
