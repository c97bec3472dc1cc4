import { systemClock } from './clock.js';

/**
 * A token bucket: `perSecond` tokens a second, at most `burst` saved. `take` takes one if there
 * is one; `wait` takes one in advance and says how long (ms) to wait until it is due.
 */
export function tokenBucket(perSecond: number, burst: number, now: () => number = systemClock.now): { take(): boolean; wait(): number } {
  let tokens = burst;
  let at = now();
  const refill = () => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - at) / 1000) * perSecond);
    at = t;
  };
  return {
    take() {
      refill();
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
    wait() {
      refill();
      tokens--;
      return tokens >= 0 ? 0 : (-tokens / perSecond) * 1000;
    },
  };
}
