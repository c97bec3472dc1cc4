import { systemClock, type Timers } from '../common/clock.js';
import { workQueue, type WorkQueue, type WorkResult } from '../common/workQueue.js';

// A controller as client-go builds one: a work queue of keys fed by the events that can change
// a key's answer, and a resync that queues every key now and then (what no event reports:
// time passing, a missed change). Runs only between start and stop (the Lease's holder).

export interface ReconcilerSpec {
  /** Every key a resync covers. */
  keys(): Iterable<string>;
  /** Brings one key to what it should be. */
  reconcile(key: string): Promise<WorkResult>;
  /** How often every key is queued. */
  resyncMs: number;
  /** False while the cache is not synced: the resync waits `notReadyMs` and tries again. */
  ready(): boolean;
  notReadyMs?: number;
  workers?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The writes' pace: each key queued (by an event, a resync or a retry) takes its turn from the queue's token bucket (workQueue.ts). */
  pace?: { perSecond: number; burst: number };
  clock?: Timers;
  onError?: (key: string, err: Error) => void;
}

export interface Reconciler extends Pick<WorkQueue, 'add' | 'addAfter' | 'forget' | 'idle' | 'length' | 'retryDelay'> {
  /** Queues every key now (and starts the resync timer over). */
  resync(): void;
  running(): boolean;
  start(): void;
  /** Stops taking keys; resolves once the keys in hand are done. */
  stop(): Promise<void>;
  /** What a controller shows main and its tests: start, stop (then `forget` what it kept), idle. */
  controller(forget?: () => void): { start(): void; stop(): Promise<void>; idle(): Promise<void> };
}

export function reconciler(spec: ReconcilerSpec): Reconciler {
  const clock = spec.clock ?? systemClock;
  const queue = workQueue<string>(spec.reconcile, { workers: spec.workers, retryBaseMs: spec.retryBaseMs, retryMaxMs: spec.retryMaxMs, pace: spec.pace, clock,
    onError: spec.onError });
  let cancel: (() => void) | undefined;
  let started = false;

  function resync(): void {
    cancel?.();
    if (!started) return;
    const ready = spec.ready();
    if (ready) for (const key of spec.keys()) queue.add(key);
    cancel = clock.after(ready ? spec.resyncMs : (spec.notReadyMs ?? 1000), resync);
  }

  const self: Reconciler = {
    add: (key) => { if (started) queue.add(key); },
    addAfter: (key, ms) => { if (started) queue.addAfter(key, ms); },
    forget: queue.forget,
    retryDelay: queue.retryDelay,
    idle: queue.idle,
    length: queue.length,
    resync,
    running: () => started,
    start() {
      started = true;
      queue.start();
      resync();
    },
    async stop() {
      started = false;
      cancel?.();
      cancel = undefined;
      await queue.shutDown();
    },
    controller: (forget) => ({
      start: () => self.start(),
      async stop() {
        await self.stop();
        forget?.();
      },
      idle: () => queue.idle(),
    }),
  };
  return self;
}
