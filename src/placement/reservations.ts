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

  constructor(ttlSeconds: number, clock: { now(): number } = Date, max = 100_000, maxBytes = 32 * 1024 * 1024) {
    this.cache = new LRUCache({
      max, maxSize: maxBytes, ttl: ttlSeconds * 1000, ttlResolution: 0, perf: clock,
      sizeCalculation: (r) => 96 + r.uid.length + r.pod.length + r.workload.length + (r.zone?.length ?? 0) + (r.subset?.length ?? 0),
    });
  }

  reserve(r: Reservation): void {
    this.cache.set(r.uid, r);
  }

  /** The watch saw the pod bound or deleted: its seat is now counted from the cache. */
  release(uid: string): void {
    this.cache.delete(uid);
  }

  forWorkload(workload: string): Reservation[] {
    const out: Reservation[] = [];
    for (const r of this.cache.values()) if (r.workload === workload) out.push(r);
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
