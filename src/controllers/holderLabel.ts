import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { objectPath, POD_KIND as POD } from '../cluster/kinds.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { Metrics } from '../metrics/metrics.js';
import { reconciler } from '../common/reconciler.js';

// The Lease holder's own pod carries zonekeeper.io/lease-holder: "true", so the admission
// webhook's Service selects it (docs/design.md#admission): decisions that read
// shared counters are made in the holder, and most pods take the fast path.

export const HOLDER_LABEL = 'zonekeeper.io/lease-holder';

/** This process's pod, from the downward API (POD_NAME, POD_NAMESPACE); undefined outside a pod. */
export function ownPod(env: NodeJS.ProcessEnv = process.env): { namespace: string; name: string } | undefined {
  return env.POD_NAME && env.POD_NAMESPACE ? { namespace: env.POD_NAMESPACE, name: env.POD_NAME } : undefined;
}

/** A resync rewrites the label now and then: someone may have removed it. */
const RESYNC_MS = 5 * 60_000;
const KEY = 'lease-holder';

/**
 * Labels the pod while it holds the Lease, unlabels it after (and at start: a restarted container
 * may keep the label). On a work queue of one key that runs whether or not this replica leads:
 * a refused write is retried with a backoff, since a holder without its label gets no reviews.
 */
export function holderLabel(api: ApiClient, pod: { namespace: string; name: string }, log: Logger, metrics: Metrics, clock: Timers = systemClock) {
  let holds = false;
  const where = `${pod.namespace}/${pod.name}`;
  async function write(): Promise<void> {
    const body = JSON.stringify({ metadata: { labels: { [HOLDER_LABEL]: holds ? 'true' : null } } });
    const res = await api.request('PATCH', objectPath(POD, pod.namespace, pod.name), { body, contentType: 'application/merge-patch+json', timeoutMs: 10_000 })
      .catch((err: Error) => ({ status: 0, body: err.message }));
    metrics.actuatorWrites.inc({ action: 'lease-holder-label', result: res.status === 200 ? 'ok' : 'error' });
    if (res.status !== 200) throw new Error(`PATCH pod ${where}: ${res.status} ${statusMessage(res.body)}`);
  }
  const labels = reconciler({
    keys: () => [KEY], reconcile: write, resyncMs: RESYNC_MS, ready: () => true, clock, retryBaseMs: 500, retryMaxMs: 30_000,
    onError: (_key, err) => log.warn({ pod: where, holds, err: err.message }, 'lease-holder label not written; will retry'),
  });
  labels.start();
  const want = (h: boolean) => {
    holds = h;
    labels.forget(KEY);
    labels.add(KEY);
  };
  return {
    /** Not the holder (yet): routed no admission traffic meant for the holder. */
    clear: () => want(false),
    start: () => want(true),
    /** Resolves once the label is off (the caller bounds the wait: the write may keep failing). */
    async stop(): Promise<void> {
      want(false);
      await labels.idle();
    },
    /** Resolves once the last write asked for is done. */
    idle: () => labels.idle(),
    /** At shutdown: no more writes. */
    close: () => labels.stop(),
  };
}
