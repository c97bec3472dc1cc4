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
