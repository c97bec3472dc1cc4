import { z } from 'zod';

// admission.k8s.io/v1 AdmissionReview's envelope, as kube-apiserver sends it to a webhook: what
// admission (pod CREATE) and the eviction gate (pods/eviction) both read before their own fields.

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** A review whose request has the common fields (uid, kind, operation, namespace, dryRun) and `fields`. */
export function admissionReview<T extends z.ZodRawShape>(fields: T) {
  return z.looseObject({
    apiVersion: z.literal(ADMISSION_API_VERSION),
    kind: z.literal('AdmissionReview'),
    request: z.looseObject({
      uid: z.string().min(1).max(128),
      kind: z.looseObject({ group: z.string().max(253), version: z.string().max(63), kind: z.string().max(63) }),
      operation: z.string().max(16),
      namespace: z.string().max(63).optional(),
      dryRun: z.boolean().optional(),
      ...fields,
    }),
  });
}
