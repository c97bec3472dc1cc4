/**
 * A seeded pseudo-random sequence, the same every run: an LCG read from its high bits (its
 * low bits repeat with short periods: the lowest alternates, the lowest three cycle every 8).
 * `next()` is in [0, 1); `below(n)` is an integer 0..n-1.
 */
export function seededRandom(seed: number): { next: () => number; below: (n: number) => number } {
  let a = seed >>> 0;
  const next = () => (a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return { next, below: (n) => Math.floor(next() * n) };
}
