// Time as every layer reads it: an injected clock (tests advance their own), one sleep, one backoff.

export interface Clock { now(): number }

/** A clock that also calls back later: what controllers wait with, so tests can move time themselves. */
export interface Timers extends Clock {
  /** Calls `fn` after `ms` (never holding the process open); returns a cancel. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Timers = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Lets the event loop take one turn (I/O, timers, other requests) before going on: a long computation's pause. */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => { setImmediate(resolve); });
}

/** Sleeps on `clock` (the fake one in tests, which wakes when it is advanced), or less when `signal` aborts. */
export function sleepOn(clock: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.after(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Time that moves only when told to: `advance` runs every callback that falls due, in order. */
export function fakeClock(start = 0): Timers & { advance(ms: number): Promise<void>; pending(): number } {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    after(ms, fn) {
      const id = seq++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return () => { timers.delete(id); };
    },
    pending: () => timers.size,
    /** Moves time forward by `ms`, firing each due callback at its own time and letting the work it starts run. */
    async advance(ms: number) {
      const until = now + ms;
      for (;;) {
        await settle();
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const e of timers) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
      }
      now = until;
      await settle();
    },
  };
}

/** Exponential backoff: doubles from `initialMs` up to `maxMs`; `reset()` after a success. */
export function backoff(initialMs: number, maxMs: number): { next(): number; peek(): number; reset(): void } {
  let current = initialMs;
  return {
    next() {
      const wait = current;
      current = Math.min(current * 2, maxMs);
      return wait;
    },
    peek: () => current,
    reset() {
      current = initialMs;
    },
  };
}

/**
 * Exponential backoff per key (a workload whose writes fail): while `waitLeft(key)` is above 0
 * the key does not try; each failure doubles its wait from `initialMs` up to `maxMs`. At most
 * `max` keys are remembered (the oldest failure goes first).
 */
export function keyedBackoff(initialMs: number, maxMs: number, clock: Clock = systemClock, max = 10_000) {
  const state = new Map<string, { until: number; ms: number }>();
  return {
    /** Milliseconds before `key` may try again; 0 when it may now. */
    waitLeft(key: string): number {
      const s = state.get(key);
      return s ? Math.max(0, s.until - clock.now()) : 0;
    },
    /** Records a failure; returns how long `key` now waits. */
    failed(key: string): number {
      const ms = Math.min(maxMs, state.has(key) ? state.get(key)!.ms * 2 : initialMs);
      state.delete(key);
      state.set(key, { until: clock.now() + ms, ms });
      if (state.size > max) state.delete(state.keys().next().value!);
      return ms;
    },
    succeeded(key: string): void {
      state.delete(key);
    },
  };
}
