import { statusMessage, type ApiClient } from '../cluster/apiClient.js';

// Written state is conditional: a merge patch of annotations that carries the resourceVersion
// it was computed from; a 409 means another writer was first, so read again and recompute.

/** After a refused write, a workload's next attempt waits: doubling from 1 s up to 5 min. */
export const WRITE_BACKOFF_MS = { first: 1_000, max: 300_000 };

/** Another writer kept winning (say, a workload's status while it scales): tried again after a backoff step. */
export class StillConflicting extends Error {}

/** What one attempt decides from the object as read: nothing to write, or annotations to patch (null removes one). */
export type PatchStep<T> = { done: T } | { annotations: Record<string, string | null>; result: T };

export interface RetryOptions {
  /** Names the object in errors: its path, or "Kind ns/name". */
  describe: string;
  /** The timeout of each request. */
  timeoutMs(): number;
  /** After `attempt` conflicts: an Error ends the tries; undefined reads again at once (nothing sleeps here). */
  giveUp(attempt: number): Error | undefined;
  onConflict?(): void;
  /** The error a failed GET or PATCH (its status) becomes. */
  fail(message: string, status: number): Error;
}

/** GET, decide, PATCH with the resourceVersion read; again at once on 409 until `giveUp` says. */
export async function retryOnConflict<T>(api: ApiClient, path: string, o: RetryOptions, step: (obj: any) => Promise<PatchStep<T>> | PatchStep<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const got = await api.request('GET', path, { timeoutMs: o.timeoutMs() });
    if (got.status !== 200) throw o.fail(`GET ${o.describe}: ${got.status} ${statusMessage(got.body)}`, got.status);
    const obj = JSON.parse(got.body);
    const s = await step(obj);
    if ('done' in s) return s.done;
    const body = JSON.stringify({ metadata: { resourceVersion: obj.metadata?.resourceVersion, annotations: s.annotations } });
    const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs: o.timeoutMs() });
    if (res.status === 200) return s.result;
    if (res.status !== 409) throw o.fail(`PATCH ${o.describe}: ${res.status} ${statusMessage(res.body)}`, res.status);
    o.onConflict?.();
    const stop = o.giveUp(attempt);
    if (stop) throw stop;
  }
}
