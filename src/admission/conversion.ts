import { z } from 'zod';
import { badRequestOf } from '../common/errors.js';
import { parseJson } from '../http/requestBody.js';
import { verbRoute, type WebhookRoute } from '../http/verbRoute.js';
import type { Metrics } from '../metrics/metrics.js';
import { convertWorkloadSpread, workloadSpreadVersionOf } from '../cluster/workloadSpreadVersions.js';

// The CRD conversion webhook of zonekeeper's WorkloadSpread CRD (v1beta1 stored, v1alpha1 served,
// as OpenKruise's): a ConversionReview decoded, each object converted by one pure function, the
// review answered. Served on the admission listener, under its certificate (docs/design.md#workloadspread).

const CONVERSION_PATH = '/convert';

const conversionReview = z.object({
  apiVersion: z.enum(['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1']),
  kind: z.literal('ConversionReview'),
  request: z.object({
    uid: z.string().min(1),
    desiredAPIVersion: z.string(),
    objects: z.array(z.looseObject({ apiVersion: z.string() })),
  }),
});

type ConversionRequest = z.infer<typeof conversionReview>;

function parseConversionReview(body: unknown): ConversionRequest {
  const r = conversionReview.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  return r.data;
}

/** The answer: every object at the desired version, or a Failure naming why (the API server fails the request). */
function conversionAnswer(review: ConversionRequest): object {
  const { uid, desiredAPIVersion, objects } = review.request;
  const answer = (response: object) => ({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid, ...response } });
  const to = workloadSpreadVersionOf(desiredAPIVersion);
  if (!to) return answer({ convertedObjects: [], result: { status: 'Failure', message: `zonekeeper converts WorkloadSpreads to apps.kruise.io/v1alpha1 or v1beta1, not ${desiredAPIVersion}` } });
  try {
    return answer({ convertedObjects: objects.map((o) => convertWorkloadSpread(o, to)), result: { status: 'Success' } });
  } catch (err) {
    return answer({ convertedObjects: [], result: { status: 'Failure', message: (err as Error).message } });
  }
}

export function conversionRoute(metrics: Metrics, bodyLimitBytes: number): WebhookRoute {
  return {
    path: CONVERSION_PATH,
    handler: verbRoute(metrics, 'conversion', bodyLimitBytes, (text) => parseConversionReview(parseJson(text, 'ConversionReview')), (r, c) => c.json(conversionAnswer(r))),
  };
}
