import { zoneOf, type NodeNeeds, type NodeSelection, type SlimNode } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { matchesAnyTerm, tolerator } from './nodeMatching.js';

// Which nodes, and so which zones, a pod can use (docs/design.md#the-zones-a-workload-can-use):
// as kube-scheduler's NodeAffinity (node selector, required node affinity) and TaintToleration
// (NoSchedule and NoExecute taints) filters judge a node. Every zone decision reads this.

/** A pod template or pod that asks nothing of a node. */
export const NO_NEEDS: NodeNeeds = Object.freeze({ selection: undefined, tolerations: Object.freeze([]) });

/** Why a node does not fit a pod, or undefined when it does. */
export type NodeMisfit = 'affinity' | 'taint' | undefined;

/** The node's labels match the node selector and one of the required node affinity terms. */
export function selects(selection: NodeSelection | undefined, node: SlimNode): boolean {
  if (!selection) return true;
  const wanted = selection.nodeSelector;
  for (const k in wanted) if (node.labels[k] !== wanted[k]) return false;
  return selection.affinity === undefined || matchesAnyTerm(selection.affinity, node);
}

/** Built once per pod: why each node does not fit it. */
export function misfitOf(needs: NodeNeeds): (node: SlimNode) => NodeMisfit {
  const tolerates = tolerator(needs.tolerations);
  return (node) => (!selects(needs.selection, node) ? 'affinity' : !tolerates(node) ? 'taint' : undefined);
}

/** One text per distinct needs: what node fit is cached by. */
export function needsKey(needs: NodeNeeds): string {
  let key = needs.selection?.key ?? '';
  for (const t of needs.tolerations) key += `\u0001${t.key}\u0000${t.operator}\u0000${t.value}\u0000${t.effect}`;
  return key;
}

const FITS = 0, NO_NODE = 3;
export const NO_AFFINITY = 1, UNTOLERATED = 2;

interface UsableZones {
  /** Zones with at least one node that fits, whatever its state (cordoned, NotReady). */
  set: ReadonlySet<string>;
  /** The same, sorted. */
  sorted: readonly string[];
}

export interface NodeFit {
  /** By slot (`Snapshot.nodesBySlot`): FITS, NO_AFFINITY, UNTOLERATED, or NO_NODE for a free slot. */
  bySlot: Uint8Array;
  /** Every node fits: nothing to check per node. */
  all: boolean;
  zones(topologyKey: string): UsableZones;
}

/**
 * The nodes and zones that fit these needs: computed once per distinct needs (a workload's
 * template, or pods alike) and kept until a node's labels or taints change.
 */
export function nodeFit(needs: NodeNeeds, snapshot: Snapshot): NodeFit {
  return snapshot.nodeDerived(`fit\u0002${needsKey(needs)}`, () => {
    const nodes = snapshot.nodesBySlot();
    const bySlot = new Uint8Array(nodes.length);
    const misfit = misfitOf(needs);
    let all = true;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      const m = node ? misfit(node) : undefined;
      bySlot[i] = !node ? NO_NODE : m === undefined ? FITS : m === 'affinity' ? NO_AFFINITY : UNTOLERATED;
      if (m !== undefined) all = false;
    }
    const byKey = new Map<string, UsableZones>();
    const zones = (topologyKey: string): UsableZones => {
      let usable = byKey.get(topologyKey);
      if (!usable) {
        const set = new Set<string>();
        for (let i = 0; i < nodes.length; i++) {
          const z = bySlot[i] === FITS ? zoneOf(nodes[i]!, topologyKey) : undefined;
          if (z) set.add(z);
        }
        byKey.set(topologyKey, (usable = { set, sorted: [...set].sort() }));
      }
      return usable;
    };
    return { bySlot, all, zones };
  });
}
