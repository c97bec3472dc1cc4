import { seededRandom } from './random.js';

/**
 * `names` as kube-scheduler's filter sends them (seeded: the same every time): its workers
 * take chunks of √n consecutive names of its list in turn and append the nodes that pass to
 * one shared list as they go, so the chunks being worked on at once (one per CPU: `streams`)
 * come interleaved name by name. `switchRate`: how often the stream of the next name is drawn
 * anew. At 0.42, 37% of 5,000 names do not follow the name they followed in the order before,
 * as kube-scheduler 1.36 on 2 cores sent them (1,860 of 5,000, counted in the e2e).
 */
export function interleavedChunks(names: readonly string[], seed: number, streams = 2, switchRate = 0.42): string[] {
  const chunk = Math.max(1, Math.floor(Math.sqrt(names.length)));
  const random = seededRandom(seed).next;
  let next = 0;
  const take = () => (next < names.length ? { at: next, end: Math.min(names.length, (next += chunk)) } : undefined);
  const active = Array.from({ length: streams }, take);
  const out: string[] = [];
  let s = 0;
  while (out.length < names.length) {
    if (!active[s] || random() < switchRate) s = Math.floor(random() * streams);
    const c = active[s];
    if (!c) continue;
    out.push(names[c.at++]!);
    if (c.at === c.end) active[s] = take();
  }
  return out;
}
