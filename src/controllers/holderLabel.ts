import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { objectPath, POD_KIND as POD } from '../cluster/kinds.js';
import type { Metrics } from '../metrics/metrics.js';

// The Lease holder's own pod carries zonekeeper.io/lease-holder: "true", so the admission
// webhook's Service selects it (docs/design.md#admission): decisions that read
// shared counters are made in the holder, and most pods take the fast path.

export const HOLDER_LABEL = 'zonekeeper.io/lease-holder';

/** This process's pod, from the downward API (POD_NAME, POD_NAMESPACE); undefined outside a pod. */
export function ownPod(env: NodeJS.ProcessEnv = process.env): { namespace: string; name: string } | undefined {
  return env.POD_NAME && env.POD_NAMESPACE ? { namespace: env.POD_NAMESPACE, name: env.POD_NAME } : undefined;
}

/** Labels the pod while it holds the Lease, unlabels it after (and at start: a restarted container may keep the label). */
export function holderLabel(api: ApiClient, pod: { namespace: string; name: string }, log: Logger, metrics: Metrics) {
  async function write(holds: boolean): Promise<void> {
    const body = JSON.stringify({ metadata: { labels: { [HOLDER_LABEL]: holds ? 'true' : null } } });
    try {
      const res = await api.request('PATCH', objectPath(POD, pod.namespace, pod.name), { body, contentType: 'application/merge-patch+json', timeoutMs: 10_000 });
      metrics.actuatorWrites.inc({ action: 'lease-holder-label', result: res.status === 200 ? 'ok' : 'error' });
      if (res.status !== 200) log.warn({ pod: `${pod.namespace}/${pod.name}`, status: res.status, err: statusMessage(res.body) }, 'lease-holder label not written');
    } catch (err) {
      metrics.actuatorWrites.inc({ action: 'lease-holder-label', result: 'error' });
      log.warn({ pod: `${pod.namespace}/${pod.name}`, err: (err as Error).message }, 'lease-holder label not written');
    }
  }
  // Writes in order: a stop right after a start leaves the label off.
  let last = Promise.resolve();
  const then = (holds: boolean) => (last = last.then(() => write(holds)));
  return {
    /** Not the holder (yet): routed no admission traffic meant for the holder. */
    clear: () => then(false),
    start(): void {
      void then(true);
    },
    stop: () => then(false),
  };
}
