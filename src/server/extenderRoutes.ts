import { Hono } from 'hono';
import type { Logger } from 'pino';
import { isDnsLabel } from '../cluster/names.js';
import { BadRequest } from '../common/errors.js';
import type { ExtenderService } from '../extender/extender.js';
import { parseArgs, type ExtenderArgs } from '../extender/wire/args.js';
import { parsePickRequest } from '../extender/wire/picker.js';
import { parsePreemptionArgs } from '../extender/wire/preemption.js';
import type { Metrics } from '../metrics/metrics.js';
import { requireAuthorization, type AdminAuthorizer } from './adminAuth.js';
import { failWith } from '../http/httpErrors.js';
import { parseJson } from '../http/requestBody.js';
import { finish, verbRoute, type Answer } from '../http/verbRoute.js';

type Verb = 'filter' | 'prioritize' | 'preempt' | 'downscale-pod-picker';

export interface BodyLimits { bodyLimitBytes: number; pickerBodyLimitBytes: number }

const JSON_TYPE = { 'content-type': 'application/json' };

/** The verbs' answers are ASCII (encoding.ts): as Latin-1 they are bytes by a plain copy, no UTF-8 pass. */
const asciiBytes = (text: string) => Buffer.from(text, 'latin1');

const ROUTES = 'the routes are POST /filter, POST /prioritize, POST /preempt and POST /v1/downscale-pod-picker/{namespace}';

const PICKER_PATH = '/v1/downscale-pod-picker/:namespace';

/** KEP-3189's downscale pod picker: which of the candidates to remove (docs/design.md#scale-down). */
function pickerRoute(ext: ExtenderService, metrics: Metrics, limit: number) {
  return verbRoute(metrics, 'downscale-pod-picker', limit, (t) => parsePickRequest(parseJson(t, 'pod-picker request')), (req, c) => {
    const namespace = c.req.param('namespace')!;
    if (!isDnsLabel(namespace)) throw new BadRequest('namespace', 'the path names no valid namespace (a DNS-1123 label of at most 63 characters)');
    const answer = ext.pickPodsToRemove(namespace, req.number_of_pods_requested, req.candidate_pods);
    if (!answer) return failWith(c, 503, 'not ready', 'cluster cache not synced yet; retry');
    return c.json(answer);
  });
}

/** The extender listener: the verbs at the URL root, as kube-scheduler's urlPrefix expects. */
export function extenderRoutes(ext: ExtenderService, metrics: Metrics, log: Logger, limits: BodyLimits): Hono {
  const app = new Hono();
  const verb = (name: Verb, answer: Answer<ExtenderArgs>) => verbRoute(metrics, name, limits.bodyLimitBytes,
    (text) => parseArgs(text, ext.maxCandidates(), name === 'prioritize' ? ext.answeredNames() : undefined), answer);
  app.post('/filter', verb('filter', async (args, c) => c.body(asciiBytes(await ext.filter(args)), 200, JSON_TYPE)));
  app.post('/prioritize', verb('prioritize', (args, c) => c.body(asciiBytes(ext.prioritize(args)), 200, JSON_TYPE)));
  app.post('/preempt', verbRoute(metrics, 'preempt', limits.bodyLimitBytes, (text) => parsePreemptionArgs(text, ext.maxCandidates()),
    (args, c) => c.body(asciiBytes(ext.preempt(args)), 200, JSON_TYPE)));
  app.post(PICKER_PATH, pickerRoute(ext, metrics, limits.pickerBodyLimitBytes));
  return finish(app, ['/filter', '/prioritize', '/preempt', PICKER_PATH], ROUTES, log, metrics);
}

/**
 * The picker listener (picker.listen): the KEP-3189 verb alone, for controllers in other pods.
 * With `auth`, the caller's bearer token must be one the API server accepts, and its user
 * allowed to `post` the path (a nonResourceURLs rule), as kube-apiserver authorizes a POST.
 */
export function pickerRoutes(ext: ExtenderService, metrics: Metrics, log: Logger, limitBytes: number, auth?: AdminAuthorizer): Hono {
  const app = new Hono();
  if (auth) app.use('/v1/downscale-pod-picker/*', requireAuthorization(auth, 'post'));
  app.post(PICKER_PATH, pickerRoute(ext, metrics, limitBytes));
  return finish(app, [PICKER_PATH], 'this listener serves POST /v1/downscale-pod-picker/{namespace} only', log, metrics);
}
