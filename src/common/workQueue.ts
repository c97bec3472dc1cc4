import { systemClock, type Timers } from './clock.js';
import { tokenBucket } from './tokenBucket.js';

// The one work queue every background writer runs on, with client-go's workqueue semantics
// (util/workqueue): a key queued twice is queued once, one worker per key at a time (a key added
// while it is being worked on runs again after), delayed adds, and a shutdown that lets the work
// in hand finish; rate-limited as its rate-limited queue is with DefaultControllerRateLimiter: a
// retry waits the longer of the key's exponential backoff and its turn from the token bucket,
// and on a paced queue every add takes its turn from the bucket when the key is queued, so a
// worker never takes a token itself. Time comes from the injected clock.

/** What a worker says of a key: done (nothing), again after a while, or failed (retried with the key's backoff). */
export type WorkResult = void | { againAfterMs: number } | 'retry';

export interface WorkQueueOptions {
  /** Workers at once: distinct keys worked on together (writes waiting on the API server). */
  workers?: number;
  /** Per-key retry backoff after a 'retry' or a thrown error: doubles from base up to max. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  clock?: Timers;
  /**
   * A paced queue (each key run is a write): a token bucket of `perSecond`, `burst` saved. A key
   * takes its turn when it is queued and is handed to a worker once the turn is due.
   */
  pace?: { perSecond: number; burst: number };
  /** A worker threw: said here, then retried. */
  onError?: (key: string, err: Error) => void;
}

export interface WorkQueue<K extends string = string> {
  /** Queues `key` unless it is queued already; on a paced queue, once its turn from the bucket is due. */
  add(key: K): void;
  /** Queues `key` after `ms` (paced then, as `add`); an earlier delayed add of the same key wins. */
  addAfter(key: K, ms: number): void;
  /** Forgets `key`'s failures (its next retry starts from the base delay), any delayed add and any turn it waits for (spent: the pace holds). */
  forget(key: K): void;
  /** How long a 'retry' of `key` now would wait at least: its backoff step. */
  retryDelay(key: K): number;
  /** Failures of `key` since it last succeeded or was forgotten (client-go's NumRequeues). */
  requeues(key: K): number;
  /** Queued and in hand (not the delayed ones). */
  length(): number;
  /** Delayed adds and paced keys waiting for their time. */
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
  /** Keys of a paced queue waiting for their turn from the bucket (taken as they were added). */
  const turns = new Map<K, () => void>();
  const failures = new Map<K, number>();
  /** Keys waiting out a retry backoff: an add does not run them sooner. */
  const backingOff = new Set<K>();
  const bucket = opts.pace && tokenBucket(Math.max(1e-3, opts.pace.perSecond), Math.max(1, opts.pace.burst), clock.now);
  /** The wait for a turn taken now (the bucket's reservation); 0 on a queue that is not paced. */
  const turn = () => (bucket ? bucket.wait() : 0);
  const inFlight = new Set<Promise<void>>();
  let idlers: (() => void)[] = [];
  let running = false;
  let shuttingDown = false;

  /** Hands `key` to the workers (its turn, if paced, already taken). */
  function enqueue(key: K): void {
    if (processing.has(key)) dirty.add(key);
    else {
      queue.add(key);
      pump();
    }
  }

  function add(key: K): void {
    if (shuttingDown || backingOff.has(key)) return;
    if (processing.has(key)) {
      dirty.add(key);
      return;
    }
    if (queue.has(key) || turns.has(key)) return;
    const ms = turn();
    if (ms <= 0) return enqueue(key);
    turns.set(key, clock.after(ms, () => {
      turns.delete(key);
      enqueue(key);
    }));
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

  /**
   * Queues `key` after the longer of its backoff step and its turn (client-go's max of the two
   * limiters); until then no add runs it (another delayed add's time gives way too).
   */
  function retryLater(key: K): void {
    const ms = Math.max(retryDelay(key), turn());
    failures.set(key, (failures.get(key) ?? 0) + 1);
    waiting.get(key)?.cancel();
    waiting.delete(key);
    if (ms <= 0) return enqueue(key);
    backingOff.add(key);
    const cancel = clock.after(ms, () => {
      waiting.delete(key);
      backingOff.delete(key);
      enqueue(key);
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
      turns.get(key)?.();
      turns.delete(key);
    },
    retryDelay,
    requeues: (key) => failures.get(key) ?? 0,
    length: () => queue.size + processing.size,
    delayed: () => waiting.size + turns.size,
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
      for (const cancel of turns.values()) {
        cancel();
        bucket?.giveBack();
      }
      turns.clear();
      backingOff.clear();
      queue.clear();
      dirty.clear();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      running = false;
      for (const w of idlers.splice(0)) w();
    },
  };
}
