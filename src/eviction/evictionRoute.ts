import type { Logger } from 'pino';
import type { DecisionService } from '../decision/service.js';
import type { CallerCheck } from '../http/callers.js';
import { parseJson } from '../http/requestBody.js';
import { verbRoute, type WebhookRoute } from '../http/verbRoute.js';
import type { Metrics } from '../metrics/metrics.js';
import { evictionAllowed, evictionRefused, parseEvictionReview } from './evictionReview.js';

// The eviction gate (docs/design.md#zone-at-a-time): a transport like the others, decode → one
// call to the decision service → encode. Served on the admission listener (the same certificate).

const EVICTION_PATH = '/admission/evictions';

/** Why a review from a caller not known to be kube-apiserver is refused: judging it would record an approval. */
const UNAUTHENTICATED_EVICTION = 'zonekeeper: the caller is not known to be kube-apiserver (no client certificate verified by admission.tls.clientCAFile, and admission.trustNetwork is false): no eviction is judged or recorded for it';

export interface EvictionDeps {
  service: Pick<DecisionService, 'eviction'>;
  /** Whether this replica holds the Lease (or runs alone). */
  leading(): boolean;
  /** Whether the review's caller is known to be kube-apiserver: only then is it judged (an allowed one writes an approval). */
  caller: CallerCheck;
  log: Logger;
}

export function evictionRoute(deps: EvictionDeps, metrics: Metrics, bodyLimitBytes: number): WebhookRoute {
  return {
    path: EVICTION_PATH,
    handler: verbRoute(metrics, 'eviction', bodyLimitBytes, (text) => parseEvictionReview(parseJson(text, 'AdmissionReview')), async (r, c) => {
      // Refused before anything is read or written: the review's user and pod are the caller's words, never logged as who asked.
      if (!deps.caller(c)) {
        metrics.badRequests.inc({ verb: 'eviction', status: '401' });
        return c.json(evictionRefused(r.uid, UNAUTHENTICATED_EVICTION));
      }
      const answer = await deps.service.eviction({ namespace: r.namespace, name: r.name, dryRun: r.dryRun, leading: deps.leading(), by: r.by, asker: 'api' });
      if (answer.outcome !== 'not-covered') {
        deps.log.info({ pod: `${r.namespace}/${r.name}`, by: r.by, allowed: answer.allowed, outcome: answer.outcome, workload: answer.workload, zone: answer.zone, why: answer.why },
          'eviction judged by the zone disruption budget');
      }
      return c.json(answer.allowed ? evictionAllowed(r.uid) : evictionRefused(r.uid, answer.why));
    }),
  };
}
