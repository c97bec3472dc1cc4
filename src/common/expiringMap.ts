import { systemClock, type Clock } from './clock.js';

export interface ExpiringMapOptions<K, V> {
  ttlMs: number;
  /** At most this many entries: the oldest go first. */
  max: number;
  /** At most this many bytes by `sizeOf`; an entry larger alone is not kept. */
  maxBytes?: number;
  sizeOf?: (value: V, key: K) => number;
  clock?: Clock;
  /** Called for every entry that leaves: deleted, replaced, expired or evicted. */
  onDrop?: (key: K, value: V) => void;
}

interface Entry<V> { value: V; expires: number; bytes: number }

/**
 * Entries that expire `ttlMs` after they were set, bounded in count and bytes. A Map in
 * insertion order is oldest first (one TTL for all; setting a key again moves it to the end),
 * so expiry and eviction take from its front, and memory follows what is held. Not
 * lru-cache for state that empties often: it refills its preallocated arrays whenever its
 * last entry goes, and a reservation's last entry goes with nearly every pod bound.
 */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private bytes = 0;
  private readonly clock: Clock;

  constructor(private readonly o: ExpiringMapOptions<K, V>) {
    this.clock = o.clock ?? systemClock;
  }

  /** Undefined once expired; a clock set back can leave an expired entry behind a live one, so each is checked. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires > this.clock.now()) return entry.value;
    this.delete(key);
    return undefined;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const now = this.clock.now();
    this.dropExpired(now);
    const bytes = this.o.sizeOf?.(value, key) ?? 0;
    if (this.o.maxBytes !== undefined && bytes > this.o.maxBytes) return;
    this.entries.set(key, { value, expires: now + this.o.ttlMs, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.o.max || (this.o.maxBytes !== undefined && this.bytes > this.o.maxBytes)) {
      this.delete(this.entries.keys().next().value!);
    }
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    this.o.onDrop?.(key, entry.value);
    return true;
  }

  /** Entries held, after dropping the expired ones at the front. */
  get size(): number {
    this.dropExpired(this.clock.now());
    return this.entries.size;
  }

  private dropExpired(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expires > now) return;
      this.delete(key);
    }
  }
}
