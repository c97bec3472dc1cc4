import { ANNOTATION, ZONE_GATE } from '../cluster/annotations.js';
import type { NodeSelectorTerm, SlimNode, SlimPod, Toleration } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { failedPinKey, type Candidates, type PlacementInput } from '../placement/policy.js';
import { neverGivenUp, subsetKey } from '../placement/policies/workloadSpread/subsets.js';
import type { FilterVerdict } from '../placement/verdict.js';

// A decision written into a pod's spec (docs/design.md#the-zone-gate, #admission): the filter's own
// verdict turned into what the gate's patch or admission writes, where every other component (the
// default scheduler, Cluster Autoscaler, Karpenter, preemption) reads it. Pure: what to write.

/**
 * Adaptive fallback with the gate: a pod not scheduled within `afterMs` of its gate being lifted
 * is deleted (its controller recreates it), and the next pod of the seat or workload skips what
 * it was given: the seat's zone (`pin`, zoneFallback: adaptive) or the subset (`subset`, an
 * Adaptive WorkloadSpread, its last subset excepted). Never for a pod whose volume holds it.
 */
export interface GateFallback { kind: 'pin' | 'subset'; key: string; workload: string; given: string; afterMs: number }

/** What is written into a pod's spec (the gate's patch, admission's), or that it waits. */
export type SpecDecision =
  /** Write the zone as a nodeSelector entry on the workload's topology key. */
  | { kind: 'zone'; topologyKey: string; zone: string; why: string; fallback?: GateFallback; instanceId?: number }
  /** Merge a WorkloadSpread subset's required term into every required term, as Kruise's webhook does. */
  | {
    kind: 'subset'; workloadSpread: string; subset: string; term: NodeSelectorTerm | undefined;
    preferred: readonly { weight: number; preference: NodeSelectorTerm }[]; tolerations: readonly Toleration[]; why: string; fallback?: GateFallback;
    /** The subset's `patch`: admission applies all of it; the gate what a stored pod takes (gatedSubsetPatch.ts). */
    patch?: Readonly<Record<string, unknown>>;
  }
  /** Lift the gate, spec unchanged: no policy covers the pod, or its volumes decide alone. */
  | { kind: 'as-is'; why: string }
  /** Keep the gate: the decision waits (a volume not bound yet, every zone at its limit, a cache behind). */
  | { kind: 'wait'; why: string };

/** The decision to write, from the filter's verdict over the cluster's schedulable nodes. */
export function specDecisionOf(v: FilterVerdict, input: PlacementInput): SpecDecision {
  if (!v.managed) return { kind: 'as-is', why: v.summary };
  const model = v.model;
  if (v.subset) {
    const { ws, subset } = v.subset;
    const fallback: GateFallback | undefined = ws.strategy === 'Adaptive' && model && !v.boundVolume && !neverGivenUp(ws, subset)
      ? { kind: 'subset', key: subsetKey(ws, subset.name), workload: model.key, given: subset.name, afterMs: ws.rescheduleCriticalSeconds * 1000 } : undefined;
    return {
      kind: 'subset', workloadSpread: ws.name, subset: subset.name, term: subset.requiredNodeSelectorTerm,
      preferred: subset.preferredNodeSelectorTerms, tolerations: subset.tolerations, why: v.summary, fallback, patch: ws.patches.get(subset.name),
    };
  }
  const topologyKey = model?.zones().topologyKey;
  if (v.zone !== undefined && topologyKey) {
    const seat = v.policy === 'zone-pin' ? model!.seat(input.pod).index : -1;
    const fallback: GateFallback | undefined = seat >= 0 && input.settings.zoneFallback === 'adaptive' && !v.boundVolume
      ? { kind: 'pin', key: failedPinKey(model!.key, seat), workload: model!.key, given: v.zone, afterMs: input.settings.fallbackAfterSeconds * 1000 } : undefined;
    return { kind: 'zone', topologyKey, zone: v.zone, why: v.summary, fallback };
  }
  // Nodes pass but no single zone decides (a volume spanning zones): the spec's own terms do.
  if (v.passed.length > 0) return { kind: 'as-is', why: v.summary };
  return { kind: 'wait', why: v.summary };
}

/**
 * A claim whose volume may still move: an Immediate-binding claim not bound yet (its PV is
 * chosen without the pod). A zone written into the spec cannot be taken back, so the gate waits.
 */
export function volumeStillMoving(pod: SlimPod, snapshot: Snapshot): string | undefined {
  for (const claim of pod.claims) {
    const pvc = snapshot.pvc(pod.namespace, claim);
    if (!pvc || pvc.volumeName || snapshot.pvForClaim(pod.namespace, claim)) continue;
    const sc = pvc.storageClassName ? snapshot.storageClass(pvc.storageClassName) : undefined;
    if (!sc?.waitForFirstConsumer) return `claim ${claim} is not bound yet (Immediate binding): the zone waits for its volume`;
  }
  return undefined;
}

/** The nodes a gated pod's zone is decided over: every cached node that is Ready and not cordoned, whatever its free room. */
export function schedulableNodes(snapshot: Snapshot): Candidates {
  const all = snapshot.nodesBySlot();
  const names: string[] = [], nodes: SlimNode[] = [], slots: number[] = [];
  for (let slot = 0; slot < all.length; slot++) {
    const n = all[slot];
    if (!n || !n.ready || n.unschedulable) continue;
    names.push(n.name);
    nodes.push(n);
    slots.push(slot);
  }
  return { names, nodes, slots: Int32Array.from(slots) };
}

type Raw = Record<string, any>;

/** A term as the API takes it: empty lists left out. */
function termAsWritten(term: NodeSelectorTerm): Raw {
  return { ...(term.matchExpressions.length ? { matchExpressions: term.matchExpressions } : {}),
    ...(term.matchFields.length ? { matchFields: term.matchFields } : {}) };
}

/** `term`'s requirements added to each of `terms` (they are ORed, so each must narrow), or `term` alone. */
export function mergedTerms(terms: readonly Raw[] | undefined, term: NodeSelectorTerm): Raw[] {
  if (!terms || terms.length === 0) return [termAsWritten(term)];
  return terms.map((t) => ({
    ...t,
    ...(term.matchExpressions.length ? { matchExpressions: [...(t.matchExpressions ?? []), ...term.matchExpressions] } : {}),
    ...(term.matchFields.length ? { matchFields: [...(t.matchFields ?? []), ...term.matchFields] } : {}),
  }));
}

/** Why a decision cannot be written into this pod's spec as it is, or undefined. */
export function unwritable(pod: Raw, d: SpecDecision): string | undefined {
  if (d.kind !== 'zone') return undefined;
  const have = pod.spec?.nodeSelector?.[d.topologyKey];
  return have !== undefined && have !== d.zone ? `its nodeSelector already says ${d.topologyKey}=${have}, not ${d.zone}` : undefined;
}

/**
 * The merge patch that writes a decision into the pod and lifts the gate, conditional on the
 * resourceVersion read (Kubernetes lets a gated pod's nodeSelector gain keys and its required
 * node affinity narrow: KEP-3521, KEP-3838). Other gates stay.
 */
export function gatePatch(pod: Raw, d: Exclude<SpecDecision, { kind: 'wait' }>): Raw {
  const gates = (Array.isArray(pod.spec?.schedulingGates) ? pod.spec.schedulingGates : []).filter((g: Raw) => g?.name !== ZONE_GATE);
  const spec: Raw = { schedulingGates: gates.length > 0 ? gates : null };
  const metadata: Raw = { resourceVersion: pod.metadata?.resourceVersion };
  if (d.kind === 'zone' && unwritable(pod, d) === undefined) spec.nodeSelector = { [d.topologyKey]: d.zone };
  // An instance ID given just now goes in the same write as the zone it pins.
  if (d.kind === 'zone' && d.instanceId !== undefined) metadata.annotations = { [ANNOTATION.instanceId]: String(d.instanceId) };
  if (d.kind === 'subset') {
    const nodeAffinity = pod.spec?.affinity?.nodeAffinity;
    const required = nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    const written: Raw = {};
    if (d.term) written.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: mergedTerms(required, d.term) };
    // The subset's preferred terms after the pod's own, as Kruise's webhook adds them (a gated pod's preferred terms may change freely).
    if (d.preferred.length > 0) {
      const ownPreferred = nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
      const own = Array.isArray(ownPreferred) ? ownPreferred : [];
      const subsets = d.preferred.map((p) => ({ weight: p.weight, preference: termAsWritten(p.preference) }));
      written.preferredDuringSchedulingIgnoredDuringExecution = [...own, ...subsets];
    }
    if (Object.keys(written).length > 0) spec.affinity = { nodeAffinity: written };
    // The subset's tolerations are not written: a stored pod's are its creator's (gatedSubsetPatch.ts names them).
    // As OpenKruise's webhook marks the pod: the subset counts it from now on, bound or not.
    metadata.annotations = { [ANNOTATION.kruiseMatched]: JSON.stringify({ name: d.workloadSpread, subset: d.subset }) };
  }
  return { metadata, spec };
}
