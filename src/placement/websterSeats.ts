import { fnv1a } from '../common/hash.js';

// Karmada's dispenser (pkg/util/helper/webstermethod.go): seats by the Webster (Sainte-Laguë) method, so that a
// policy naming zonekeeper gets the numbers karmada-scheduler would give it (docs/design.md#across-clusters).

const priority = (votes: number, held: number) => votes / (2 * held + 1);

/** How many of a party's next seats (from `held` on) have a priority above `t`. */
function seatsAbove(votes: number, held: number, t: number): number {
  if (votes <= 0 || priority(votes, held) <= t) return 0;
  if (t <= 0) return Infinity;
  let k = Math.max(held, Math.ceil((votes / t - 1) / 2));
  while (k > held && priority(votes, k - 1) <= t) k--;
  while (priority(votes, k) > t) k++;
  return k - held;
}

/**
 * `seats` more seats over `votes`, starting from `initial`: each goes to the party with the highest
 * votes/(2·seats+1); an exact tie to the one with fewer seats, then by name, ascending unless the
 * FNV-1a hash of `uid` is odd. Every party is returned, by name. Work is bounded by the parties, not
 * by `seats`: the seats every order would give are handed out at once, the few at the margin one by one.
 */
export function websterSeats(
  seats: number, votes: ReadonlyMap<string, number>, uid: string, initial: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const names = [...new Set([...initial.keys(), ...votes.keys()])].sort();
  const held = new Map(names.map((n) => [n, initial.get(n) ?? 0]));
  const v = (n: string) => votes.get(n) ?? 0;
  let left = names.some((n) => v(n) > 0) ? seats : 0;
  if (left > 4 * names.length) {
    // The smallest threshold with at most `left` priorities above it: those seats are in the top `left` whatever the ties.
    let lo = 0, hi = Math.max(...names.map((n) => priority(v(n), held.get(n)!)));
    for (let i = 0; i < 200 && lo < hi; i++) {
      const mid = lo + (hi - lo) / 2;
      if (mid === lo || mid === hi) break;
      const above = names.reduce((s, n) => s + seatsAbove(v(n), held.get(n)!, mid), 0);
      if (above <= left) hi = mid;
      else lo = mid;
    }
    for (const n of names) {
      const k = seatsAbove(v(n), held.get(n)!, hi);
      held.set(n, held.get(n)! + k);
      left -= k;
    }
  }
  const descending = uid !== '' && (fnv1a(uid) & 1) === 1;
  const before = (a: string, b: string) => {
    const pa = priority(v(a), held.get(a)!), pb = priority(v(b), held.get(b)!);
    if (pa !== pb) return pa > pb;
    if (held.get(a) !== held.get(b)) return held.get(a)! < held.get(b)!;
    return descending ? a > b : a < b;
  };
  for (; left > 0; left--) {
    let best = names[0]!;
    for (const n of names) if (before(n, best)) best = n;
    held.set(best, held.get(best)! + 1);
  }
  return held;
}
