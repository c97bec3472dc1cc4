import { LRUCache } from 'lru-cache';

/**
 * A seat a filter call has given a pod that the watch does not show bound yet
 * (design §8). Keyed by pod UID, so a retried filter replaces rather than adds.
 */
export interface Reservation {
  uid: string;
  pod: string;
  workload: string;
  zone: string | undefined;
  subset: string | undefined;
  at: number;
}

export interface ReservationView {
  forWorkload(workload: string): Reservation[];
}

export class Reservations implements ReservationView {
  private readonly cache: LRUCache<string, Reservation>;
  /** Pod UIDs by workload, kept by the cache's dispose: a decision reads its workload's, not all. */
  private readonly byWorkload = new Map<string, Set<string>>();

  constructor(ttlSeconds: number, clock: { now(): number } = Date, max = 100_000, maxBytes = 32 * 1024 * 1024) {
    this.cache = new LRUCache({
      max, maxSize: maxBytes, ttl: ttlSeconds * 1000, ttlResolution: 0, perf: clock,
      sizeCalculation: (r) => 96 + r.uid.length + r.pod.length + r.workload.length + (r.zone?.length ?? 0) + (r.subset?.length ?? 0),
      dispose: (r, uid) => {
        const uids = this.byWorkload.get(r.workload);
        uids?.delete(uid);
        if (uids?.size === 0) this.byWorkload.delete(r.workload);
      },
    });
  }

  reserve(r: Reservation): void {
    this.cache.set(r.uid, r);
    // After set: replacing a reservation disposes the old one, which may have named another workload.
    if (this.cache.has(r.uid)) (this.byWorkload.get(r.workload) ?? this.byWorkload.set(r.workload, new Set()).get(r.workload)!).add(r.uid);
  }

  /** The watch saw the pod bound or deleted: its seat is now counted from the cache. */
  release(uid: string): void {
    this.cache.delete(uid);
  }

  forWorkload(workload: string): Reservation[] {
    const out: Reservation[] = [];
    // get() drops an expired entry (and its index entry, through dispose).
    for (const uid of [...(this.byWorkload.get(workload) ?? [])]) {
      const r = this.cache.get(uid);
      if (r) out.push(r);
    }
    return out;
  }

  size(): number {
    this.cache.purgeStale();
    return this.cache.size;
  }

  all(): Reservation[] {
    return [...this.cache.values()];
  }
}
