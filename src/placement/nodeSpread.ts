import type { NodeSelectorTerm } from '../cluster/objects.js';
import type { FilterState } from './filterState.js';
import { matchesTerm } from './nodeMatching.js';
import type { PlacementInput, Rejection } from './policy.js';

// Spreading within a zone (docs/design.md#spreading-within-a-zone): of the nodes a pod passed,
// those holding the fewest of its workload's pods, then those matching most of its subset's
// preferred terms. The extender's alone: a decision written into the spec names a zone, not a node.

const MORE_OF_WORKLOAD: Rejection = { rule: 'node-spread', reason: "holds more of this workload's pods than other nodes the pod may use", unresolvable: false };
const LESS_PREFERRED: Rejection = { rule: 'node-spread', reason: "matches less of its subset's preferred terms than other nodes the pod may use", unresolvable: false };

/** The passed nodes spread within their zone; the others are added to `rejected`. */
export function spreadWithinZone(s: FilterState, passed: readonly string[], rejected: Map<Rejection, string[]>): readonly string[] {
  const { input, model, outcome } = s;
  if (!input.settings.spreadNodes || input.writesSpec || passed.length <= 1) return passed;
  let spread = fewestOfWorkload(passed, model.podsPerNode(input.pod.uid), rejected);
  const preferred = outcome.subset?.subset.preferredNodeSelectorTerms ?? [];
  if (preferred.length > 0 && spread.length > 1) spread = mostPreferred(spread, preferred, input.snapshot, rejected);
  return spread;
}

/**
 * The passed nodes holding the fewest pods of the workload; the others are added to
 * `rejected`. kube-scheduler sends only nodes its own filters found feasible, so some always
 * remain: spreading within the zone this way spares it scoring.
 */
function fewestOfWorkload(passed: readonly string[], onNode: ReadonlyMap<string, number>, rejected: Map<Rejection, string[]>): readonly string[] {
  if (onNode.size === 0) return passed;
  const held = new Int32Array(passed.length);
  let least = Infinity, most = -Infinity;
  for (let i = 0; i < passed.length; i++) {
    const n = onNode.get(passed[i]!) ?? 0;
    held[i] = n;
    if (n < least) least = n;
    if (n > most) most = n;
  }
  if (least === most) return passed;
  const kept: string[] = [];
  const more: string[] = [];
  for (let i = 0; i < passed.length; i++) (held[i] === least ? kept : more).push(passed[i]!);
  rejected.set(MORE_OF_WORKLOAD, more);
  return kept;
}

/** Of nodes equally spread, those matching the most weight of a WorkloadSpread subset's preferred terms. */
function mostPreferred(
  names: readonly string[], preferred: readonly { weight: number; preference: NodeSelectorTerm }[],
  snapshot: PlacementInput['snapshot'], rejected: Map<Rejection, string[]>,
): readonly string[] {
  const weights = names.map((name) => {
    const node = snapshot.node(name);
    let w = 0;
    if (node) for (const p of preferred) if (matchesTerm(p.preference, node)) w += p.weight;
    return w;
  });
  const best = weights.reduce((a, b) => Math.max(a, b), 0);
  if (weights.every((w) => w === best)) return names;
  rejected.set(LESS_PREFERRED, names.filter((_, i) => weights[i] !== best));
  return names.filter((_, i) => weights[i] === best);
}
