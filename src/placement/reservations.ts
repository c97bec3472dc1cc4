/**
 * A seat a filter call has given a pod that the watch does not show bound yet
 * (docs/design.md#reservations). Keyed by pod UID, so a retried filter replaces rather than adds.
 */
export interface Reservation {
  uid: string;
  pod: string;
  workload: string;
  zone: string | undefined;
  subset: string | undefined;
  at: number;
}

/** The reservations a decision reads; the decision core keeps them (decision/reservations.ts). */
export interface ReservationView {
  forWorkload(workload: string): readonly Reservation[];
}

/** What a pod being created is known by until it is stored: the AdmissionReview's UID, marked as such. */
export const ADMITTED_UID_PREFIX = 'admission/';
