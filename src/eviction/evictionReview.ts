import { z } from 'zod';
import { BadRequest, badRequestOf } from '../common/errors.js';
import { ADMISSION_API_VERSION, admissionReview } from '../http/admissionReview.js';

// admission.k8s.io/v1 AdmissionReview of a pods/eviction CREATE, as kube-apiserver sends it to a
// validating webhook (kubectl drain, Karpenter, the Cluster Autoscaler, the descheduler all evict
// so), and the answer: allowed, or refused with 429 as a PodDisruptionBudget refuses.

const review = admissionReview({
  resource: z.looseObject({ group: z.string().max(253), version: z.string().max(63), resource: z.string().max(63) }),
  subResource: z.string().max(63).optional(),
  name: z.string().max(253).optional(),
  userInfo: z.looseObject({ username: z.string().max(512).optional() }).optional(),
});

export interface EvictionReview {
  uid: string;
  namespace: string;
  /** The pod to be evicted. */
  name: string;
  dryRun: boolean;
  /** Who asks: kubectl's user, Karpenter's or the autoscaler's ServiceAccount. */
  by: string;
}

/** A review of a pods/eviction CREATE; anything else is a bad request naming what it is. */
export function parseEvictionReview(body: unknown): EvictionReview {
  const r = review.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  const req = r.data.request;
  if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.subResource !== 'eviction') {
    throw new BadRequest('request.resource', `this webhook reviews pods/eviction, not ${req.resource.group || 'core'}/${req.resource.resource}${req.subResource ? `/${req.subResource}` : ''}`);
  }
  if (req.operation !== 'CREATE') throw new BadRequest('request.operation', `this webhook reviews CREATE, not ${req.operation}`);
  if (!req.namespace || !req.name) throw new BadRequest('request.name', 'an eviction names its pod and namespace');
  return { uid: req.uid, namespace: req.namespace, name: req.name, dryRun: req.dryRun === true, by: req.userInfo?.username ?? '' };
}

/** Allowed: the eviction goes on to the user's PodDisruptionBudgets. */
export function evictionAllowed(uid: string): object {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid, allowed: true } };
}

/** Refused with 429 Too Many Requests: kubectl drain, Karpenter and the Cluster Autoscaler retry, as after a PDB's refusal. */
export function evictionRefused(uid: string, message: string): object {
  return {
    apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview',
    response: { uid, allowed: false, status: { status: 'Failure', code: 429, reason: 'TooManyRequests', message } },
  };
}
