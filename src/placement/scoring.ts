import { matchesTerm } from './nodeMatching.js';
import { filterNodes } from './filtering.js';
import type { SlimNode } from '../cluster/objects.js';
import type { FilterInput, FilterVerdict } from './verdict.js';

export const MAX_SCORE = 10;

/**
 * Prioritize: 0..10 per node, in the order of `input.candidates.names`. Unmanaged pods score 0
 * everywhere. Managed pods prefer, among the nodes their filter allows, those holding fewest
 * pods of the workload; a WorkloadSpread subset's preferred terms count for half the score
 * when present. Nodes the filter rejects score 0.
 */
export function scoreNodes(input: FilterInput, verdict: FilterVerdict = filterNodes(input)): number[] {
  const { names, nodes } = input.candidates;
  const scores = new Array<number>(names.length).fill(0);
  if (!verdict.managed || !verdict.model) return scores;
  // `passed` keeps the candidates' order and strings: walking both together finds which
  // candidates passed without hashing 5,000 names again.
  const passed = verdict.passed;
  const onNode = new Map<string, number>();
  for (const pod of verdict.model.pods()) {
    if (pod.nodeName && pod.uid !== input.pod.uid) onNode.set(pod.nodeName, (onNode.get(pod.nodeName) ?? 0) + 1);
  }
  // The workload's pods on each allowed candidate (-1: not allowed), one lookup per name.
  const held = new Int32Array(names.length).fill(-1);
  let lo = Infinity, hi = -Infinity;
  for (let i = 0, j = 0; i < names.length && j < passed.length; i++) {
    if (names[i] !== passed[j]) continue;
    j++;
    const n = onNode.size > 0 ? onNode.get(names[i]!) ?? 0 : 0;
    held[i] = n;
    if (n < lo) lo = n;
    if (n > hi) hi = n;
  }
  const spread = (n: number) => (hi === lo ? 1 : (hi - n) / (hi - lo));

  const preferred = verdict.subset?.subset.preferredNodeSelectorTerms ?? [];
  const totalWeight = preferred.reduce((s, p) => s + p.weight, 0);
  const preference = (node: SlimNode | undefined) => {
    if (!node || totalWeight <= 0) return 0;
    let w = 0;
    for (const p of preferred) if (matchesTerm(p.preference, node)) w += p.weight;
    return w / totalWeight;
  };

  for (let i = 0; i < names.length; i++) {
    const n = held[i]!;
    if (n < 0) continue;
    const s = totalWeight > 0 ? (spread(n) + preference(nodes[i])) / 2 : spread(n);
    scores[i] = Math.round(MAX_SCORE * s);
  }
  return scores;
}
