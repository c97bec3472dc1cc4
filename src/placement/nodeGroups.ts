import { needsKey } from './nodeFit.js';
import type { FilterState, PodMisfit, ZoneVerdicts } from './filterState.js';
import type { Rejection } from './policy.js';

// A decision written into the spec over a kept candidate set (the gate's, admission's schedulable
// nodes) under a zone-only rule: answered per group of alike nodes, not per node.

/** Candidates alike under a zone-only rule: one zone code, one way (or none) of not fitting the pod. */
interface NodeGroup { code: number; misfit: Rejection | undefined; names: string[] }
/** Groups kept per candidate set: at most this many (pod needs × topology keys), then started over. */
const MAX_GROUPINGS = 256;

/**
 * The passed names and the rejected ones by reason, answered per group; undefined when the
 * decision is not one to answer by group (not written into the spec, not a zone-only rule, or a
 * candidate set without groups), and then each node is judged on its own.
 */
export function groupedFilter(s: FilterState): { passed: string[]; rejected: Map<Rejection, string[]> } | undefined {
  const { input, byZone, outcome } = s;
  if (!input.writesSpec || !byZone || !outcome.admitsZone) return undefined;
  const groups = nodeGroups(s, byZone, s.misfit, outcome.admitsZone.topologyKey);
  if (!groups) return undefined;
  let passed: string[] = [];
  const rejected = new Map<Rejection, string[]>();
  for (const g of groups) {
    const r = g.misfit ?? byZone.of(g.code);
    // The group's own list when it is alone (nothing writes to a verdict's lists), else a copy.
    if (!r) passed = passed.length === 0 ? g.names : passed.concat(g.names);
    else rejected.set(r, rejected.get(r)?.concat(g.names) ?? g.names);
  }
  return { passed, rejected };
}

/**
 * The candidates grouped by zone code and misfit, kept in the candidates' memo; undefined when
 * they have none, or a candidate is not the cache's node (each is then judged on its own).
 */
function nodeGroups(s: FilterState, byZone: ZoneVerdicts, misfit: PodMisfit | undefined, topologyKey: string): readonly NodeGroup[] | undefined {
  const { candidates, pod } = s.input;
  const { memo, slots, nodes, names } = candidates;
  if (!memo || !slots) return undefined;
  const key = `groups\u0002${topologyKey}\u0002${needsKey({ selection: pod.selection, tolerations: pod.tolerations })}`;
  const kept = memo.get(key) as NodeGroup[] | null | undefined;
  if (kept !== undefined) return kept ?? undefined;
  const groups = new Map<string, NodeGroup>();
  let alike = true;
  for (let i = 0; i < names.length && alike; i++) {
    const node = nodes[i];
    const slot = slots[i]!;
    if (!node || slot < 0 || byZone.nodes[slot] !== node) {
      alike = false;
      break;
    }
    const m = misfit?.(i, node);
    const code = byZone.codes[slot]!;
    const id = `${code}\u0002${m?.rule ?? ''}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { code, misfit: m, names: [] }));
    g.names.push(names[i]!);
  }
  if (memo.size >= MAX_GROUPINGS) memo.clear();
  const out = alike ? [...groups.values()] : null;
  memo.set(key, out);
  return out ?? undefined;
}
