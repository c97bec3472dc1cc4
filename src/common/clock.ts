// Time as every layer reads it: an injected clock (tests advance their own), one sleep, one backoff.

export interface Clock { now(): number }

export const systemClock: Clock = { now: () => Date.now() };

/** Waits `ms`, or less when `signal` aborts; the listener goes with the wait, so a flapping loop adds none. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
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
