import { z } from 'zod';
import { BadRequest, badRequestOf } from '../common/errors.js';
import { ADMISSION_API_VERSION, admissionReview } from '../http/admissionReview.js';
import type { JsonPatchOp } from '../placement/subsetPatch.js';

// admission.k8s.io/v1 AdmissionReview on the wire: what kube-apiserver sends a mutating
// webhook for a pod CREATE, and the answer (allowed, with a JSONPatch, or refused with a message).

const review = admissionReview({
  object: z.looseObject({ metadata: z.looseObject({}).optional(), spec: z.looseObject({}).optional() }),
});

export interface PodCreate {
  /** The review's UID: the answer carries it back, and it names a pod that has no UID yet. */
  uid: string;
  namespace: string;
  /** The pod as it will be stored, unless a later webhook or a quota says otherwise. */
  object: Record<string, any>;
  dryRun: boolean;
}

/** A review of a pod CREATE; anything else (another kind, another operation) is a bad request naming it. */
export function parsePodCreate(body: unknown): PodCreate {
  const r = review.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  const req = r.data.request;
  if (req.kind.group !== '' || req.kind.kind !== 'Pod') throw new BadRequest('request.kind', `this webhook reviews pods, not ${req.kind.group || 'core'}/${req.kind.kind}`);
  if (req.operation !== 'CREATE') throw new BadRequest('request.operation', `this webhook reviews CREATE, not ${req.operation}`);
  const namespace = req.namespace || (typeof req.object.metadata?.namespace === 'string' ? req.object.metadata.namespace : '');
  if (!namespace) throw new BadRequest('request.namespace', 'a pod CREATE names its namespace');
  return { uid: req.uid, namespace, object: req.object, dryRun: req.dryRun === true };
}

/** Allowed, with `patch` applied to the pod when it has operations. */
export function allowed(uid: string, patch: readonly JsonPatchOp[], warnings: readonly string[] = []): object {
  return {
    apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview',
    response: {
      uid, allowed: true,
      ...(patch.length > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    },
  };
}

/** Refused: the API server fails the CREATE with `message` (the pod's controller retries). */
export function denied(uid: string, message: string): object {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid, allowed: false, status: { code: 422, message } } };
}
