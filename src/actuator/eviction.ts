import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import type { SlimPod } from '../cluster/objects.js';

// Every pod zonekeeper moves goes through the Eviction API, so PodDisruptionBudgets decide
// (a 429 is their refusal), within a budget per minute.

/** POST pods/eviction; the status and the API server's message (status 0: not sent). */
export async function evictPod(api: ApiClient, pod: Pick<SlimPod, 'namespace' | 'name'>, log: Logger): Promise<{ status: number; message: string }> {
  const path = `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/eviction`;
  const body = JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.name, namespace: pod.namespace } });
  try {
    const res = await api.request('POST', path, { body, contentType: 'application/json', timeoutMs: 10_000 });
    return { status: res.status, message: res.status < 300 ? '' : statusMessage(res.body) };
  } catch (err) {
    log.warn({ pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message }, 'eviction not sent');
    return { status: 0, message: (err as Error).message };
  }
}

/** A token bucket: `perMinute` at most, spread over the minute; `take` says whether one is left. */
export function perMinuteBudget(perMinute: number, now: () => number = Date.now): { take(): boolean } {
  let tokens = perMinute;
  let refilledAt = now();
  return {
    take() {
      const t = now();
      tokens = Math.min(perMinute, tokens + ((t - refilledAt) / 60_000) * perMinute);
      refilledAt = t;
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
  };
}
