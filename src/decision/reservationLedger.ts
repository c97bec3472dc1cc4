import { ExpiringMap } from '../common/expiringMap.js';
import { systemClock, type Clock } from '../common/clock.js';
import { ADMITTED_UID_PREFIX, type Reservation, type ReservationView } from '../placement/reservations.js';

const bytesOf = (r: Reservation) => 96 + r.uid.length + r.pod.length + r.workload.length + (r.zone?.length ?? 0) + (r.subset?.length ?? 0);

/** Reservations by pod UID, bounded in count and bytes, each expiring `ttlSeconds` after it was made. */
export class Reservations implements ReservationView {
  private readonly byUid: ExpiringMap<string, Reservation>;
  /** Pod UIDs by workload, kept as entries leave: a decision reads its workload's, not all. */
  private readonly byWorkload = new Map<string, Set<string>>();
  /** Reservations made at admission, before the pod had a UID: by `namespace/name`, until the watch shows it. */
  private readonly admitted = new Map<string, string>();

  constructor(ttlSeconds: number, clock: Clock = systemClock, max = 100_000, maxBytes = 32 * 1024 * 1024) {
    this.byUid = new ExpiringMap({
      ttlMs: ttlSeconds * 1000, max, maxBytes, sizeOf: bytesOf, clock,
      onDrop: (uid, r) => {
        if (this.admitted.get(r.pod) === uid) this.admitted.delete(r.pod);
        const uids = this.byWorkload.get(r.workload);
        uids?.delete(uid);
        if (uids?.size === 0) this.byWorkload.delete(r.workload);
      },
    });
  }

  reserve(r: Reservation): void {
    this.byUid.set(r.uid, r);
    // After set: an entry over the byte bound is not kept.
    if (!this.byUid.has(r.uid)) return;
    (this.byWorkload.get(r.workload) ?? this.byWorkload.set(r.workload, new Set()).get(r.workload)!).add(r.uid);
    if (r.uid.startsWith(ADMITTED_UID_PREFIX)) this.admitted.set(r.pod, r.uid);
  }

  /** The watch shows a pod admitted with a reservation: its spec (the zone or subset written into it) counts it from now on. */
  releaseAdmitted(namespace: string, name: string): void {
    if (this.admitted.size === 0) return;
    const uid = this.admitted.get(`${namespace}/${name}`);
    if (uid !== undefined) this.byUid.delete(uid);
  }

  /** The watch saw the pod bound or deleted: its seat is now counted from the cache. */
  release(uid: string): void {
    this.byUid.delete(uid);
  }

  forWorkload(workload: string): Reservation[] {
    const out: Reservation[] = [];
    // get() drops an expired entry (and its index entry, through onDrop): iterate a copy.
    for (const uid of [...(this.byWorkload.get(workload) ?? [])]) {
      const r = this.byUid.get(uid);
      if (r) out.push(r);
    }
    return out;
  }

  size(): number {
    return this.byUid.size;
  }
}
