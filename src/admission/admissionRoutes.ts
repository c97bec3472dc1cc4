import { Hono } from 'hono';
import type { Logger } from 'pino';
import { parseJson } from '../http/requestBody.js';
import { finish, verbRoute, type WebhookRoute } from '../http/verbRoute.js';
import type { Metrics } from '../metrics/metrics.js';
import { admitPod, type AdmissionDeps } from './admission.js';
import { parsePodCreate } from './podReview.js';

const ADMISSION_PATH = '/admission/pods';

/**
 * The admission listener (admission.listen, TLS): kube-apiserver's mutating webhook for pod
 * CREATE (docs/design.md#admission), and the routes of other webhooks served beside it (`more`:
 * the eviction gate). An error answers non-200, and the webhook's failurePolicy decides.
 */
export function admissionRoutes(deps: AdmissionDeps, metrics: Metrics, log: Logger, bodyLimitBytes: number, more: readonly WebhookRoute[] = []): Hono {
  const app = new Hono();
  app.post(ADMISSION_PATH, verbRoute(metrics, 'admission', bodyLimitBytes, (text) => parsePodCreate(parseJson(text, 'AdmissionReview')),
    async (create, c) => {
      const authenticated = deps.caller(c);
      if (!authenticated) metrics.badRequests.inc({ verb: 'admission', status: '401' });
      return c.json(await admitPod(create, deps, authenticated));
    }));
  for (const r of more) app.post(r.path, r.handler);
  const paths = [ADMISSION_PATH, ...more.map((r) => r.path)];
  return finish(app, paths, `this listener serves POST ${paths.join(', ')} only`, log, metrics);
}
