import { systemClock } from './clock.js';

/**
 * A token bucket: `perSecond` tokens a second, at most `burst` saved. `take` takes one if there
 * is one; `wait` takes one in advance and says how long (ms) to wait until it is due (a turn, as
 * golang.org/x/time/rate's Reserve); `giveBack` returns one taken and not used.
 */
export function tokenBucket(perSecond: number, burst: number, now: () => number = systemClock.now): {
  take(): boolean; wait(): number; giveBack(): void;
} {
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
    giveBack() {
      refill();
      tokens = Math.min(burst, tokens + 1);
    },
  };
}
