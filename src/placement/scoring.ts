import { matchesTerm } from './nodeMatching.js';
import { filterNodes } from './filtering.js';
import type { SlimNode } from '../cluster/objects.js';
import type { PlacementInput } from './policy.js';
import type { FilterVerdict } from './verdict.js';

const MAX_SCORE = 10;

/**
 * Prioritize: 0..10 per node, in the order of `input.candidates.names`. Unmanaged pods score 0
 * everywhere. Managed pods prefer, among the nodes their filter allows, those holding fewest
 * pods of the workload; a WorkloadSpread subset's preferred terms count for half the score
 * when present. Nodes the filter rejects score 0.
 */
export function scoreNodes(input: PlacementInput, verdict: FilterVerdict = filterNodes(input)): number[] {
  const { names, nodes } = input.candidates;
  return scoreAllowed(allowedOf(names, verdict.passed), verdict, input.pod.uid, (i) => nodes[i]);
}

/**
 * Which candidates a verdict over them passed: candidate i's name as `passed` holds it, or
 * undefined. `passed` keeps the candidates' order and strings: walking both together finds
 * them without hashing 5,000 names again.
 */
function allowedOf(names: readonly string[], passed: readonly string[]): (string | undefined)[] {
  const allowed = new Array<string | undefined>(names.length);
  for (let i = 0, j = 0; i < names.length; i++) {
    if (j < passed.length && names[i] === passed[j]) allowed[i] = passed[j++];
  }
  return allowed;
}

/**
 * Prioritize after its own filter: kube-scheduler sends prioritize the nodes left after every
 * filter, in the order the filter answered them (fewer when a later extender rejected some).
 * When `names` are that, `passed`'s strings for them (hashed already by the filter's lookups);
 * otherwise undefined.
 */
export function passedInOrder(names: readonly string[], passed: readonly string[]): readonly string[] | undefined {
  if (names === passed) return passed;
  const out = new Array<string>(names.length);
  let j = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    while (j < passed.length && passed[j] !== name) j++;
    if (j === passed.length) return undefined;
    out[i] = passed[j++]!;
  }
  return out;
}

/**
 * The scores of candidates given which ones the pod's filter allows (`allowed[i]` undefined:
 * rejected). `nodeAt(i)` is asked only for a WorkloadSpread subset with preferred terms.
 */
export function scoreAllowed(
  allowed: readonly (string | undefined)[], verdict: Pick<FilterVerdict, 'managed' | 'model' | 'subset'>,
  podUid: string, nodeAt: (i: number) => SlimNode | undefined,
): number[] {
  const scores = new Array<number>(allowed.length).fill(0);
  if (!verdict.managed || !verdict.model) return scores;
  const onNode = verdict.model.podsPerNode(podUid);
  // The workload's pods on each allowed candidate (-1: not allowed), one lookup per name.
  const held = new Int32Array(allowed.length).fill(-1);
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < allowed.length; i++) {
    const name = allowed[i];
    if (name === undefined) continue;
    const n = onNode.size > 0 ? onNode.get(name) ?? 0 : 0;
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

  for (let i = 0; i < allowed.length; i++) {
    const n = held[i]!;
    if (n < 0) continue;
    const s = totalWeight > 0 ? (spread(n) + preference(nodeAt(i))) / 2 : spread(n);
    scores[i] = Math.round(MAX_SCORE * s);
  }
  return scores;
}
