import { systemClock, type Timers } from './clock.js';
import { tokenBucket } from './tokenBucket.js';

// The one work queue every background writer runs on, with client-go's workqueue semantics
// (util/workqueue): a key queued twice is queued once, one worker per key at a time (a key added
// while it is being worked on runs again after), delayed adds, and a shutdown that lets the work
// in hand finish; rate-limited as its rate-limited queue is: per-key exponential backoff for
// retries (a key backing off is not run sooner by another add) and a token bucket pacing the
// writes (a worker with no token hands its key back until one is due, never sleeping).
// Time comes from the injected clock.

/**
 * What a worker says of a key: done (nothing), again after a while, failed (retried with the
 * key's backoff), or paced (no write token was left: queued again when the next is due).
 */
export type WorkResult = void | { againAfterMs: number } | 'retry' | 'paced';

export interface WorkQueueOptions {
  /** Workers at once: distinct keys worked on together (writes waiting on the API server). */
  workers?: number;
  /** Per-key retry backoff after a 'retry' or a thrown error: doubles from base up to max. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  clock?: Timers;
  /** Writes a second and the burst saved: what `takeToken` hands out. */
  pace?: { perSecond: number; burst: number };
  /** A worker threw: said here, then retried. */
  onError?: (key: string, err: Error) => void;
}

export interface WorkQueue<K extends string = string> {
  /** Queues `key` unless it is queued already. */
  add(key: K): void;
  /** Queues `key` after `ms`; an earlier delayed add of the same key wins. */
  addAfter(key: K, ms: number): void;
  /** Forgets `key`'s failures (its next retry starts from the base delay) and any delayed add. */
  forget(key: K): void;
  /** How long a 'retry' of `key` now would wait: its backoff step. */
  retryDelay(key: K): number;
  /** Takes a write token if one is left now (always, without `pace`); a worker with none returns 'paced'. */
  takeToken(): boolean;
  /** Returns a token taken for a write that was not made. */
  giveBackToken(): void;
  /** Queued and in hand (not the delayed ones). */
  length(): number;
  /** Delayed adds waiting for their time. */
  delayed(): number;
  /** Resolves once nothing is queued or in hand (delayed adds aside). */
  idle(): Promise<void>;
  start(): void;
  /** Stops taking keys; resolves once the keys in hand are done. Delayed adds are dropped. */
  shutDown(): Promise<void>;
}

export function workQueue<K extends string>(work: (key: K) => Promise<WorkResult>, opts: WorkQueueOptions = {}): WorkQueue<K> {
  const clock = opts.clock ?? systemClock;
  const workers = Math.max(1, opts.workers ?? 1);
  const base = opts.retryBaseMs ?? 5, max = opts.retryMaxMs ?? 60_000;
  const queue = new Set<K>();
  const processing = new Set<K>();
  /** Added while in hand: queued again when its worker is done. */
  const dirty = new Set<K>();
  const waiting = new Map<K, { at: number; cancel: () => void }>();
  const failures = new Map<K, number>();
  /** Keys waiting out a retry backoff: an add does not run them sooner. */
  const backingOff = new Set<K>();
  const pace = opts.pace && tokenBucket(opts.pace.perSecond, Math.max(1, opts.pace.burst), clock.now);
  const inFlight = new Set<Promise<void>>();
  let idlers: (() => void)[] = [];
  let running = false;
  let shuttingDown = false;

  function add(key: K): void {
    if (shuttingDown || backingOff.has(key)) return;
    if (processing.has(key)) {
      dirty.add(key);
      return;
    }
    queue.add(key);
    pump();
  }

  function addAfter(key: K, ms: number): void {
    if (shuttingDown || backingOff.has(key)) return;
    if (ms <= 0) return add(key);
    const at = clock.now() + ms;
    const had = waiting.get(key);
    if (had && had.at <= at) return;
    had?.cancel();
    const cancel = clock.after(ms, () => {
      waiting.delete(key);
      add(key);
    });
    waiting.set(key, { at, cancel });
  }

  const retryDelay = (key: K) => Math.min(max, base * 2 ** Math.min(failures.get(key) ?? 0, 30));

  /** Queues `key` after its backoff step; until then no add runs it (another delayed add's time gives way too). */
  function retryLater(key: K): void {
    const ms = retryDelay(key);
    failures.set(key, (failures.get(key) ?? 0) + 1);
    waiting.get(key)?.cancel();
    waiting.delete(key);
    if (ms <= 0) return add(key);
    backingOff.add(key);
    const cancel = clock.after(ms, () => {
      waiting.delete(key);
      backingOff.delete(key);
      add(key);
    });
    waiting.set(key, { at: clock.now() + ms, cancel });
  }

  async function run(key: K): Promise<void> {
    let result: WorkResult;
    try {
      result = await work(key);
    } catch (err) {
      opts.onError?.(key, err as Error);
      result = 'retry';
    }
    processing.delete(key);
    if (result === 'retry') retryLater(key);
    else if (result === 'paced') addAfter(key, pace ? pace.due() : 0);
    else {
      failures.delete(key);
      if (result) addAfter(key, result.againAfterMs);
    }
    if (dirty.delete(key)) add(key);
  }

  function pump(): void {
    if (!running || shuttingDown) return;
    for (const key of queue) {
      if (processing.size >= workers) return;
      queue.delete(key);
      processing.add(key);
      const p: Promise<void> = run(key).finally(() => {
        inFlight.delete(p);
        pump();
        if (queue.size + processing.size === 0 && idlers.length > 0) {
          const wake = idlers;
          idlers = [];
          for (const w of wake) w();
        }
      });
      inFlight.add(p);
    }
  }

  return {
    add, addAfter,
    forget(key) {
      failures.delete(key);
      backingOff.delete(key);
      waiting.get(key)?.cancel();
      waiting.delete(key);
    },
    retryDelay,
    takeToken: () => !pace || pace.take(),
    giveBackToken: () => pace?.giveBack(),
    length: () => queue.size + processing.size,
    delayed: () => waiting.size,
    idle: () => (queue.size + processing.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => { idlers.push(resolve); })),
    start() {
      running = true;
      shuttingDown = false;
      pump();
    },
    async shutDown() {
      shuttingDown = true;
      for (const w of waiting.values()) w.cancel();
      waiting.clear();
      backingOff.clear();
      queue.clear();
      dirty.clear();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      running = false;
      for (const w of idlers.splice(0)) w();
    },
  };
}
